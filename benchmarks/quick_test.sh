#!/usr/bin/env bash
# //tests:benchmarks_quick_test: `//benchmarks:all --quick` runs end to end
# (sizes reduced further), and its JSON holds a record for every workload x
# allocator pair and every metric of the workload, with a known status; the
# container workloads V, H, S, H-str, W, S-char ran every variant (and absl
# in H and H-str, glib in W); the big buffers L1, L2, BP ran over the malloc
# rows, the pools and the drop-in, with page faults in their tables; the
# malloc test patterns X ... ES ran over the malloc rows, the drop-in and
# pmr-c's thread-safe pools; the SYS programs that are installed ran under
# glibc and pmr-c's drop-in with the same output (a mismatch is status
# output_mismatch, which fails here); the drop-in also ran the latency study;
# the paired study ran each pmr-c pool beside mimalloc (or says why not). The
# measured values are not asserted. Also checks the charts, the --filter
# references, and that a missing or non-working LD_PRELOAD peer is reported
# ("not_installed", "preload_failed"), never an error, and that the text
# report and --help fit a 160-column terminal.
#
# Usage: quick_test.sh PATH/TO/benchmarks/all
set -uo pipefail

bin=$1
out=${TEST_TMPDIR:-$(mktemp -d)}
fails=0
fail() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}

system_workloads="SYS-redis SYS-sqlite SYS-lua SYS-python SYS-xz"
large_workloads="L1 L2 BP"
pattern_workloads="X FS FP TC LS BN T ES"
workloads="A B1 B2 B8 C D E F G V H S H-str W S-char R Q $large_workloads $pattern_workloads $system_workloads"
allocator_workloads="A B1 B2 B8 C D E F G"
container_workloads="V H S H-str W S-char"
allocators="glibc_malloc jemalloc tcmalloc mimalloc std_new_delete std_monotonic std_unsync_pool std_sync_pool
  simple_pool arena pmr_malloc pmr_monotonic pmr_monotonic_inline pmr_monotonic_release pmr_unsync_pool pmr_sync_pool
  pmr_thread_cache pmr_thread_cache_pool pmr_dropin pmr_dropin_pool absl_flat_hash_map glib_ghashtable no_allocator
  pmrc_monotonic pmrc_unsync_pool pmrc_sync_pool pmrc_thread_cache"
metrics_of() {
  case $1 in
    A | B1 | B2 | B8 | C) echo "alloc_ns_per_op free_ns_per_op total_ns_per_op peak_rss_growth_kib" ;;
    P) echo "total_ns_per_op kept_ns_per_op minor_faults_per_round peak_rss_growth_kib" ;;
    D) echo "peak_rss_kib retained_after_free_kib" ;;
    E) echo "ns_per_step peak_rss_growth_kib" ;;
    F) echo "ns_per_block peak_rss_growth_kib" ;;
    G) echo "ns_per_request peak_rss_growth_kib" ;;
    V) echo "push_ns_per_op destroy_ns_per_op total_ns_per_op peak_rss_growth_kib" ;;
    H | H-str) echo "insert_ns_per_op hit_ns_per_op miss_ns_per_op erase_ns_per_op total_ns_per_op peak_rss_growth_kib" ;;
    W) echo "count_ns_per_op destroy_ns_per_op total_ns_per_op peak_rss_growth_kib" ;;
    S | S-char) echo "build_ns_per_op destroy_ns_per_op total_ns_per_op peak_rss_growth_kib" ;;
    R | Q) echo "ms_per_run peak_rss_growth_kib" ;;
    L1 | L2) echo "ms_per_replacement minor_faults_per_op peak_rss_growth_kib" ;;
    BP) echo "us_per_block minor_faults_per_op peak_rss_growth_kib" ;;
    X | TC | BN) echo "ns_per_block peak_rss_growth_kib" ;;
    FS | FP) echo "ns_per_object peak_rss_growth_kib" ;;
    LS | ES) echo "ns_per_step peak_rss_growth_kib" ;;
    T) echo "pair_ns_per_op batch_ns_per_op total_ns_per_op peak_rss_growth_kib" ;;
    SYS-*) echo "wall_ms cpu_ms peak_rss_kib" ;;
  esac
}

