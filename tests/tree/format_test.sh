#!/usr/bin/env bash
# Every C and C++ file of the project is formatted as .clang-format says
# (fix with tools/format.sh). Skipped, and says so, without clang-format.
set -uo pipefail
cd "${TEST_SRCDIR}/${TEST_WORKSPACE}"
command -v clang-format >/dev/null || { echo "format_test: clang-format not installed (tools/setup.sh installs it)"; exit 1; }
bad=0
n=0
for f in $(find . -path ./external -prune -o \( -name '*.c' -o -name '*.h' -o -name '*.cc' -o -name '*.hpp' \) -print); do
  n=$((n + 1))
  clang-format --style=file "$f" | cmp -s - "$f" || { echo "format_test: $f is not formatted (run tools/format.sh)"; bad=1; }
done
[ "$n" -gt 50 ] || { echo "format_test: only $n files found"; exit 1; }
[ $bad -eq 0 ] && echo "format_test: ok ($n files)"
exit $bad
