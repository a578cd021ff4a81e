// What the pattern workloads share: the shapes allocator authors compare
// their mallocs on (cross-thread frees, false sharing, thread churn, a server
// simulation, bignum and logic-minimiser shapes, tight loops), written for
// this benchmark. Their entries: workloads_patterns_threads.cc (X, FS, FP),
// workloads_patterns_churn.cc (TC, LS), workloads_patterns.cc (BN, T, ES).
//
// Their rows: the malloc rows (glibc, the LD_PRELOAD peers and pmr-c's
// drop-in) and pmr-c's thread-safe resources; pmr_unsync_pool in the
// one-thread shapes too. Every row runs the same precomputed, seeded inputs.
// Internal to //benchmarks:all.
#ifndef PMR_BENCHMARKS_WORKLOADS_PATTERNS_H_
#define PMR_BENCHMARKS_WORKLOADS_PATTERNS_H_

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "benchmarks/workloads_common.h"

namespace bench {

inline constexpr char kPatternRowsThreads[] =
    "glibc_malloc jemalloc tcmalloc mimalloc pmr_dropin pmr_thread_cache "
    "pmr_sync_pool";
inline constexpr char kPatternRowsOne[] =
    "glibc_malloc jemalloc tcmalloc mimalloc pmr_dropin pmr_thread_cache "
    "pmr_sync_pool pmr_unsync_pool";
inline constexpr char kPatternWhyThreads[] =
    "a malloc test pattern: the malloc rows, pmr-c's drop-in and pmr-c's "
    "thread-safe resources (thread cache, synchronized pool) only";
inline constexpr char kPatternWhyOne[] =
    "a malloc test pattern: the malloc rows, pmr-c's drop-in and pmr-c's "
    "pools (thread cache, synchronized, unsynchronized) only";

// The entry's common shape: one time metric (the primary) and RSS+.
inline WorkloadInfo Pattern(const char* id, const char* title, int threads,
                            const char* metric, const char* unit_label) {
  WorkloadInfo w;
  w.id = id;
  w.title = title;
  w.threads = threads;
  w.rows = threads > 1 ? kPatternRowsThreads : kPatternRowsOne;
  w.rows_why = threads > 1 ? kPatternWhyThreads : kPatternWhyOne;
  w.metrics = {{metric, "ns"}, {"peak_rss_growth_kib", "KiB"}};
  w.primary = metric;
  w.unit_label = unit_label;
  return w;
}

// A size in [lo, hi], uniform in its logarithm: small blocks far more often
// than large ones, every size class of the range visited.
inline uint32_t LogUniform(Rng& rng, uint32_t lo, uint32_t hi) {
  const double u = static_cast<double>(rng.Next() >> 11) * 0x1.0p-53;
  const double v = lo * std::exp(u * std::log(static_cast<double>(hi) / lo));
  return std::clamp(static_cast<uint32_t>(v), lo, hi);
}

// Writes v into the first 8 bytes of a block of n >= 8 bytes, and into its
// last 8 from 16 bytes on; Peek reads the first 8.
inline void Mark(void* p, size_t n, uint64_t v) {
  std::memcpy(p, &v, 8);
  if (n >= 16) std::memcpy(static_cast<char*>(p) + n - 8, &v, 8);
}
inline uint64_t Peek(const void* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// Makes the optimiser treat p as used (an allocation freed at once is not
// elided).
inline void Escape(void* p) { asm volatile("" : : "g"(p) : "memory"); }

// Waits a little: pause first, then yield (2 cores, maybe busy).
inline void Relax(int* spins) {
  if (++*spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  } else {
    sched_yield();
  }
}

// A block and its size (pmr rows free with the size; malloc rows ignore it).
struct Sized {
  void* p;
  uint32_t n;
};

// A two-party barrier, reusable: spins, then yields.
class PairBarrier {
 public:
  void Wait() {
    const unsigned gen = gen_.load(std::memory_order_acquire);
    if (count_.fetch_add(1, std::memory_order_acq_rel) == 1) {
      count_.store(0, std::memory_order_relaxed);
      gen_.store(gen + 1, std::memory_order_release);
      return;
    }
    int spins = 0;
    while (gen_.load(std::memory_order_acquire) == gen) Relax(&spins);
  }

 private:
  alignas(kCacheLine) std::atomic<unsigned> count_{0};
  alignas(kCacheLine) std::atomic<unsigned> gen_{0};
};

// A bounded single-producer single-consumer queue of blocks, never blocking:
// TryPush fails when full, TryPop when empty.
class BlockQueue {
 public:
  explicit BlockQueue(size_t slots) : mask_(slots - 1), slot_(slots) {}
  bool TryPush(Sized b) {
    const size_t t = tail_.load(std::memory_order_relaxed);
    if (t - head_cache_ >= slot_.size()) {
      head_cache_ = head_.load(std::memory_order_acquire);
      if (t - head_cache_ >= slot_.size()) return false;
    }
    slot_[t & mask_] = b;
    tail_.store(t + 1, std::memory_order_release);
    return true;
  }
  bool TryPop(Sized* b) {
    const size_t h = head_.load(std::memory_order_relaxed);
    if (h == tail_cache_) {
      tail_cache_ = tail_.load(std::memory_order_acquire);
      if (h == tail_cache_) return false;
    }
    *b = slot_[h & mask_];
    head_.store(h + 1, std::memory_order_release);
    return true;
  }

 private:
  const size_t mask_;
  std::vector<Sized> slot_;
  alignas(kCacheLine) std::atomic<size_t> head_{0};
  alignas(kCacheLine) size_t tail_cache_ = 0;
  alignas(kCacheLine) std::atomic<size_t> tail_{0};
  alignas(kCacheLine) size_t head_cache_ = 0;
};

// The entries of Workloads() (workloads.cc).
WorkloadInfo WorkloadX();  // workloads_patterns_threads.cc
WorkloadInfo WorkloadFS();
WorkloadInfo WorkloadFP();
WorkloadInfo WorkloadTC();  // workloads_patterns_churn.cc
WorkloadInfo WorkloadLS();
WorkloadInfo WorkloadBN();  // workloads_patterns.cc
WorkloadInfo WorkloadT();
WorkloadInfo WorkloadES();

}  // namespace bench

#endif  // PMR_BENCHMARKS_WORKLOADS_PATTERNS_H_