# ---- the quick suite --------------------------------------------------------
json=$out/quick.json
svg=$out/svg
svg_file=$out/charts.svg
start=$(date +%s)
if ! "$bin" --quick --scale=0.01 --json="$json" --markdown="$out/results.md" --svg="$svg_file" --svg-dir="$svg" >"$out/stdout.txt" 2>"$out/stderr.txt"; then
  fail "quick run exited with $? (stderr below)"
  tail -n 30 "$out/stderr.txt"
fi
echo "quick run took $(($(date +%s) - start)) s"
[ -s "$json" ] || { fail "no JSON written"; echo "$fails failed"; exit 1; }
# The summary, in a file of its own: with pipefail, `sed | grep -q` fails
# when grep stops reading before sed is done.
sed -n '/^== Which resource/,$p' "$out/stdout.txt" >"$out/summary.txt"

for w in $workloads; do
  grep -q "^== $w: " "$out/stdout.txt" || fail "no table for workload $w"
  for a in $allocators; do
    for m in $(metrics_of "$w"); do
      n=$(grep -c "^{\"workload\": \"$w\", \"allocator\": \"$a\", \"metric\": \"$m\"," "$json")
      [ "$n" = 1 ] || fail "$w/$a/$m: $n records (want 1)"
    done
  done
done

# The text report fits a 160-column terminal (prose is wrapped; the JSON keeps
# it whole), and so does --help.
wide=$(awk 'length($0) > 160 { print FILENAME ":" FNR ": " length($0) " columns" }' "$out/stdout.txt" | head -n 3)
[ -z "$wide" ] || fail "report lines wider than 160 columns: $wide"
"$bin" --help >"$out/help.txt" 2>&1
wide=$(awk 'length($0) > 100' "$out/help.txt" | head -n 3)
[ -z "$wide" ] || fail "--help lines wider than 100 columns: $wide"

# Every record's status is a known one, and none is an error.
bad=$(grep '^{"workload"' "$json" |
  grep -v -E '"status": "(ok|not_installed|not_applicable|skipped|preload_failed)"' | head -n 5)
[ -z "$bad" ] || fail "records with an unexpected status: $bad"
# The C library resources and glibc really ran everywhere they apply.
ran() { grep -q "^{\"workload\": \"$1\", \"allocator\": \"$2\", .*\"status\": \"ok\"" "$json"; }
not_applicable() { grep -q "^{\"workload\": \"$1\", \"allocator\": \"$2\", .*\"status\": \"not_applicable\"" "$json"; }
for w in $allocator_workloads; do
  for a in glibc_malloc pmr_malloc pmr_sync_pool; do
    ran "$w" "$a" || fail "$w/$a did not run"
  done
  not_applicable "$w" absl_flat_hash_map || fail "$w/absl_flat_hash_map should be not_applicable"
  [ "$w" = F ] || not_applicable "$w" no_allocator || fail "$w/no_allocator should be not_applicable"
done
not_applicable F pmr_unsync_pool || fail "F/pmr_unsync_pool should be not_applicable"
ran F no_allocator || fail "F/no_allocator (F's floor) did not run"
grep "^   F " "$out/summary.txt" | grep -q no_allocator &&
  fail "the summary's F row picks no_allocator (a floor, not a choice)"
# Container workloads: every variant ran, with its container type recorded.
for w in $container_workloads; do
  for a in glibc_malloc std_new_delete std_monotonic std_unsync_pool pmr_malloc pmr_monotonic pmr_monotonic_release \
    pmr_unsync_pool; do
    ran "$w" "$a" || fail "$w/$a did not run"
  done
  not_applicable "$w" pmr_sync_pool || fail "$w/pmr_sync_pool should be not_applicable"
  # The table's head: the first "   allocator" line after the heading.
  awk -v h="== $w: " 'index($0, h) == 1 { on = 1 } on && /^   allocator / { print; exit }' \
    "$out/stdout.txt" | grep -q "^   allocator  *container " ||
    fail "table $w has no container column"
done
ran H absl_flat_hash_map || fail "H/absl_flat_hash_map did not run"
# The C++ bridge's rows: std::pmr containers over pmr-c, in V, S and H only.
for a in pmrc_monotonic pmrc_unsync_pool pmrc_sync_pool pmrc_thread_cache; do
  for w in V S H; do ran "$w" "$a" || fail "$w/$a did not run"; done
  not_applicable A "$a" || fail "A/$a should be not_applicable"
