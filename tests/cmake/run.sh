#!/usr/bin/env bash
# The CMake build and the other ways the README says to use pmr-c without
# Bazel, each building and running tests/consumer/hello.c --check:
#   1. cmake configure (warnings as errors), build, install into a temporary
#      prefix;
#   2. a CMake project with find_package(pmr_c VERSION EXACT) against that
#      prefix, including "pmr.h" and <pmr-c/pmr.h>, and the C++ bridge
#      (tests/consumer/hello_cxx.cc) as "cxx/pmr_cxx.hpp" and
#      <pmr-c/cxx/pmr_cxx.hpp>;
#   3. pkg-config --cflags --libs pmr-c against that prefix, both spellings,
#      the C++ bridge, and --modversion;
#   4. the installed headers with flags of one's own: -I<prefix>/include/pmr-c
#      (#include "pmr.h") or -I<prefix>/include (#include <pmr-c/pmr.h>)
#      for "pmr.h";
#   5. PMR_C_DEBUG=ON: the installed library reports hello's double free;
#   6. add_subdirectory (as FetchContent does): with no build type pmr-c is
#      still optimised and the parent's own target is not; a parent's Debug is
#      pmr-c's too;
#   7. plain compiler flags over the source tree (-std=c11
#      -D_POSIX_C_SOURCE=200809L -I<root>), as a Makefile would;
#   8. the installed drop-in malloc: tests/consumer/dropin_hello.c linked with
#      -lpmr_malloc (shared), with libpmr_malloc.a, and a program that does
#      not know it (hello) run with LD_PRELOAD=<prefix>/lib/libpmr_malloc.so,
#      and with libpmr_malloc_secure.so.
# Every installed version (the package config's, pmr-c.pc's, the compiled
# PMR_VERSION_STRING) must be the header's PMR_VERSION_MAJOR.MINOR.PATCH.
# Prints "cmake: ok" or the first failure; exits non-zero on failure.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CC=${CC:-cc}
fail() { echo "cmake: FAIL: $*"; [ -f "$tmp/log" ] && tail -30 "$tmp/log"; exit 1; }
jobs=$(nproc 2>/dev/null || echo 2)
version=$(sed -nE 's/^#define PMR_VERSION_(MAJOR|MINOR|PATCH) ([0-9]+)$/\2/p' \
  "$root/mem_resource/pmr_mem_resource.h" | paste -sd.)
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "no version in pmr_mem_resource.h: $version"

cmake -S "$root" -B "$tmp/build" -DPMR_C_WERROR=ON \
  -DCMAKE_INSTALL_PREFIX="$tmp/prefix" >"$tmp/log" 2>&1 || fail "configure"
cmake --build "$tmp/build" -j "$jobs" >"$tmp/log" 2>&1 || fail "build"
cmake --install "$tmp/build" >"$tmp/log" 2>&1 || fail "install"
[ -f "$tmp/prefix/include/pmr-c/pmr.h" ] || fail "pmr.h not installed"
# Internals stay out, except the two that pmr_hashmap.h's inline lookups use.
if find "$tmp/prefix/include" -path '*internal*' -type f |
  grep -vE '/pmr-c/containers/internal/(hash|hashmap_table)\.h$' | grep -q .; then
  fail "internal headers installed"
fi
echo "cmake: installed $(find "$tmp/prefix" -type f | wc -l) files into a temporary prefix"

# hello prints "pmr-c <PMR_VERSION_STRING>: ...".
check_version() { # what, hello's output
  grep -q "^pmr-c $version: " <<<"$2" || fail "$1: not version $version: $2"
}

cmake -S "$root/tests/cmake/consumer" -B "$tmp/consumer" \
  -DCMAKE_PREFIX_PATH="$tmp/prefix" -DPMR_C_EXPECTED_VERSION="$version" \
  >"$tmp/log" 2>&1 || fail "consumer configure (find_package(pmr_c $version EXACT))"
