#!/usr/bin/env bash
# The CMake build and the three other ways the README says to use pmr-c
# without Bazel, each building and running tests/consumer/hello.c --check:
#   1. cmake configure (warnings as errors), build, install into a temporary
#      prefix;
#   2. a CMake project with find_package(pmr_c) against that prefix;
#   3. pkg-config --cflags --libs pmr-c against that prefix;
#   4. PMR_C_DEBUG=ON: the installed library reports hello's double free;
#   5. plain compiler flags over the source tree (-std=c11
#      -D_POSIX_C_SOURCE=200809L -I<root>), as a Makefile would.
# Prints "cmake: ok" or the first failure; exits non-zero on failure.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CC=${CC:-cc}
fail() { echo "cmake: FAIL: $*"; [ -f "$tmp/log" ] && tail -30 "$tmp/log"; exit 1; }
jobs=$(nproc 2>/dev/null || echo 2)

cmake -S "$root" -B "$tmp/build" -DPMR_C_WERROR=ON \
  -DCMAKE_INSTALL_PREFIX="$tmp/prefix" >"$tmp/log" 2>&1 || fail "configure"
cmake --build "$tmp/build" -j "$jobs" >"$tmp/log" 2>&1 || fail "build"
cmake --install "$tmp/build" >"$tmp/log" 2>&1 || fail "install"
[ -f "$tmp/prefix/include/pmr-c/pmr.h" ] || fail "pmr.h not installed"
# Internals stay out, except the hash that pmr_hashmap.h's inline lookups use.
if find "$tmp/prefix/include" -path '*internal*' -type f |
  grep -v '/pmr-c/containers/internal/hash\.h$' | grep -q .; then
  fail "internal headers installed"
fi
echo "cmake: installed $(find "$tmp/prefix" -type f | wc -l) files into a temporary prefix"

cmake -S "$root/tests/cmake/consumer" -B "$tmp/consumer" \
  -DCMAKE_PREFIX_PATH="$tmp/prefix" >"$tmp/log" 2>&1 || fail "consumer configure (find_package)"
cmake --build "$tmp/consumer" >"$tmp/log" 2>&1 || fail "consumer build"
out=$("$tmp/consumer/hello" --check) || fail "find_package consumer run"
echo "cmake: find_package(pmr_c): $out"

pc=$(dirname "$(find "$tmp/prefix" -name pmr-c.pc | head -1)")
[ -n "$pc" ] || fail "pmr-c.pc not installed"
flags=$(PKG_CONFIG_PATH="$pc" pkg-config --cflags --libs pmr-c) || fail "pkg-config"
"$CC" -std=c11 "$root/tests/consumer/hello.c" $flags -o "$tmp/hello_pc" \
  >"$tmp/log" 2>&1 || fail "pkg-config consumer build ($flags)"
out=$("$tmp/hello_pc" --check) || fail "pkg-config consumer run"
echo "cmake: pkg-config ($flags): $out"

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

srcs=$(cd "$root" && ls mem_resource/*.c resources/*.c resources/internal/*.c containers/*.c)
(cd "$root" && "$CC" -std=c11 -D_POSIX_C_SOURCE=200809L -I. -O2 $srcs \
  tests/consumer/hello.c -o "$tmp/hello_plain" -pthread) >"$tmp/log" 2>&1 ||
  fail "plain flags build"
out=$("$tmp/hello_plain" --check) || fail "plain flags run"
echo "cmake: plain flags: $out"
echo "cmake: ok"
