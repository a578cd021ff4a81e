#!/usr/bin/env bash
# Runs the fuzz targets under libFuzzer (clang 14, ASan + UBSan), starting from
# the checked-in corpora that `bazel test //tests/fuzz:all` replays.
#   tools/fuzz.sh [--merge | --minimize] TARGET [SECONDS]
#     TARGET: monotonic | unsynchronized_pool | synchronized_pool | thread_cache |
#             vector | string | hashmap | all
# By default the checked-in corpus is only read: new inputs stay in a
# temporary folder, whose name is printed. Asked to, it changes the corpus:
#   --merge     adds the new inputs that add coverage to tests/fuzz/corpus/TARGET
#               (existing files are kept as they are);
#   --minimize  rewrites tests/fuzz/corpus/TARGET as a minimised set (may delete
#               and rename checked-in files).
# A crash leaves crash-* in the current folder and stops with a non-zero exit.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=read
case ${1:-} in
  --merge) mode=merge; shift ;;
  --minimize) mode=minimize; shift ;;
  -*) echo "unknown option $1" >&2; exit 2 ;;
esac
target=${1:?usage: tools/fuzz.sh [--merge | --minimize] TARGET [SECONDS]}
seconds=${2:-600}
command -v clang >/dev/null && command -v clang++ >/dev/null ||
  { echo "clang is needed: apt-get install clang libclang-rt-14-dev" >&2; exit 1; }

declare -A kind=([monotonic]=0 [unsynchronized_pool]=1 [synchronized_pool]=2 [thread_cache]=3)
all=(monotonic unsynchronized_pool synchronized_pool thread_cache)
for c in vector string hashmap; do [ -f "tests/fuzz/${c}_fuzz.cc" ] && all+=("$c"); done
if [ "$target" = all ]; then
  flag=()
  [ "$mode" = read ] || flag=("--$mode")
  for t in "${all[@]}"; do "$0" "${flag[@]}" "$t" "$seconds"; done
  exit 0
fi

out=$(mktemp -d)
san=(-fsanitize=address,undefined -fno-sanitize-recover=all -g -O1)
objs=()
# The plain build of README "Use it from your build".
for f in mem_resource/*.c resources/*.c resources/internal/*.c containers/*.c \
  containers/internal/*.c; do
  [ -f "$f" ] || continue
  o="$out/$(basename "${f%.c}").o"
  clang -std=c11 -D_POSIX_C_SOURCE=200809L -I. "${san[@]}" -fsanitize=fuzzer-no-link -c "$f" -o "$o"
  objs+=("$o")
done
if [ -n "${kind[$target]+x}" ]; then
  src=tests/fuzz/resource_fuzz.cc
  defs=(-DPMR_FUZZ_RESOURCE="${kind[$target]}")
else
  src=tests/fuzz/${target}_fuzz.cc
  defs=()
fi
clang++ -std=c++17 -I. "${san[@]}" -fsanitize=fuzzer "${defs[@]}" "$src" \
  tests/testkit/counting_resource.cc "${objs[@]}" -o "$out/fuzz" -lpthread

corpus=tests/fuzz/corpus/$target
mkdir -p "$corpus" "$out/new"
echo "fuzz: $target for ${seconds}s (corpus $corpus: $(ls "$corpus" | wc -l) files)"
"$out/fuzz" -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 \
  "$out/new" "$corpus" 2>&1 | tee "$out/log" | grep -E "^#[0-9]+ +(pulse|DONE)|stat::|ERROR|SUMMARY" || true
grep -q "ERROR:\|SUMMARY:" "$out/log" && { echo "fuzz: $target crashed (see crash-*)"; exit 1; }
new=$(ls "$out/new" | wc -l)
grep -E "stat::number_of_executed_units|cov:" "$out/log" | tail -2
case $mode in
  read)
    rm -f "$out"/*.o
    echo "fuzz: $target: $new new inputs kept in $out/new; $corpus unchanged" \
      "(with --merge they are added to it)"
    ;;
  merge)
    # Only adds files (named by their hash), never rewrites or deletes one.
    "$out/fuzz" -merge=1 "$corpus" "$out/new" >/dev/null 2>&1
    echo "fuzz: $target: corpus now $(ls "$corpus" | wc -l) files"
    rm -rf "$out"
    ;;
  minimize)
    mkdir -p "$out/merged"
    "$out/fuzz" -merge=1 "$out/merged" "$corpus" "$out/new" >/dev/null 2>&1
    rm -f "$corpus"/*
    cp "$out/merged"/* "$corpus"/
    echo "fuzz: $target: corpus rewritten, now $(ls "$corpus" | wc -l) files"
    rm -rf "$out"
    ;;
esac