grep -q "pmr_c_VERSION=$version\$" "$tmp/log" || fail "find_package: pmr_c_VERSION is not $version"
cmake --build "$tmp/consumer" >"$tmp/log" 2>&1 || fail "consumer build"
out=$("$tmp/consumer/hello" --check) || fail "find_package consumer run"
check_version "find_package" "$out"
echo "cmake: find_package(pmr_c $version EXACT), #include \"pmr.h\": $out"
out=$("$tmp/consumer/hello_prefixed" --check) || fail "find_package consumer run (<pmr-c/pmr.h>)"
echo "cmake: find_package(pmr_c), #include <pmr-c/pmr.h>: $out"

[ -f "$tmp/prefix/include/pmr-c/cxx/pmr_cxx.hpp" ] || fail "cxx/pmr_cxx.hpp not installed"
cxx_expect="sum 500500, string length 53, C vector 100, round trip yes"
out=$("$tmp/consumer/hello_cxx" --check) || fail "find_package C++ consumer run"
grep -q "^pmr-c $version from C++: $cxx_expect" <<<"$out" || fail "hello_cxx: $out"
echo "cmake: find_package(pmr_c), C++, #include \"cxx/pmr_cxx.hpp\": $out"
out=$("$tmp/consumer/hello_cxx_prefixed" --check) ||
  fail "find_package C++ consumer run (<pmr-c/cxx/pmr_cxx.hpp>)"
echo "cmake: find_package(pmr_c), C++, #include <pmr-c/cxx/pmr_cxx.hpp>: $out"

pc=$(dirname "$(find "$tmp/prefix" -name pmr-c.pc | head -1)")
[ -n "$pc" ] || fail "pmr-c.pc not installed"
pc_version=$(PKG_CONFIG_PATH="$pc" pkg-config --modversion pmr-c) || fail "pkg-config --modversion"
[ "$pc_version" = "$version" ] || fail "pmr-c.pc says version $pc_version, the header $version"
flags=$(PKG_CONFIG_PATH="$pc" pkg-config --cflags --libs pmr-c) || fail "pkg-config"
"$CC" -std=c11 "$root/tests/consumer/hello.c" $flags -o "$tmp/hello_pc" \
  >"$tmp/log" 2>&1 || fail "pkg-config consumer build ($flags)"
out=$("$tmp/hello_pc" --check) || fail "pkg-config consumer run"
check_version "pkg-config" "$out"
echo "cmake: pkg-config ($flags), #include \"pmr.h\": $out"
"$CC" -std=c11 '-DPMR_C_HEADER=<pmr-c/pmr.h>' "$root/tests/consumer/hello.c" $flags \
  -o "$tmp/hello_pc_prefixed" >"$tmp/log" 2>&1 ||
  fail "pkg-config consumer build, #include <pmr-c/pmr.h> ($flags)"
out=$("$tmp/hello_pc_prefixed" --check) || fail "pkg-config consumer run (<pmr-c/pmr.h>)"
echo "cmake: pkg-config, #include <pmr-c/pmr.h>: $out"

CXX=${CXX:-c++}
"$CXX" -std=c++17 -Wall -Wextra -Werror '-DPMR_C_CXX_HEADER=<pmr-c/cxx/pmr_cxx.hpp>' \
  "$root/tests/consumer/hello_cxx.cc" $flags -o "$tmp/hello_cxx_pc" >"$tmp/log" 2>&1 ||
  fail "pkg-config C++ consumer build, #include <pmr-c/cxx/pmr_cxx.hpp> ($flags)"
out=$("$tmp/hello_cxx_pc" --check) || fail "pkg-config C++ consumer run"
echo "cmake: pkg-config, C++, #include <pmr-c/cxx/pmr_cxx.hpp>: $out"

