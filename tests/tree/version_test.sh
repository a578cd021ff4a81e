#!/usr/bin/env bash
# The version is stated once, in mem_resource/pmr_mem_resource.h, and every
# other place agrees with it:
# - PMR_VERSION_STRING is "MAJOR.MINOR.PATCH" of the three macros;
# - CHANGELOG.md's newest numbered section is that version, with a date
#   (## X.Y.Z — YYYY-MM-DD);
# - CMakeLists.txt takes project()'s version (and so pmr-c.pc's and the
#   package config's) from the header, not from a number of its own.
# tests/cmake/run.sh checks what an install reports (pkg-config --modversion,
# find_package's version, the compiled PMR_VERSION_STRING).
set -uo pipefail
cd "${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-.}" 2>/dev/null || true
fail=0
say() { echo "version_test: $*" >&2; fail=1; }

h=mem_resource/pmr_mem_resource.h
macro() { sed -nE "s/^#define PMR_VERSION_$1 ([0-9]+)\$/\\1/p" "$h"; }
major=$(macro MAJOR) minor=$(macro MINOR) patch=$(macro PATCH)
string=$(sed -nE 's/^#define PMR_VERSION_STRING "([^"]*)"$/\1/p' "$h")
[ -n "$major" ] && [ -n "$minor" ] && [ -n "$patch" ] ||
  say "$h: PMR_VERSION_MAJOR/MINOR/PATCH not found"
version="$major.$minor.$patch"
[ "$string" = "$version" ] ||
  say "$h: PMR_VERSION_STRING \"$string\" is not MAJOR.MINOR.PATCH ($version)"

newest=$(grep -m1 -E '^## [0-9]+\.[0-9]+\.[0-9]+' CHANGELOG.md)
grep -qE "^## $major\\.$minor\\.$patch — [0-9]{4}-[0-9]{2}-[0-9]{2}\$" <<<"$newest" ||
  say "CHANGELOG.md: the newest release is \"$newest\", the header says $version (want \"## $version — YYYY-MM-DD\")"

grep -q 'VERSION ${pmr_c_MAJOR}.${pmr_c_MINOR}.${pmr_c_PATCH}' CMakeLists.txt ||
  say "CMakeLists.txt: project() does not take its version from $h"
grep -q 'Version: @PROJECT_VERSION@' cmake/pmr-c.pc.in ||
  say "cmake/pmr-c.pc.in: Version is not project()'s"

[ "$fail" -eq 0 ] && echo "version_test: $version everywhere"
exit "$fail"
