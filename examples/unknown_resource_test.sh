#!/usr/bin/env bash
# Both example programs, given a resource name they do not know, exit 2 and
# name every resource they accept.
set -uo pipefail
fail=0
expected="unknown resource bogus; one of: malloc, monotonic, unsynchronized_pool, synchronized_pool, thread_cache, statistics, debug"
for prog in "$@"; do
  err=$("$prog" examples/lua/alloc_heavy.lua bogus 2>&1 >/dev/null)
  rc=$?
  [ "$rc" -eq 2 ] || { echo "$prog bogus: exit $rc, want 2" >&2; fail=1; }
  [ "$err" = "$expected" ] ||
    { echo "$prog bogus said: $err" >&2; echo "want: $expected" >&2; fail=1; }
done
exit "$fail"