# The README's flags for an installed pmr-c without pkg-config or CMake.
"$CC" -std=c11 -I"$tmp/prefix/include/pmr-c" "$root/tests/consumer/hello.c" \
  -L"$(dirname "$(find "$tmp/prefix" -name 'libpmr_c.*' | head -1)")" -lpmr_c -pthread \
  -o "$tmp/hello_flags" >"$tmp/log" 2>&1 || fail "build with -I<prefix>/include/pmr-c"
out=$("$tmp/hello_flags" --check) || fail "run with -I<prefix>/include/pmr-c"
echo "cmake: -I<prefix>/include/pmr-c -lpmr_c, #include \"pmr.h\": $out"

# ... and with -I<prefix>/include only: #include <pmr-c/pmr.h> (the public
# headers include each other by relative paths).
"$CC" -std=c11 '-DPMR_C_HEADER=<pmr-c/pmr.h>' -I"$tmp/prefix/include" \
  "$root/tests/consumer/hello.c" \
  -L"$(dirname "$(find "$tmp/prefix" -name 'libpmr_c.*' | head -1)")" -lpmr_c -pthread \
  -o "$tmp/hello_bare" >"$tmp/log" 2>&1 || fail "build with -I<prefix>/include, #include <pmr-c/pmr.h>"
out=$("$tmp/hello_bare" --check) || fail "run with -I<prefix>/include"
echo "cmake: -I<prefix>/include -lpmr_c, #include <pmr-c/pmr.h>: $out"

cmake -S "$root" -B "$tmp/build_debug" -DPMR_C_DEBUG=ON -DPMR_C_WERROR=ON \
  -DCMAKE_INSTALL_PREFIX="$tmp/prefix_debug" >"$tmp/log" 2>&1 || fail "configure (debug)"
cmake --build "$tmp/build_debug" -j "$jobs" >"$tmp/log" 2>&1 || fail "build (debug)"
cmake --install "$tmp/build_debug" >"$tmp/log" 2>&1 || fail "install (debug)"
pc=$(dirname "$(find "$tmp/prefix_debug" -name pmr-c.pc | head -1)")
flags=$(PKG_CONFIG_PATH="$pc" pkg-config --cflags --libs pmr-c) || fail "pkg-config (debug)"
"$CC" -std=c11 "$root/tests/consumer/hello.c" $flags -o "$tmp/hello_debug" \
  >"$tmp/log" 2>&1 || fail "debug consumer build"
out=$("$tmp/hello_debug" --check 2>/dev/null) || fail "debug consumer run"
grep -q "misuse reports 1" <<<"$out" || fail "PMR_C_DEBUG=ON did not report the double free: $out"
echo "cmake: PMR_C_DEBUG=ON: $out"

# add_subdirectory, no build type: pmr-c at -O (Release), hello as the parent
# left it (no -O); then the parent's Debug holds for pmr-c too.
# compile_commands.json has one "command" line per source.
cmake -S "$root/tests/cmake/subdir" -B "$tmp/subdir" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
  >"$tmp/log" 2>&1 || fail "add_subdirectory configure"
cmds="$tmp/subdir/compile_commands.json"
grep '"command"' "$cmds" | grep '/mem_resource/' | grep -qE ' -O[1-3s]? ' ||
  fail "add_subdirectory with no build type: pmr-c is not optimised: $(grep -m1 mem_resource/ "$cmds")"
grep '"command"' "$cmds" | grep 'hello\.c' | grep -qE ' -O[0-9s]? ' &&
  fail "add_subdirectory: the parent's own target got pmr-c's build type"
cmake --build "$tmp/subdir" -j "$jobs" >"$tmp/log" 2>&1 || fail "add_subdirectory build"
out=$("$tmp/subdir/hello" --check) || fail "add_subdirectory run"
echo "cmake: add_subdirectory, no build type (pmr-c optimised): $out"
cmake -S "$root/tests/cmake/subdir" -B "$tmp/subdir_debug" -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >"$tmp/log" 2>&1 || fail "add_subdirectory configure (Debug)"
cmds="$tmp/subdir_debug/compile_commands.json"
grep '"command"' "$cmds" | grep '/mem_resource/' | grep -qE ' -O[1-3s]? ' &&
  fail "add_subdirectory with CMAKE_BUILD_TYPE=Debug: pmr-c overrode the parent's build type"