done
# R: the Lua client ran over every pool resource and the drop-in mallocs.
for a in glibc_malloc pmr_unsync_pool pmr_sync_pool pmr_thread_cache; do
  ran R "$a" || fail "R/$a did not run"
done
# Q: SQLite ran over every pool resource (through pmr_malloc_adapter) and
# glibc; resources without malloc-shaped hooks sit out.
for a in glibc_malloc pmr_malloc pmr_unsync_pool pmr_sync_pool pmr_thread_cache; do
  ran Q "$a" || fail "Q/$a did not run"
done
not_applicable Q std_new_delete || fail "Q/std_new_delete should be not_applicable"
not_applicable Q pmr_monotonic || fail "Q/pmr_monotonic should be not_applicable"
# L1, L2, BP (big buffers): the malloc rows, pmr-c's resources and drop-in
# and the std::pmr ones ran; bump resources sit out (they never free), BP
# takes thread-safe rows only; the table shows the page faults.
for w in $large_workloads; do
  for a in glibc_malloc std_new_delete std_sync_pool pmr_malloc pmr_sync_pool pmr_thread_cache pmr_thread_cache_pool; do
    ran "$w" "$a" || fail "$w/$a did not run"
  done
  grep -q '"sanitizer": ""' "$json" && { ran "$w" pmr_dropin || fail "$w/pmr_dropin did not run"; }
  for a in std_monotonic arena pmr_monotonic pmr_monotonic_release pmr_dropin_pool; do
    not_applicable "$w" "$a" || fail "$w/$a should be not_applicable"
  done
  sed -n "/^== $w: /,/^\$/p" "$out/stdout.txt" | grep -q '^   allocator .* faults$' || fail "table $w has no faults column"
  sed -n "/^== $w: /,/^\$/p" "$out/stdout.txt" | grep -q '^   pmr_thread_cache  .* [0-9][0-9.]*  *[0-9][0-9.]*$' ||
    fail "table $w has no thread-cache row with RSS+ and faults"
done
ran L1 pmr_unsync_pool || fail "L1/pmr_unsync_pool did not run"
ran L2 pmr_unsync_pool || fail "L2/pmr_unsync_pool (one instance per thread) did not run"
not_applicable BP pmr_unsync_pool || fail "BP/pmr_unsync_pool should be not_applicable"
# The malloc test patterns: the malloc rows (pmr_dropin too, outside
# sanitizer builds) and pmr-c's thread-safe pools ran, pmr_unsync_pool in
# the one-thread ones only; the other rows sit out.
for w in $pattern_workloads; do
  rows="glibc_malloc pmr_sync_pool pmr_thread_cache"
  grep -q '"sanitizer": ""' "$json" && rows="$rows pmr_dropin"
  for a in $rows; do ran "$w" "$a" || fail "$w/$a did not run"; done
  case $w in
    BN | T | ES) ran "$w" pmr_unsync_pool || fail "$w/pmr_unsync_pool did not run" ;;
    *) not_applicable "$w" pmr_unsync_pool || fail "$w/pmr_unsync_pool should be not_applicable" ;;
  esac
  for a in std_new_delete pmr_malloc pmr_monotonic pmr_dropin_pool simple_pool; do
    not_applicable "$w" "$a" || fail "$w/$a should be not_applicable"
  done
done
# SYS: every installed program ran under glibc and pmr-c's drop-in (both
# engines), and its row is in the SYS table; one not installed says so.
for w in $system_workloads; do
  if grep -q "^{\"workload\": \"$w\", \"allocator\": \"glibc_malloc\", .*\"status\": \"not_installed\"" "$json"; then
    echo "note: $w not installed here"
    continue
  fi
  rows="glibc_malloc pmr_dropin pmr_dropin_pool"
  grep -q '"sanitizer": ""' "$json" || rows=glibc_malloc # no preloads then
  for a in $rows; do
    ran "$w" "$a" || fail "$w/$a did not run"
    grep -q "^   ${w#SYS-}  *$a  " "$out/stdout.txt" || fail "SYS table has no row $w/$a"
  done
  not_applicable "$w" pmr_thread_cache || fail "$w/pmr_thread_cache should be not_applicable"
