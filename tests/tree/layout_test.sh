#!/usr/bin/env bash
# The tree's rules, checked (see README "Layout"):
# - public headers are named pmr_<type>.h (or pmr.h) and live outside internal/,
#   so no -I of any folder can shadow a system header;
# - library names use one public prefix (pmr_/PMR_) and one internal one
#   (pmr_impl_/PMR_IMPL_); no identifier contains "__" (reserved in C++) or
#   ends in "_";
# - every public header compiles alone as C11 and as C++17;
# - every library source compiles with a bare `cc -std=c11` (no -D from our
#   builds), as in a consumer's own Makefile;
# - a library or benchmark source (.c, .h, .cc) has at most 600 lines, so that
#   each file keeps one job and its name says which (no exceptions);
# - public headers keep contracts and reasons, not benchmark figures (a number
#   with a unit of time, speed or ratio: "12 ns", "15%", "1.3x", "x mimalloc",
#   "MiB/s"); figures go to the docs (benchmarks/RESULTS.md, the READMEs);
# - benchmarks use the public headers only (so that no internal change breaks
#   them), except the instruction counts (benchmarks/instructions.cc);
# - resources/ and malloc/ call the OS only through the platform layer
#   (resources/internal/platform.[ch]): no other file there calls mmap,
#   madvise, sysconf, clock_gettime, pthread_atfork, getenv, ... or declares
#   a thread-local of its own kind (_Thread_local: PMR_IMPL_THREAD_LOCAL);
# - an internal header's functions are named after it: pmr_impl_<its file
#   name, or one word of it>_... (heap_resource.h: pmr_impl_heap_resource_,
#   debug_track.h: pmr_impl_track_), except the headers listed below that
#   hold several small modules (the platform layer's os_, tls_, clock_).
set -uo pipefail
cd "${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-.}" 2>/dev/null || true
fail=0
say() { echo "layout_test: $*" >&2; fail=1; }

lib_files=$(ls pmr.h mem_resource/*.[ch] resources/*.[ch] resources/internal/*.[ch] \
  containers/*.[ch] containers/internal/*.[ch] malloc/*.[ch] malloc/internal/*.[ch] 2>/dev/null)
[ -n "$lib_files" ] || { echo "layout_test: no library files found" >&2; exit 1; }

for h in mem_resource/*.h resources/*.h containers/*.h malloc/*.h; do
  case $(basename "$h") in pmr_*.h) ;; *) say "$h: a public header must be named pmr_<type>.h" ;; esac
done

# Strip comments and string literals roughly (good enough for identifiers).
for f in $lib_files; do
  ids=$(sed -e 's://.*$::' -e 's:"[^"]*"::g' "$f" | perl -0pe 's{/\*.*?\*/}{}gs' |
        grep -oE '\b[A-Za-z_][A-Za-z0-9_]*\b' | sort -u)
  for id in $ids; do
    case $id in
      __*) continue ;; # compiler and platform macros (__GNUC__, __attribute__...)
      *__*) say "$f: '$id' contains '__' (reserved in C++)" ;;
      pmr_*_|PMR_*_) say "$f: '$id' ends in '_' (internal names use pmr_impl_)" ;;
    esac
  done
  # Macros in headers reach users' code: they carry a prefix. Except the
  # drop-in's test-only renaming, whose macros are the C library's names
  # (included by the drop-in's own sources, never by a user's).
  case $f in malloc/internal/dropin_rename.h) continue ;; *.h) ;; *) continue ;; esac
  for m in $(grep -oE '^#[[:space:]]*define[[:space:]]+[A-Za-z_][A-Za-z0-9_]*' "$f" | awk '{print $NF}'); do
    case $m in PMR_*|_GNU_SOURCE|_POSIX_C_SOURCE|_DEFAULT_SOURCE) ;; *) say "$f: macro '$m' lacks the PMR_ prefix" ;; esac
  done
done