grep '"command"' "$cmds" | grep '/mem_resource/' | grep -q ' -g ' ||
  fail "add_subdirectory with CMAKE_BUILD_TYPE=Debug: pmr-c is not built as Debug"
echo "cmake: add_subdirectory, CMAKE_BUILD_TYPE=Debug: pmr-c follows the parent"

srcs=$(cd "$root" && ls mem_resource/*.c resources/*.c resources/internal/*.c containers/*.c)
(cd "$root" && "$CC" -std=c11 -D_POSIX_C_SOURCE=200809L -I. -O2 $srcs \
  tests/consumer/hello.c -o "$tmp/hello_plain" -pthread) >"$tmp/log" 2>&1 ||
  fail "plain flags build"
out=$("$tmp/hello_plain" --check) || fail "plain flags run"
echo "cmake: plain flags: $out"

libdir=$(dirname "$(find "$tmp/prefix" -name 'libpmr_malloc.so' | head -1)")
[ -f "$libdir/libpmr_malloc.so" ] && [ -f "$libdir/libpmr_malloc.a" ] ||
  fail "libpmr_malloc.so / libpmr_malloc.a not installed"
[ -f "$tmp/prefix/include/pmr-c/malloc/pmr_dropin.h" ] || fail "pmr_dropin.h not installed"
"$CC" -std=c11 -I"$tmp/prefix/include/pmr-c" "$root/tests/consumer/dropin_hello.c" \
  -L"$libdir" -lpmr_malloc -pthread -o "$tmp/dropin_shared" >"$tmp/log" 2>&1 ||
  fail "build with -lpmr_malloc"
out=$(LD_LIBRARY_PATH="$libdir" "$tmp/dropin_shared") || fail "run with -lpmr_malloc: $out"
echo "cmake: -lpmr_malloc (shared): $out"
"$CC" -std=c11 -I"$tmp/prefix/include/pmr-c" "$root/tests/consumer/dropin_hello.c" \
  -L"$libdir" -Wl,-Bstatic -lpmr_malloc -Wl,-Bdynamic -pthread -o "$tmp/dropin_static" \
  >"$tmp/log" 2>&1 || fail "build with libpmr_malloc.a"
out=$(PMR_MALLOC=pool "$tmp/dropin_static") || fail "run with libpmr_malloc.a: $out"
grep -q "engine pool" <<<"$out" || fail "PMR_MALLOC=pool not taken: $out"
echo "cmake: libpmr_malloc.a, PMR_MALLOC=pool: $out"
out=$(LD_PRELOAD="$libdir/libpmr_malloc.so" PMR_MALLOC_STATS=1 "$tmp/consumer/hello" --check 2>"$tmp/err") ||
  fail "hello under LD_PRELOAD: $out $(cat "$tmp/err")"
grep -q "^pmr_malloc: engine thread_cache" "$tmp/err" || fail "no statistics at exit: $(cat "$tmp/err")"
echo "cmake: LD_PRELOAD=libpmr_malloc.so hello --check: $out"
out=$(LD_PRELOAD="$libdir/libpmr_malloc_secure.so" PMR_MALLOC_STATS=1 "$tmp/consumer/hello" --check 2>"$tmp/err") ||
  fail "hello under LD_PRELOAD of the secure library: $out $(cat "$tmp/err")"
grep -q "^pmr_malloc: engine thread_cache, secure mode" "$tmp/err" ||
  fail "the secure library does not say so: $(cat "$tmp/err")"
echo "cmake: LD_PRELOAD=libpmr_malloc_secure.so hello --check: $out"
echo "cmake: ok"
