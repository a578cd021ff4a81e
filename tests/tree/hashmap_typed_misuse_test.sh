#!/usr/bin/env bash
# Typed maps (PMR_HASHMAP_TYPED, containers/pmr_hashmap.h): a value pointer of
# the wrong size does not compile (as C11 with -Werror, and as C++17 without),
# where the void * API would silently read or write past it. The same code
# with the right types compiles.
set -uo pipefail
cd "${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-.}" 2>/dev/null || true
CC=${CC:-cc}
CXX=${CXX:-c++}
command -v "$CC" >/dev/null || CC=gcc
command -v "$CXX" >/dev/null || CXX=g++
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

snippet() { # $1: the body of f
  cat <<SRC
#include <stdint.h>
#include "containers/pmr_hashmap.h"
PMR_HASHMAP_TYPED(id_map, uint64_t, uint64_t)
int f(id_map *m);
int f(id_map *m) {
$1
}
SRC
}
compiles() { # $1: file; C and C++
  "$CC" -std=c11 -Wall -Wextra -Werror -I. -fsyntax-only -x c "$1" 2>"$tmp/err.c" &&
    "$CXX" -std=c++17 -I. -fsyntax-only -x c++ "$1" 2>"$tmp/err.cc"
}
neither_compiles() {
  ! "$CC" -std=c11 -Wall -Wextra -Werror -I. -fsyntax-only -x c "$1" 2>/dev/null &&
    ! "$CXX" -std=c++17 -I. -fsyntax-only -x c++ "$1" 2>/dev/null
}

snippet '  uint64_t out = 0;
  uint64_t *v = id_map_find(m, 1);
  return id_map_insert(m, 1, 2) + id_map_erase(m, 1, &out) + (v != 0);' >"$tmp/ok.txt"
compiles "$tmp/ok.txt" || { echo "typed map: the right types do not compile" >&2; cat "$tmp"/err.* >&2; fail=1; }

snippet '  uint32_t out = 0;
  return id_map_erase(m, 1, &out);' >"$tmp/bad_out.txt"
neither_compiles "$tmp/bad_out.txt" || { echo "typed map: a uint32_t * value_out compiles" >&2; fail=1; }

snippet '  uint32_t *v = id_map_find(m, 1);
  return v != 0;' >"$tmp/bad_find.txt"
neither_compiles "$tmp/bad_find.txt" || { echo "typed map: find into a uint32_t * compiles" >&2; fail=1; }

snippet '  int x = 0;
  return id_map_insert(m, &x, 2);' >"$tmp/bad_key.txt"
neither_compiles "$tmp/bad_key.txt" || { echo "typed map: a pointer as a uint64_t key compiles" >&2; fail=1; }

[ $fail -eq 0 ] && echo "hashmap_typed_misuse_test: ok"
exit $fail
