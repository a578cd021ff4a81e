#!/usr/bin/env bash
# Valgrind's memcheck sees misuse of pool and arena memory (PMR_VALGRIND
# build): each bug scenario must be reported, the clean run must not be.
set -u
bin=${1:-$(dirname "$0")/valgrind_check}  # the binary, from the BUILD args
if ! command -v valgrind >/dev/null; then
  echo "valgrind is not installed (tools/setup.sh installs it)"
  exit 1
fi
fail=0
run() { # scenario expected-exit
  out=$(valgrind --error-exitcode=42 --leak-check=no "$bin" "$1" 2>&1)
  rc=$?
  if [ "$rc" -ne "$2" ]; then
    echo "FAIL: $1 exited $rc, expected $2"; echo "$out" | tail -20; fail=1
  elif [ "$2" -eq 42 ] && ! grep -q "Invalid write" <<<"$out"; then
    echo "FAIL: $1: no 'Invalid write' report"; echo "$out" | tail -20; fail=1
  else
    echo "ok: $1 (exit $rc)"
  fi
}
run clean 0
for s in pool sync_pool thread_cache monotonic_rewind monotonic_unused; do run "$s" 42; done
exit $fail
