#!/usr/bin/env bash
# Formats every C and C++ file of the project with clang-format (.clang-format).
#   tools/format.sh          rewrite files in place
#   tools/format.sh --check  list unformatted files and fail, change nothing
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
files=$(git ls-files '*.c' '*.h' '*.cc' '*.hpp' | grep -v '/corpus/')
if [ "$mode" = "--check" ]; then
  bad=0
  for f in $files; do
    if ! clang-format --style=file "$f" | cmp -s - "$f"; then
      echo "format: $f is not formatted (run tools/format.sh)"
      bad=1
    fi
  done
  exit $bad
fi
clang-format --style=file -i $files