done
grep -q "^== SYS: real programs" "$out/stdout.txt" || fail "no SYS table"
not_applicable A pmr_dropin || fail "A/pmr_dropin should be not_applicable"
ran H-str absl_flat_hash_map || fail "H-str/absl_flat_hash_map did not run"
ran W glib_ghashtable || fail "W/glib_ghashtable did not run"
not_applicable W absl_flat_hash_map || fail "W/absl_flat_hash_map should be not_applicable"
not_applicable H glib_ghashtable || fail "H/glib_ghashtable should be not_applicable"
not_applicable V absl_flat_hash_map || fail "V/absl_flat_hash_map should be not_applicable"
grep -q '"workload": "V", "allocator": "pmr_monotonic", .*"container": "pmr_vector"' "$json" ||
  fail "V/pmr_monotonic: container should be pmr_vector"
grep -q '"workload": "H", "allocator": "std_unsync_pool", .*"container": "std::pmr::unordered_map"' "$json" ||
  fail "H/std_unsync_pool: container should be std::pmr::unordered_map"
grep -q '"workload": "S", "allocator": "glibc_malloc", .*"container": "std::string"' "$json" ||
  fail "S/glibc_malloc: container should be std::string"
# The summary has a row for every workload.
for w in $workloads; do
  grep -q "^   $w " "$out/summary.txt" || fail "summary has no row for $w"
done

if command -v python3 >/dev/null 2>&1; then
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["schema"]=="pmr-c-benchmarks/1"' "$json" ||
    fail "JSON does not parse"
fi

for w in $workloads; do
  head -c 5 "$svg/$w.svg" 2>/dev/null | grep -q '<svg' || fail "no chart $svg/$w.svg"
done
[ -s "$svg/index.html" ] || fail "no $svg/index.html"
# --markdown: the summary and every table, in Markdown.
grep -q "^## Which resource for which workload" "$out/results.md" || fail "--markdown: no summary"
for w in $workloads; do
  grep -q "^== $w: " "$out/results.md" || fail "--markdown: no table for $w"
done
# --svg=FILE writes that file (one SVG with every chart), not a directory.
[ -f "$svg_file" ] || fail "--svg=$svg_file did not write a file"
head -c 5 "$svg_file" 2>/dev/null | grep -q '<svg' || fail "$svg_file is not an SVG"
for w in $workloads; do
  grep -q ">$w: " "$svg_file" || fail "$svg_file has no chart for $w"
done
# Each chart says on which machine, when and in which mode it was made.
grep -q "mode quick+custom, scale 0.01" "$svg/A.svg" || fail "chart A does not say its mode"
grep -q "[0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9] UTC" "$svg/A.svg" || fail "chart A has no date"

# ---- the studies: latency percentiles, thread scaling, fragmentation ---------
studies="A-lat C-lat E-lat G-lat B-scale F-scale E-frag R-frag Q-frag"
study_metrics() {
  case $1 in
    *-lat) echo "p50_ns p90_ns p99_ns p999_ns max_ns" ;;
    B-scale) echo "mops_t1 mops_t2 mops_t4 mops_t8 mops_t16" ;;
    F-scale) echo "mops_p1 mops_p2 mops_p4 mops_p8" ;;
    *-frag) echo "rss_per_live peak_rss_kib peak_live_kib" ;;
  esac
}
for w in $studies; do
  grep -q "^== $w: " "$out/stdout.txt" || fail "no table for study $w"
  for a in $allocators; do
    for m in $(study_metrics "$w"); do
      n=$(grep -c "^{\"workload\": \"$w\", \"allocator\": \"$a\", \"metric\": \"$m\"," "$json")
      [ "$n" = 1 ] || fail "$w/$a/$m: $n records (want 1)"
    done
  done
  for a in glibc_malloc pmr_sync_pool pmr_thread_cache; do
    ran "$w" "$a" || fail "study $w/$a did not run"
  done
  head -c 5 "$svg/$w.svg" 2>/dev/null | grep -q '<svg' || fail "no chart $svg/$w.svg"
  grep -q '<polyline' "$svg/$w.svg" || fail "chart $w.svg has no lines"
  grep -q ">$w: " "$svg_file" || fail "$svg_file has no chart for $w"