# The line bound.
max_lines=600
bench_files=$(ls benchmarks/*.c benchmarks/*.h benchmarks/*.cc 2>/dev/null)
[ -n "$bench_files" ] || say "no benchmark sources found"
for f in $lib_files $bench_files; do
  n=$(wc -l <"$f")
  [ "$n" -le $max_lines ] && continue
  say "$f: $n lines (at most $max_lines: split it into files of one job each)"
done

# No benchmark figures in public headers. Allowed: contracts that carry a
# percentage (the pools' bound on a block's waste).
figure_re='(?<![A-Za-z0-9_])[0-9]+(?:[.,][0-9]+)?[ ]?(?:ns|us|µs|ms|%|x|MiB/s|GiB/s|MB/s|GB/s)(?![A-Za-z0-9_])|x (?:mimalloc|glibc|jemalloc|tcmalloc|absl)'
figure_allow='at most [0-9]+%'
for h in pmr.h mem_resource/*.h resources/*.h containers/*.h malloc/*.h; do
  hits=$(perl -ne "print \"\$.: \$_\" if m{$figure_re}" "$h" | grep -vE "$figure_allow")
  [ -z "$hits" ] || say "$h: a benchmark figure in a public header (move it to the docs): $hits"
done

# Benchmarks include no internal header, except the instruction counts.
for f in $bench_files; do
  case $f in benchmarks/instructions.cc) continue ;; esac
  grep -nE '#[[:space:]]*include[[:space:]]*"[^"]*(resources|containers|malloc)/internal/' "$f" >/dev/null &&
    say "$f: includes an internal header (benchmarks use the public ones)"
done

# OS calls only in the platform layer (comment lines aside).
os_re='(^|[^A-Za-z0-9_.>])(mmap|munmap|madvise|mremap|mincore|sysconf|getrandom|syscall|clock_gettime|pthread_atfork|getenv|secure_getenv|getrusage|sched_yield|write|pthread_key_create|pthread_setspecific|pthread_getspecific)[[:space:]]*\(|_Thread_local|__thread([^A-Za-z0-9_]|$)'
for f in resources/*.[ch] resources/internal/*.[ch] malloc/*.[ch] malloc/internal/*.[ch]; do
  case $f in resources/internal/platform.[ch]) continue ;; esac
  hits=$(grep -nE "$os_re" "$f" | grep -vE '^[0-9]+:[[:space:]]*(\*|/\*|//)')
  [ -z "$hits" ] || say "$f: an OS call outside the platform layer (resources/internal/platform.h): $hits"
done

# Internal functions carry their module's name (no abbreviation of it).
prefix_exempt=' live_registry mem_check page_heap page_source_impl platform pool_classes '
for h in resources/internal/*.h malloc/internal/*.h; do
  stem=$(basename "$h" .h)
  case $prefix_exempt in *" $stem "*) continue ;; esac
  for fn in $(perl -0pe 's{/\*.*?\*/}{}gs' "$h" | grep -oE '^[A-Za-z].*\bpmr_impl_[a-z0-9_]+\(' |
              grep -oE 'pmr_impl_[a-z0-9_]+\($' | tr -d '(' | sort -u); do
    ok=0
    for w in "$stem" ${stem//_/ }; do
      case $fn in "pmr_impl_${w}_"* | "pmr_impl_$w") ok=1 ;; esac
    done
    [ $ok = 1 ] || say "$h: '$fn' is not named after its module (pmr_impl_${stem}_... or a word of it)"
  done
done

CC=${CC:-cc}
CXX=${CXX:-c++}
command -v "$CC" >/dev/null || CC=gcc
command -v "$CXX" >/dev/null || CXX=g++
tmp=$(mktemp -d)
for h in pmr.h mem_resource/pmr_*.h resources/pmr_*.h containers/pmr_*.h malloc/pmr_*.h; do
  printf '#include "%s"\n' "$h" > "$tmp/one.c"
  "$CC" -std=c11 -Wall -Wextra -Wpedantic -Werror -I. -fsyntax-only "$tmp/one.c" 2>"$tmp/err" ||
    { say "$h does not compile alone as C11"; cat "$tmp/err" >&2; }
  cp "$tmp/one.c" "$tmp/one.cc"
  "$CXX" -std=c++17 -Wall -Wextra -Wpedantic -Werror -I. -fsyntax-only "$tmp/one.cc" 2>"$tmp/err" ||
    { say "$h does not compile alone as C++17"; cat "$tmp/err" >&2; }
done
# The C++ bridge (cxx/): C++17 only, warning-free alone with g++ and
# clang++, macros prefixed; the C library never includes it.
for cxx in "$CXX" g++ clang++; do
  command -v "$cxx" >/dev/null || continue
  for h in cxx/*.hpp; do
    printf '#include "%s"\n' "$h" > "$tmp/one.cc"
    "$cxx" -std=c++17 -Wall -Wextra -Wpedantic -Wshadow -Werror -I. -fsyntax-only \
      "$tmp/one.cc" 2>"$tmp/err" ||
      { say "$h does not compile alone as C++17 ($cxx)"; cat "$tmp/err" >&2; }
  done
done
for h in cxx/*.hpp; do
  for m in $(grep -oE '^#[[:space:]]*define[[:space:]]+[A-Za-z_][A-Za-z0-9_]*' "$h" | awk '{print $NF}'); do
    case $m in PMR_*) ;; *) say "$h: macro '$m' lacks the PMR_ prefix" ;; esac
  done
done
grep -lE '#[[:space:]]*include.*cxx/' $lib_files >/dev/null 2>&1 && say "the C library includes the C++ bridge"
for c in mem_resource/*.c resources/*.c resources/internal/*.c containers/*.c malloc/*.c; do
  "$CC" -std=c11 -Wall -Wextra -Werror -I. -fsyntax-only "$c" 2>"$tmp/err" ||
    { say "$c does not compile with a bare cc -std=c11"; cat "$tmp/err" >&2; }
done
rm -rf "$tmp"

[ $fail -eq 0 ] && echo "layout_test: ok ($(echo "$lib_files" | wc -w) library files)"
exit $fail
