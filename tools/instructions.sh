#!/usr/bin/env bash
# Instructions per operation (64-byte blocks, alignment 8), exact and
# repeatable: each scenario of //benchmarks:instructions runs under
# valgrind --tool=callgrind at N1 and N2 operations; the difference of the
# totals divided by N2 - N1 is the cost of one operation and its loop.
# Shapes: *_pair allocates and frees one block at a time (steady state);
# *_bulk allocates 100,000 blocks, then frees them all (benchmark A), and
# counts per block; *_churn keeps 10,000 blocks of 16..256 bytes live and
# frees a random one and allocates a random size per step (benchmark E),
# counting per step; *_mixed allocates 100,000 blocks of 64/128/256/512
# bytes drawn 4:3:2:1, then frees them all in a shuffled order (benchmark
# C), and counts per block. mi_* call mimalloc's own functions;
# PEER:malloc_* run with PEER as the drop-in malloc (LD_PRELOAD, through the
# PLT); pmr_dropin is pmr-c's own (malloc/).
#   tools/instructions.sh [SCENARIO...]
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind is not installed (tools/setup.sh installs it)" >&2; exit 1; }
bazel build -c opt //benchmarks:instructions >/dev/null 2>&1 || bazel build -c opt //benchmarks:instructions
bin=bazel-bin/benchmarks/instructions
N1=200000
N2=1200000
scenarios=("$@")
# Default: every scenario, in the binary's order (its table, kScenarios).
[ ${#scenarios[@]} -eq 0 ] && mapfile -t scenarios < <("$bin" --list)
lib=/usr/lib/x86_64-linux-gnu
# pmr_dropin: pmr-c's own drop-in malloc (malloc/), built here at -c opt.
bazel build -c opt //malloc:libpmr_malloc.so >/dev/null 2>&1 || bazel build -c opt //malloc:libpmr_malloc.so
dropin=$PWD/bazel-bin/malloc/libpmr_malloc.so
declare -A preload=([mimalloc]=$lib/libmimalloc.so.2 [jemalloc]=$lib/libjemalloc.so.2
                    [tcmalloc]=$lib/libtcmalloc_minimal.so.4 [pmr_dropin]=$dropin)
# SCENARIO or PEER:SCENARIO (the scenario run with PEER's malloc preloaded).
count() {
  local peer= s=$1
  if [[ $s == *:* ]]; then peer=${s%%:*}; s=${s#*:}; fi
  local env=()
  if [ -n "$peer" ]; then
    [ -e "${preload[$peer]}" ] || { echo "not-installed"; return; }
    env=(env LD_PRELOAD="${preload[$peer]}")
  fi
  "${env[@]}" valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$s" "$2" 2>&1 |
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
printf '%-34s %14s\n' "scenario (64 B, align 8)" "instructions/op"
for s in "${scenarios[@]}"; do
  a=$(count "$s" $N1)
  b=$(count "$s" $N2)
  if [ "$a" = not-installed ]; then printf '%-34s %14s\n' "$s" "not installed"; continue; fi
  awk -v s="$s" -v a="$a" -v b="$b" -v n=$((N2 - N1)) 'BEGIN { printf "%-34s %14.1f\n", s, (b - a) / n }'
done