done
# Latency percentiles for A: a number, and ordered P50 <= P99 <= max.
lat=$(grep '^{"workload": "A-lat", "allocator": "pmr_unsync_pool", "metric": "p\(50\|99\)_ns",' "$json" |
  grep -o '"median": [0-9.e+-]*' | awk '{print $2}' | tr '\n' ' ')
awk -v l="$lat" 'BEGIN { split(l, v, " "); exit !(v[1] != "" && v[2] != "" && v[1] + 0 <= v[2] + 0) }' ||
  fail "A-lat/pmr_unsync_pool: P50, P99 missing or out of order ($lat)"
# pmr-c's drop-in malloc (thread-cache engine) has a latency row with figures
# beside the other mallocs (preloads: not in sanitizer builds); the pool
# engine's drop-in sits the study out.
for w in A-lat C-lat E-lat G-lat; do
  if grep -q '"sanitizer": ""' "$json"; then
    ran "$w" pmr_dropin || fail "$w/pmr_dropin did not run"
    sed -n "/^== $w: /,/^\$/p" "$out/stdout.txt" | grep -q '^   pmr_dropin  *malloc  *[0-9]' ||
      fail "table $w has no pmr_dropin row with figures"
  fi
  not_applicable "$w" pmr_dropin_pool || fail "$w/pmr_dropin_pool should be not_applicable"
done
grep -q '^   pmr_thread_cache  .* shared  *[0-9.]*  *[0-9.]*  *[0-9.]*  *[0-9.]*  *[0-9.]*  *[0-9.]*x$' \
  <(sed -n '/^== B-scale: /,/^$/p' "$out/stdout.txt") || fail "B-scale has no thread-cache row with 5 figures"
grep -q 'OVERSUBSCRIBED' "$out/stdout.txt" || fail "the scaling table does not name oversubscription"
grep -q '"studies": {"cores": [0-9]' "$json" || fail "JSON: no studies.cores"
grep -q '"kind": "latency_percentiles"' "$json" || fail "JSON: no latency curves"
grep -q '"workload": "E-frag", "allocator": "glibc_malloc", "kind": "rss_over_run"' "$json" ||
  fail "JSON: no E-frag series"
grep -q '"workload": "Q-frag", "allocator": "glibc_malloc", "metric": "rss_per_live", .*"median": [0-9]' "$json" ||
  fail "Q-frag/glibc_malloc: no fragmentation ratio"
not_applicable E-frag pmr_monotonic || fail "E-frag/pmr_monotonic should be not_applicable"
grep -q "^   A-lat " "$out/summary.txt" &&
  fail "the summary should not list the studies"

# ---- the paired study: each pmr-c pool and mimalloc in one process ----------
# Its children run under mimalloc (LD_PRELOAD): skipped in sanitizer builds,
# not installed without it; the other rows are not applicable.
mimalloc_ok=false
grep -q '^{"workload": "A", "allocator": "mimalloc", .*"status": "ok"' "$json" && mimalloc_ok=true
for w in A-pair C-pair E-pair; do
  grep -q "^== $w: " "$out/stdout.txt" || fail "no table for study $w"
  metrics="ratio row_ns mimalloc_ns"
  [ "$w" = E-pair ] || metrics="$metrics alloc_ratio free_ratio"
  for a in $allocators; do
    for m in $metrics; do
      n=$(grep -c "^{\"workload\": \"$w\", \"allocator\": \"$a\", \"metric\": \"$m\"," "$json")
      [ "$n" = 1 ] || fail "$w/$a/$m: $n records (want 1)"
    done
  done
  for a in glibc_malloc mimalloc pmr_malloc pmr_monotonic pmr_dropin std_sync_pool; do
    not_applicable "$w" "$a" || fail "$w/$a should be not_applicable"
  done
  if $mimalloc_ok; then
    for a in pmr_unsync_pool pmr_sync_pool pmr_thread_cache pmr_thread_cache_pool; do
      ran "$w" "$a" || fail "$w/$a did not run"
    done
    grep -q "^{\"workload\": \"$w\", \"allocator\": \"pmr_sync_pool\", \"metric\": \"ratio\", .*\"median\": [0-9]" "$json" ||
      fail "$w/pmr_sync_pool: no ratio"
    sed -n "/^== $w: /,/^\$/p" "$out/stdout.txt" |
      grep -q '^   pmr_thread_cache  *abstract  *[0-9.]*  *[0-9.]*  *[0-9.]*  *\[[0-9.]*, [0-9.]*\]  *[0-9.]*' ||
      fail "table $w has no thread-cache row with figures"
    grep -q '<polyline' "$svg/$w.svg" || fail "chart $w.svg has no lines"
  else
    grep -q "^{\"workload\": \"$w\", \"allocator\": \"pmr_sync_pool\", .*\"status\": \"\(skipped\|not_installed\)\"" "$json" ||
      fail "$w/pmr_sync_pool: neither ran nor says why (mimalloc skipped or not installed)"
  fi
  head -c 5 "$svg/$w.svg" 2>/dev/null | grep -q '<svg' || fail "no chart $svg/$w.svg"
done

# ---- --filter keeps the references for the ratios ----------------------------
fjson=$out/filter.json
"$bin" --quick --scale=0.01 --rounds=1 --filter='^E/pmr_unsync' --json="$fjson" >/dev/null 2>&1 ||
  fail "filtered run failed"
grep -q '"workload": "E", "allocator": "pmr_unsync_pool", .*"reference_only": false' "$fjson" ||
  fail "filter: selected pair missing"
grep -q '"workload": "E", "allocator": "std_unsync_pool", .*"reference_only": true' "$fjson" ||
  fail "filter: std counterpart not run as a reference"
grep -q '"workload": "A"' "$fjson" && fail "filter: workload A should not run"
hjson=$out/filter_h.json
"$bin" --quick --scale=0.01 --rounds=1 --filter='^H/pmr_unsync' --json="$hjson" >/dev/null 2>&1 ||
  fail "filtered container run failed"
grep -q '"workload": "H", "allocator": "pmr_unsync_pool", .*"reference_only": false' "$hjson" ||
  fail "filter H: selected pair missing"
grep -q '"workload": "H", "allocator": "std_unsync_pool", .*"reference_only": true' "$hjson" ||
  fail "filter H: std counterpart not run as a reference"
grep -q '"workload": "V"' "$hjson" && fail "filter H: workload V should not run"

# ---- peers that are missing or do not work are reported, not errors ----------
sanitizer=$(grep -o '"sanitizer": "[a-z]*"' "$json" | head -n 1)
pjson=$out/peers.json
"$bin" --quick --scale=0.01 --rounds=1 --filter='^A/(jemalloc|mimalloc)$' \
  --peer-lib=jemalloc=/nonexistent/libjemalloc.so.2 \
  --peer-lib=mimalloc=/lib/x86_64-linux-gnu/libm.so.6 --json="$pjson" >"$out/peers.txt" 2>&1 ||
  fail "run with broken peers exited non-zero"
if [ "$sanitizer" = '"sanitizer": ""' ]; then
  grep -q '"allocator": "jemalloc", .*"status": "not_installed"' "$pjson" || fail "missing peer not reported"
  grep -q '"allocator": "mimalloc", .*"status": "preload_failed"' "$pjson" || fail "non-working preload not caught"
  grep -q 'not installed' "$out/peers.txt" || fail "table does not say 'not installed'"
else
  grep -q '"allocator": "jemalloc", .*"status": "skipped"' "$pjson" || fail "peers not skipped under $sanitizer"
fi
# A missing libpmr_malloc.so is "not installed" too.
djson=$out/dropin.json
"$bin" --quick --scale=0.01 --filter='^SYS-lua/pmr_dropin$' --peer-lib=pmr_dropin=/nonexistent/libpmr_malloc.so \
  --json="$djson" >/dev/null 2>&1 || fail "run with a missing libpmr_malloc.so exited non-zero"
if [ "$sanitizer" = '"sanitizer": ""' ]; then
  grep -q '"workload": "SYS-lua", "allocator": "pmr_dropin", .*"status": "not_installed"' "$djson" ||
    fail "missing libpmr_malloc.so not reported"
fi

if [ "$fails" -ne 0 ]; then
  echo "--- stdout of the quick run (head)"
  head -n 60 "$out/stdout.txt"
  echo "0 passed, $fails failed"
  exit 1
fi
echo "1 passed, 0 failed"
