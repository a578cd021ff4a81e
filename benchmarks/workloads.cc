// Workloads(): every workload of //benchmarks:all, one entry each (at the end
// of this file): its metrics, parameters, notes and run function, with the
// run functions above it.
//
// Method, for every workload: inputs (sizes, orders, random sequences) are
// built before any timing; `warmup` untimed rounds, then `rounds` timed ones
// on the same allocator instance (a pool keeps its chunks across rounds, as
// malloc keeps its heap); pointers and block contents feed a checksum that is
// printed, so nothing can be optimised away.
//
// The container workloads V, H, S, H-str, W, S-char measure a container type
// over a resource (registry.cc's ContainerOf): the std container with
// std::allocator on the malloc rows, the std::pmr one over the std resource,
// the pmr-c one over the pmr-c resource, absl::flat_hash_map in H and H-str,
// glib's GHashTable in W. One resource instance serves all
// rounds; each round makes its containers from empty and destroys them, then
// calls the resource's drop() (monotonic: reset or release) in the timed
// destroy phase.
#include <dirent.h>
#include <glib.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <memory_resource>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

#include <malloc.h>
#include <sqlite3.h>

extern "C" {
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
}

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "benchmarks/adapters.h"
#include "benchmarks/child.h"
#include "benchmarks/json.h"
#include "benchmarks/registry.h"
#include "benchmarks/system.h"
#include "containers/pmr_hashmap.h"
#include "containers/pmr_string.h"
#include "containers/pmr_vector.h"
#include "examples/lua/pmr_lua_alloc.h"
#include "examples/sqlite/pmr_sqlite_mem.h"
#include "examples/sqlite/sqlite_workload.h"

namespace bench {

uint64_t& Sink() {
  static uint64_t sink = 0;
  return sink;
}

namespace {

inline uint64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u +
         static_cast<uint64_t>(ts.tv_nsec);
}

// splitmix64: fixed seeds, so every allocator sees the same sequence.
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t Next() {
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n).
  uint32_t Below(uint32_t n) {
    return static_cast<uint32_t>(((Next() >> 32) * n) >> 32);
  }
  // Uniform in [lo, hi].
  uint32_t Between(uint32_t lo, uint32_t hi) { return lo + Below(hi - lo + 1); }

 private:
  uint64_t s_;
};

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "benchmark child: %s\n", what);
  std::fflush(stderr);
  std::_Exit(4);
}

// A field of /proc/self/status in KiB ("VmRSS", "VmHWM"), or -1.
long StatusKib(const char* key) {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  long v = -1;
  const size_t n = std::strlen(key);
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::strncmp(line, key, n) == 0 && line[n] == ':') {
      v = std::strtol(line + n + 1, nullptr, 10);
      break;
    }
  }
  std::fclose(f);
  return v;
}

// Writes the first and last 8 bytes of a block of n >= 16 bytes.
inline void Touch(void* p, size_t n, uint64_t v) {
  std::memcpy(p, &v, 8);
  std::memcpy(static_cast<char*>(p) + n - 8, &v, 8);
}

inline void CheckAlloc(void* p) {
  if (p == nullptr) Fail("allocation failed");
}

void EmitMetric(const char* id, const std::vector<double>& values) {
  std::string s = absl::StrFormat(
      "{\"type\":\"metric\",\"metric\":\"%s\",\"values\":[", id);
  for (size_t i = 0; i < values.size(); ++i)
    s += (i ? "," : "") + JsonNumber(values[i]);
  s += "]}\n";
  std::fputs(s.c_str(), stdout);
}

// Peak RSS of the process above `baseline_kib` (VmRSS taken when the
// workload's own arrays were ready): what the allocator made resident.
void EmitRssGrowth(long baseline_kib) {
  long hwm = StatusKib("VmHWM");
  EmitMetric("peak_rss_growth_kib",
             {static_cast<double>(std::max(0L, hwm - baseline_kib))});
}

struct Phases {
  std::vector<double> alloc, free, total;
  void Add(uint64_t t0, uint64_t t1, uint64_t t2, double ops) {
    alloc.push_back((t1 - t0) / ops);
    free.push_back((t2 - t1) / ops);
    total.push_back((t2 - t0) / ops);
  }
  void Emit() const {
    EmitMetric("alloc_ns_per_op", alloc);
    EmitMetric("free_ns_per_op", free);
    EmitMetric("total_ns_per_op", total);
  }
};

template <class Make>
using AdapterOf = typename decltype(std::declval<Make>()())::element_type;

// ---- A: one thread, n x 64 B, each written, then free all ------------------
template <class Make>
void RunA(Make make, const ChildArgs& args) {
  const size_t n = args.sizes.a_blocks;
  auto a = make();
  std::vector<void*> ptrs(n, nullptr);
  const long base = StatusKib("VmRSS");
  Phases ph;
  uint64_t acc = 0;
  for (int r = -args.warmup; r < args.rounds; ++r) {
    const uint64_t t0 = NowNs();
    for (size_t i = 0; i < n; ++i) {
      void* p = a->alloc(kBlock);
      CheckAlloc(p);
      std::memset(p, static_cast<int>(i), kBlock);
      ptrs[i] = p;
    }
    const uint64_t t1 = NowNs();
    acc += *static_cast<unsigned char*>(ptrs[n / 2]) +
           reinterpret_cast<uintptr_t>(ptrs[n - 1]);
    for (size_t i = 0; i < n; ++i) a->dealloc(ptrs[i], kBlock);
    a->drop();
    const uint64_t t2 = NowNs();
    if (r >= 0) ph.Add(t0, t1, t2, static_cast<double>(n));
  }
  Sink() += acc;
  ph.Emit();
  EmitRssGrowth(base);
}

// ---- D: workload A once, in a fresh process, measuring resident memory -----
template <class Make>
void RunD(Make make, const ChildArgs& args) {
  const size_t n = args.sizes.a_blocks;
  auto a = make();
  std::vector<void*> ptrs(n, nullptr);  // touched: part of the baseline
  const long base = StatusKib("VmRSS");
  uint64_t acc = 0;
  for (size_t i = 0; i < n; ++i) {
    void* p = a->alloc(kBlock);
    CheckAlloc(p);
    std::memset(p, static_cast<int>(i), kBlock);
    ptrs[i] = p;
  }
  const long hwm = StatusKib("VmHWM");
  acc += *static_cast<unsigned char*>(ptrs[n / 2]);
  for (size_t i = 0; i < n; ++i) a->dealloc(ptrs[i], kBlock);
  a->drop();
  const long after = StatusKib("VmRSS");
  Sink() += acc;
  EmitMetric("peak_rss_kib", {static_cast<double>(hwm - base)});
  EmitMetric("retained_after_free_kib",
             {static_cast<double>(std::max(0L, after - base))});
}

// ---- B: N threads at once, each n x 64 B then free --------------------------
template <class Make>
void RunB(Make make, const ChildArgs& args, int threads, bool shared) {
  using A = AdapterOf<Make>;
  const size_t n = args.sizes.b_blocks;
  std::vector<std::unique_ptr<A>> inst;
  for (int t = 0; t < (shared ? 1 : threads); ++t) inst.push_back(make());
  std::vector<std::vector<void*>> ptrs(threads, std::vector<void*>(n, nullptr));
  const long base = StatusKib("VmRSS");
  struct Times {
    uint64_t a0, a1, f0, f1;
    uint64_t acc;
  };
  Phases ph;
  uint64_t acc = 0;
  for (int r = -args.warmup; r < args.rounds; ++r) {
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, nullptr, static_cast<unsigned>(threads));
    std::vector<Times> tm(threads);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        A& a = *inst[shared ? 0 : t];
        std::vector<void*>& v = ptrs[t];
        Times& my = tm[t];
        pthread_barrier_wait(&barrier);
        my.a0 = NowNs();
        for (size_t i = 0; i < n; ++i) {
          void* p = a.alloc(kBlock);
          CheckAlloc(p);
          std::memset(p, static_cast<int>(i), kBlock);
          v[i] = p;
        }
        my.a1 = NowNs();
        my.acc = *static_cast<unsigned char*>(v[n / 2]) +
                 reinterpret_cast<uintptr_t>(v[n - 1]);
        pthread_barrier_wait(&barrier);
        my.f0 = NowNs();
        for (size_t i = 0; i < n; ++i) a.dealloc(v[i], kBlock);
        if (!shared) a.drop();
        my.f1 = NowNs();
      });
    }
    for (auto& th : pool) th.join();
    pthread_barrier_destroy(&barrier);
    uint64_t a0 = UINT64_MAX, a1 = 0, f0 = UINT64_MAX, f1 = 0;
    for (const Times& x : tm) {
      a0 = std::min(a0, x.a0);
      a1 = std::max(a1, x.a1);
      f0 = std::min(f0, x.f0);
      f1 = std::max(f1, x.f1);
      acc += x.acc;
    }
    if (r >= 0) {
      const double ops = static_cast<double>(n) * threads;
      ph.alloc.push_back((a1 - a0) / ops);
      ph.free.push_back((f1 - f0) / ops);
      ph.total.push_back(((a1 - a0) + (f1 - f0)) / ops);
    }
  }
  Sink() += acc;
  ph.Emit();
  EmitRssGrowth(base);
}

// ---- P: short-lived pools: each thread makes its own instance per round --
// The way resources are used: a pool per request, task or thread, made and
// destroyed over and over. Each round, each of `threads` new threads makes
// an instance, allocates n x 64 B (writing each), frees them and destroys
// the instance; the same loop with instances made once and kept (dropped
// each round, as in B) is timed beside it.
template <class Make>
void RunP(Make make, const ChildArgs& args, int threads) {
  using A = AdapterOf<Make>;
  const size_t n = args.sizes.b_blocks;
  std::vector<std::vector<void*>> ptrs(threads, std::vector<void*>(n, nullptr));
  std::vector<std::unique_ptr<A>> kept;
  for (int t = 0; t < threads; ++t) kept.push_back(make());
  const long base = StatusKib("VmRSS");
  std::vector<double> fresh_ns, kept_ns, faults;
  uint64_t acc = 0;
  auto work = [&](A& a, int t) {
    std::vector<void*>& v = ptrs[t];
    for (size_t i = 0; i < n; ++i) {
      void* p = a.alloc(kBlock);
      CheckAlloc(p);
      std::memset(p, static_cast<int>(i), kBlock);
      v[i] = p;
    }
    const uint64_t x = *static_cast<unsigned char*>(v[n / 2]);
    for (size_t i = 0; i < n; ++i) a.dealloc(v[i], kBlock);
    a.drop();
    return x;
  };
  // One round: wall time per block, and minor faults.
  auto round = [&](bool fresh) {
    std::vector<uint64_t> xs(threads);
    struct rusage r0, r1;
    getrusage(RUSAGE_SELF, &r0);
    const uint64_t t0 = NowNs();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        if (fresh) {
          std::unique_ptr<A> a = make();
          xs[t] = work(*a, t);
        } else {
          xs[t] = work(*kept[t], t);
        }
      });
    for (auto& th : pool) th.join();
    const uint64_t t1 = NowNs();
    getrusage(RUSAGE_SELF, &r1);
    for (uint64_t x : xs) acc += x;
    return std::make_pair(
        static_cast<double>(t1 - t0) / (static_cast<double>(n) * threads),
        static_cast<double>(r1.ru_minflt - r0.ru_minflt));
  };
  // Kept first, then those instances destroyed: what they hold is gone
  // before the instances made per round run.
  for (int r = -args.warmup; r < args.rounds; ++r) {
    const auto k = round(false);
    if (r >= 0) kept_ns.push_back(k.first);
  }
  kept.clear();
  for (int r = -args.warmup; r < args.rounds; ++r) {
    const auto f = round(true);
    if (r >= 0) {
      fresh_ns.push_back(f.first);
      faults.push_back(f.second);
    }
  }
  Sink() += acc;
  EmitMetric("total_ns_per_op", fresh_ns);
  EmitMetric("kept_ns_per_op", kept_ns);
  EmitMetric("minor_faults_per_round", faults);
  EmitRssGrowth(base);
}

// ---- C: mixed sizes 64/128/256/512 (4:3:2:1), freed shuffled ----------------
template <class Make>
void RunC(Make make, const ChildArgs& args) {
  const size_t n = args.sizes.c_allocs;
  static const uint16_t kBySlot[10] = {64,  64,  64,  64,  128,
                                       128, 128, 256, 256, 512};
  Rng rng(0xC0FFEE);
  std::vector<uint16_t> size(n);
  for (size_t i = 0; i < n; ++i) size[i] = kBySlot[rng.Below(10)];
  std::vector<uint32_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = static_cast<uint32_t>(i);
  for (size_t i = n - 1; i > 0; --i)
    std::swap(order[i], order[rng.Below(static_cast<uint32_t>(i + 1))]);
  auto a = make();
  std::vector<void*> ptrs(n, nullptr);
  const long base = StatusKib("VmRSS");
  Phases ph;
  uint64_t acc = 0;
  for (int r = -args.warmup; r < args.rounds; ++r) {
    const uint64_t t0 = NowNs();
    for (size_t i = 0; i < n; ++i) {
      void* p = a->alloc(size[i]);
      CheckAlloc(p);
      Touch(p, size[i], i);
      ptrs[i] = p;
    }
    const uint64_t t1 = NowNs();
    acc += *static_cast<unsigned char*>(ptrs[n / 2]);
    for (size_t j = 0; j < n; ++j) {
      const uint32_t k = order[j];
      a->dealloc(ptrs[k], size[k]);
    }
    a->drop();
    const uint64_t t2 = NowNs();
    if (r >= 0) ph.Add(t0, t1, t2, static_cast<double>(n));
  }
  Sink() += acc;
  ph.Emit();
  EmitRssGrowth(base);
}

// ---- E: churn ---------------------------------------------------------------
template <class Make>
void RunE(Make make, const ChildArgs& args) {
  const size_t live = args.sizes.e_live, steps = args.sizes.e_steps;
  Rng rng(0xE0E0);
  std::vector<uint16_t> init_size(live);
  for (auto& s : init_size)
    s = static_cast<uint16_t>(rng.Between(kEMin, kEMax));
  std::vector<uint32_t> idx(steps);
  std::vector<uint16_t> size(steps);
  for (size_t s = 0; s < steps; ++s) {
    idx[s] = rng.Below(static_cast<uint32_t>(live));
    size[s] = static_cast<uint16_t>(rng.Between(kEMin, kEMax));
  }
  auto a = make();
  std::vector<void*> ptr(live, nullptr);
  std::vector<uint16_t> cur(live);
  const long base = StatusKib("VmRSS");
  std::vector<double> per_step;
  uint64_t acc = 0;
  for (int r = -args.warmup; r < args.rounds; ++r) {
    for (size_t k = 0; k < live; ++k) {  // untimed fill
      ptr[k] = a->alloc(init_size[k]);
      CheckAlloc(ptr[k]);
      Touch(ptr[k], init_size[k], k);
      cur[k] = init_size[k];
    }
    const uint64_t t0 = NowNs();
    for (size_t s = 0; s < steps; ++s) {
      const uint32_t k = idx[s];
      a->dealloc(ptr[k], cur[k]);
      void* p = a->alloc(size[s]);
      CheckAlloc(p);
      Touch(p, size[s], s);
      ptr[k] = p;
      cur[k] = size[s];
    }
    const uint64_t t1 = NowNs();
    for (size_t k = 0; k < live; ++k) {  // untimed drain
      acc += *static_cast<unsigned char*>(ptr[k]);
      a->dealloc(ptr[k], cur[k]);
    }
    a->drop();
    if (r >= 0) per_step.push_back((t1 - t0) / static_cast<double>(steps));
  }
  Sink() += acc;
  EmitMetric("ns_per_step", per_step);
  EmitRssGrowth(base);
}

// ---- F: producer -> SPSC ring -> consumer frees
// ------------------------------
class SpscRing {
 public:
  explicit SpscRing(size_t slots) : mask_(slots - 1), slot_(slots) {}
  void Push(void* p) {
    const size_t t = tail_.load(std::memory_order_relaxed);
    int spins = 0;
    while (t - head_cache_ >= slot_.size()) {
      head_cache_ = head_.load(std::memory_order_acquire);
      if (t - head_cache_ >= slot_.size()) Backoff(&spins);
    }
    slot_[t & mask_] = p;
    tail_.store(t + 1, std::memory_order_release);
  }
  void* Pop() {
    const size_t h = head_.load(std::memory_order_relaxed);
    int spins = 0;
    while (h == tail_cache_) {
      tail_cache_ = tail_.load(std::memory_order_acquire);
      if (h == tail_cache_) Backoff(&spins);
    }
    void* p = slot_[h & mask_];
    head_.store(h + 1, std::memory_order_release);
    return p;
  }

 private:
  static void Backoff(int* spins) {
    if (++*spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    } else {
      sched_yield();  // 2 cores, maybe busy: let the other side run
    }
  }
  const size_t mask_;
  std::vector<void*> slot_;
  alignas(kCacheLine) std::atomic<size_t> head_{0};  // consumer's position
  alignas(kCacheLine) size_t tail_cache_ = 0;        // consumer's view of tail_
  alignas(kCacheLine) std::atomic<size_t> tail_{0};  // producer's position
  alignas(kCacheLine) size_t head_cache_ = 0;        // producer's view of head_
};

template <class Make>
void RunF(Make make, const ChildArgs& args) {
  using A = AdapterOf<Make>;
  const size_t n = args.sizes.f_blocks;
  auto a = make();
  const long base = StatusKib("VmRSS");
  std::vector<double> per_block;
  uint64_t acc = 0;
  for (int r = -args.warmup; r < args.rounds; ++r) {
    SpscRing ring(kFRing);
    std::atomic<int> ready{0};
    uint64_t t0 = 0, t1 = 0, consumed = 0;
    auto wait_both = [&ready] {
      ready.fetch_add(1, std::memory_order_acq_rel);
      while (ready.load(std::memory_order_acquire) < 2) sched_yield();
    };
    A& alloc = *a;
    std::thread producer([&] {
      wait_both();
      t0 = NowNs();
      for (size_t i = 0; i < n; ++i) {
        void* p = alloc.alloc(kBlock);
        CheckAlloc(p);
        Touch(p, kBlock, i);
        ring.Push(p);
      }
    });
    std::thread consumer([&] {
      wait_both();
      uint64_t sum = 0;
      for (size_t i = 0; i < n; ++i) {
        void* p = ring.Pop();
        sum += *static_cast<unsigned char*>(p);
        alloc.dealloc(p, kBlock);
      }
      t1 = NowNs();
      consumed = sum;
    });
    producer.join();
    consumer.join();
    acc += consumed;
    if (r >= 0) per_block.push_back((t1 - t0) / static_cast<double>(n));
  }
  Sink() += acc;
  EmitMetric("ns_per_block", per_block);
  EmitRssGrowth(base);
}

// ---- G: request-scoped arena
// --------------------------------------------------
template <class Make>
void RunG(Make make, const ChildArgs& args) {
  const size_t requests = args.sizes.g_requests;
  Rng rng(0x6A7E);
  std::vector<uint8_t> count(requests);
  std::vector<uint16_t> size;
  std::vector<uint8_t> piece;
  size.reserve(requests * (kGMinAllocs + kGMaxAllocs) / 2 + 64);
  piece.reserve(size.capacity());
  for (size_t r = 0; r < requests; ++r) {
    count[r] = static_cast<uint8_t>(rng.Between(kGMinAllocs, kGMaxAllocs));
    for (size_t j = 0; j < count[r]; ++j) {
      size.push_back(static_cast<uint16_t>(rng.Between(kGMin, kGMax)));
      piece.push_back(static_cast<uint8_t>(rng.Between(1, kGPieceMax)));
    }
  }
  static const char kText[] =
      "GET /api/v1/items?id=42&fields=name,price HTTP/1.1 Host: example";
  auto a = make();
  const bool bulk = a->bump();
  void* blocks[kGMaxAllocs];
  const long base = StatusKib("VmRSS");
  std::vector<double> per_request;
  uint64_t acc = 0;
  for (int round = -args.warmup; round < args.rounds; ++round) {
    const uint64_t t0 = NowNs();
    size_t off = 0;
    for (size_t r = 0; r < requests; ++r) {
      const size_t c = count[r];
      size_t cap = kGStringStart, len = 0;
      char* s = static_cast<char*>(a->alloc(cap));
      CheckAlloc(s);
      for (size_t j = 0; j < c; ++j) {
        const size_t sz = size[off + j];
        void* p = a->alloc(sz);
        CheckAlloc(p);
        Touch(p, sz, j);
        blocks[j] = p;
        const size_t pc = piece[off + j];
        if (len + pc + 1 >
            cap) {  // realloc-style doubling through the resource
          const size_t ncap = cap * 2;
          char* ns = static_cast<char*>(a->alloc(ncap));
          CheckAlloc(ns);
          std::memcpy(ns, s, len);
          a->dealloc(s, cap);
          s = ns;
          cap = ncap;
        }
        std::memcpy(s + len, kText + (j & 31), pc);
        len += pc;
      }
      s[len] = '\0';
      acc += static_cast<unsigned char>(s[len / 2]) + len;
      if (bulk) {
        a->drop();
      } else {
        for (size_t j = 0; j < c; ++j) a->dealloc(blocks[j], size[off + j]);
        a->dealloc(s, cap);
      }
      off += c;
    }
    const uint64_t t1 = NowNs();
    if (round >= 0)
      per_request.push_back((t1 - t0) / static_cast<double>(requests));
  }
  Sink() += acc;
  EmitMetric("ns_per_request", per_request);
  EmitRssGrowth(base);
}

// ---- Container workloads: V (vector), H (hash map), S (strings)
// --------------- Each Ops class wraps one container type behind the same few
// inline calls, so the three runners below are the same code for every row.

template <class Vec>  // std::vector<uint64_t> or std::pmr::vector<uint64_t>
class StdVecOps {
 public:
  explicit StdVecOps(typename Vec::allocator_type al) : al_(al) {}
  void Begin() { v_.emplace(al_); }
  void Push(uint64_t x) { v_->push_back(x); }
  uint64_t Check() const { return (*v_)[v_->size() / 2] + v_->size(); }
  void End() { v_.reset(); }

 private:
  typename Vec::allocator_type al_;
  std::optional<Vec> v_;
};

class PmrVecOps {
 public:
  explicit PmrVecOps(pmr_mem_resource* r) : r_(r) {}
  void Begin() {
    if (!PMR_VECTOR_INIT_T(&v_, uint64_t, r_)) Fail("pmr_vector_init failed");
  }
  void Push(uint64_t x) {
    if (PMR_UNLIKELY(!pmr_vector_push_back(&v_, &x))) Fail("allocation failed");
  }
  uint64_t Check() const {
    const size_t n = pmr_vector_size(&v_);
    return PMR_VECTOR_GET_T(&v_, uint64_t, n / 2) + n;
  }
  void End() { pmr_vector_destroy(&v_); }

 private:
  pmr_mem_resource* r_;
  pmr_vector v_;
};

template <class Ops, class Res>
void RunV(Ops ops, Res& res, const ChildArgs& args) {
  const size_t n = args.sizes.v_elems;
  const long base = StatusKib("VmRSS");
  std::vector<double> push, destroy, total;
  uint64_t acc = 0;
  for (int r = -args.warmup; r < args.rounds; ++r) {
    const uint64_t salt = static_cast<uint64_t>(r) << 40;
    const uint64_t t0 = NowNs();
    ops.Begin();
    for (size_t i = 0; i < n; ++i) ops.Push(i ^ salt);
    const uint64_t t1 = NowNs();
    acc += ops.Check();
    ops.End();
    res.drop();
    const uint64_t t2 = NowNs();
    if (r >= 0) {
      push.push_back((t1 - t0) / static_cast<double>(n));
      destroy.push_back((t2 - t1) / static_cast<double>(n));
      total.push_back((t2 - t0) / static_cast<double>(n));
    }
  }
  Sink() += acc;
  EmitMetric("push_ns_per_op", push);
  EmitMetric("destroy_ns_per_op", destroy);
  EmitMetric("total_ns_per_op", total);
  EmitRssGrowth(base);
}

// std::unordered_map, std::pmr::unordered_map, absl::flat_hash_map.
template <class Map>
class StdMapOps {
 public:
  explicit StdMapOps(typename Map::allocator_type al) : al_(al) {}
  void Begin() { m_.emplace(al_); }
  bool Insert(uint64_t k, uint64_t v) { return m_->emplace(k, v).second; }
  const uint64_t* Find(uint64_t k) const {
    auto it = m_->find(k);
    return it == m_->end() ? nullptr : &it->second;
  }
  bool Erase(uint64_t k) { return m_->erase(k) != 0; }
  size_t Size() const { return m_->size(); }
  void End() { m_.reset(); }

 private:
  typename Map::allocator_type al_;
  std::optional<Map> m_;
};

class PmrMapOps {
 public:
  explicit PmrMapOps(pmr_mem_resource* r) : r_(r) {}
  void Begin() {
    if (!pmr_hashmap_init(&m_, sizeof(uint64_t), alignof(uint64_t),
                          sizeof(uint64_t), alignof(uint64_t), r_))
      Fail("pmr_hashmap_init failed");
  }
  bool Insert(uint64_t k, uint64_t v) {
    const pmr_hashmap_status st = pmr_hashmap_insert_u64(&m_, k, &v, nullptr);
    if (PMR_UNLIKELY(st < 0)) Fail("allocation failed");
    return st == PMR_HASHMAP_INSERTED;
  }
  const uint64_t* Find(uint64_t k) const {
    return static_cast<const uint64_t*>(pmr_hashmap_find_u64(&m_, k));
  }
  bool Erase(uint64_t k) { return pmr_hashmap_erase_u64(&m_, k); }
  size_t Size() const { return pmr_hashmap_size(&m_); }
  void End() { pmr_hashmap_destroy(&m_); }

 private:
  pmr_mem_resource* r_;
  pmr_hashmap m_;
};

// The timed rounds of H and H-str over a map (ops: Begin, Size, End), each
// phase n operations given by index: insert(i) (true when new), hit(i) and
// miss(i) (the value or nullptr), erase(i) (true when found); then the map
// destroyed and the resource dropped. Fails with `wrong` on a wrong answer.
template <class Ops, class Res, class Insert, class Hit, class Miss,
          class Erase>
void TimeMapRounds(Ops& ops, Res& res, const ChildArgs& args, size_t n,
                   const char* wrong, Insert insert, Hit hit, Miss miss,
                   Erase erase) {
  const long base = StatusKib("VmRSS");
  std::vector<double> ins_ns, hit_ns, miss_ns, erase_ns, total_ns;
  uint64_t acc = 0;
  for (int r = -args.warmup; r < args.rounds; ++r) {
    const uint64_t t0 = NowNs();
    ops.Begin();
    size_t inserted = 0;
    for (size_t i = 0; i < n; ++i) inserted += insert(i);
    const uint64_t t1 = NowNs();
    size_t found = 0;
    uint64_t sum = 0;
    for (size_t i = 0; i < n; ++i) {
      const uint64_t* v = hit(i);
      if (v != nullptr) {
        ++found;
        sum += *v;
      }
    }
    const uint64_t t2 = NowNs();
    size_t false_hits = 0;
    for (size_t i = 0; i < n; ++i) false_hits += miss(i) != nullptr;
    const uint64_t t3 = NowNs();
    const size_t size_before = ops.Size();
    size_t erased = 0;
    for (size_t i = 0; i < n; ++i) erased += erase(i);
    const size_t size_after = ops.Size();
    ops.End();
    res.drop();
    const uint64_t t4 = NowNs();
    if (inserted != n || found != n || false_hits != 0 || erased != n ||
        size_before != n || size_after != 0)
      Fail(wrong);
    acc += sum;
    if (r >= 0) {
      const double d = static_cast<double>(n);
      ins_ns.push_back((t1 - t0) / d);
      hit_ns.push_back((t2 - t1) / d);
      miss_ns.push_back((t3 - t2) / d);
      erase_ns.push_back((t4 - t3) / d);
      total_ns.push_back((t4 - t0) / (4 * d));
    }
  }
  Sink() += acc;
  EmitMetric("insert_ns_per_op", ins_ns);
  EmitMetric("hit_ns_per_op", hit_ns);
  EmitMetric("miss_ns_per_op", miss_ns);
  EmitMetric("erase_ns_per_op", erase_ns);
  EmitMetric("total_ns_per_op", total_ns);
  EmitRssGrowth(base);
}

template <class Ops, class Res>
void RunH(Ops ops, Res& res, const ChildArgs& args) {
  const size_t n = args.sizes.h_keys;
  Rng rng(0x4A54);
  // Present keys are even, missing ones odd: a miss can never hit.
  std::vector<uint64_t> keys(n), hit(n), miss(n), erase(n);
  for (size_t i = 0; i < n; ++i) {
    keys[i] = rng.Next() & ~uint64_t{1};
    miss[i] = rng.Next() | 1;
  }
  hit = keys;
  erase = keys;
  for (size_t i = n - 1; i > 0; --i) {
    std::swap(hit[i], hit[rng.Below(static_cast<uint32_t>(i + 1))]);
    std::swap(erase[i], erase[rng.Below(static_cast<uint32_t>(i + 1))]);
  }
  TimeMapRounds(
      ops, res, args, n, "hash map gave wrong answers",
      [&](size_t i) { return ops.Insert(keys[i], i); },
      [&](size_t i) { return ops.Find(hit[i]); },
      [&](size_t i) { return ops.Find(miss[i]); },
      [&](size_t i) { return ops.Erase(erase[i]); });
}

// std::string or std::pmr::string, kept in slots reserved (and touched)
// before timing.
template <class Str>
class StdStrOps {
 public:
  explicit StdStrOps(typename Str::allocator_type al) : al_(al) {}
  void Prepare(size_t n) {
    v_.reserve(n);
    v_.resize(n, Str(al_));  // touch the slots, so the baseline RSS holds them
    v_.clear();
  }
  Str& New(size_t) { return v_.emplace_back(al_); }
  void Append(Str& s, const char* p, size_t len) { s.append(p, len); }
  void Push(Str& s, char c) { s.push_back(c); }
  uint64_t Check(size_t i) const {
    return v_[i].size() + static_cast<unsigned char>(v_[i][v_[i].size() / 2]);
  }
  void DestroyAll() { v_.clear(); }

 private:
  typename Str::allocator_type al_;
  std::vector<Str> v_;
};

class PmrStrOps {
 public:
  explicit PmrStrOps(pmr_mem_resource* r) : r_(r) {}
  void Prepare(size_t n) { v_.assign(n, pmr_string{}); }
  pmr_string& New(size_t i) {
    pmr_string_init(&v_[i], r_);
    return v_[i];
  }
  void Append(pmr_string& s, const char* p, size_t len) {
    if (PMR_UNLIKELY(!pmr_string_append_bytes(&s, p, len)))
      Fail("allocation failed");
  }
  void Push(pmr_string& s, char c) {
    if (PMR_UNLIKELY(!pmr_string_push_back(&s, c))) Fail("allocation failed");
  }
  uint64_t Check(size_t i) const {
    const size_t len = pmr_string_length(&v_[i]);
    return len + static_cast<unsigned char>(pmr_string_c_str(&v_[i])[len / 2]);
  }
  void DestroyAll() {
    for (pmr_string& s : v_) pmr_string_destroy(&s);
  }

 private:
  pmr_mem_resource* r_;
  std::vector<pmr_string> v_;
};

template <class Ops, class Res>
void RunS(Ops ops, Res& res, const ChildArgs& args) {
  const size_t n = args.sizes.s_strings;
  Rng rng(0x5757);
  std::vector<uint8_t>
      piece;  // the lengths of the appends, string after string
  std::vector<uint32_t> first(n + 1);
  piece.reserve(n * (kSMinLen + kSMaxLen) / 2 / ((1 + kSPieceMax) / 2) + 64);
  for (size_t i = 0; i < n; ++i) {
    first[i] = static_cast<uint32_t>(piece.size());
    size_t left = rng.Between(kSMinLen, kSMaxLen);
    while (left > 0) {
      const size_t p = std::min<size_t>(left, rng.Between(1, kSPieceMax));
      piece.push_back(static_cast<uint8_t>(p));
      left -= p;
    }
  }
  first[n] = static_cast<uint32_t>(piece.size());
  static const char kText[] =
      "Content-Type: application/json; charset=utf-8 Accept-Encoding: gzip, br";
  static_assert(sizeof kText > 32 + kSPieceMax, "text too short");
  ops.Prepare(n);
  const long base = StatusKib("VmRSS");
  std::vector<double> build, destroy, total;
  uint64_t acc = 0;
  for (int r = -args.warmup; r < args.rounds; ++r) {
    const uint64_t t0 = NowNs();
    for (size_t i = 0; i < n; ++i) {
      auto& s = ops.New(i);
      for (uint32_t j = first[i]; j < first[i + 1]; ++j)
        ops.Append(s, kText + ((i + j) & 31), piece[j]);
    }
    const uint64_t t1 = NowNs();
    acc += ops.Check(n / 2) + ops.Check(n - 1);
    ops.DestroyAll();
    res.drop();
    const uint64_t t2 = NowNs();
    if (r >= 0) {
      const double d = static_cast<double>(n);
      build.push_back((t1 - t0) / d);
      destroy.push_back((t2 - t1) / d);
      total.push_back((t2 - t0) / d);
    }
  }
  Sink() += acc;
  EmitMetric("build_ns_per_op", build);
  EmitMetric("destroy_ns_per_op", destroy);
  EmitMetric("total_ns_per_op", total);
  EmitRssGrowth(base);
}

// ---- W's text -------------------------------------------------------------

// W's text: /usr/share/common-licenses/* then /usr/share/doc/*/copyright (each
// list in path order; links to files already read skipped), whole files until
// at least Sizes::w_bytes, split into words ([A-Za-z0-9_'] runs). Read once
// per process.
struct WTextInfo {
  std::string text;
  std::vector<std::pair<uint32_t, uint32_t>> words;  // (offset, length)
  size_t files = 0, bytes = 0, distinct = 0;
  std::string description;  // the files, sizes and counts, for the tables
};

// The regular files (after links) in the listed order, each read once.
std::vector<std::string> WFiles() {
  std::vector<std::string> lic, doc;
  auto list = [](const std::string& dir, const char* suffix,
                 std::vector<std::string>* out) {
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) return;
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      out->push_back(dir + "/" + name + suffix);
    }
    closedir(d);
    std::sort(out->begin(), out->end());
  };
  list("/usr/share/common-licenses", "", &lic);
  list("/usr/share/doc", "/copyright", &doc);
  lic.insert(lic.end(), doc.begin(), doc.end());
  return lic;
}

bool WordChar(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '\'';
}

const WTextInfo& WText(const Sizes& sizes) {
  static std::map<size_t, std::unique_ptr<WTextInfo>> cache;
  std::unique_ptr<WTextInfo>& slot = cache[sizes.w_bytes];
  if (slot) return *slot;
  slot = std::make_unique<WTextInfo>();
  WTextInfo& t = *slot;
  std::set<std::string> seen;
  size_t lic_files = 0;
  for (const std::string& path : WFiles()) {
    if (t.text.size() >= sizes.w_bytes) break;
    char real[PATH_MAX];
    if (realpath(path.c_str(), real) == nullptr) continue;
    if (!seen.insert(real).second) continue;
    std::ifstream in(real, std::ios::binary);
    if (!in) continue;
    std::ostringstream buf;
    buf << in.rdbuf();
    t.text += buf.str();
    t.text += '\n';
    ++t.files;
    if (path.rfind("/usr/share/common-licenses/", 0) == 0) ++lic_files;
  }
  t.bytes = t.text.size();
  std::unordered_set<std::string_view> distinct;
  for (size_t i = 0; i < t.text.size();) {
    if (!WordChar(static_cast<unsigned char>(t.text[i]))) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < t.text.size() && WordChar(static_cast<unsigned char>(t.text[j])))
      ++j;
    t.words.emplace_back(static_cast<uint32_t>(i),
                         static_cast<uint32_t>(j - i));
    distinct.insert(std::string_view(t.text).substr(i, j - i));
    i = j;
  }
  t.distinct = distinct.size();
  t.description = absl::StrFormat(
      "%d files (%d of /usr/share/common-licenses/*, then "
      "/usr/share/doc/*/copyright in path order, links to files already read "
      "skipped, whole files until %d bytes), %.1f MiB, %d words, %d distinct",
      t.files, lic_files, sizes.w_bytes,
      static_cast<double>(t.bytes) / (1 << 20), t.words.size(), t.distinct);
  return t;
}

// ---- H-str: string keys ----------------------------------------------------

// std::unordered_map<std::string, V>, its std::pmr form, absl::flat_hash_map:
// keys as the map's key type, built before timing.
template <class Map>
class StdStrMapOps {
 public:
  using Key = typename Map::key_type;
  explicit StdStrMapOps(typename Map::allocator_type al) : al_(al) {}
  void Prepare(const std::vector<std::string>& keys,
               const std::vector<std::string>& miss) {
    for (const std::string& k : keys) keys_.emplace_back(k.data(), k.size());
    for (const std::string& k : miss) miss_.emplace_back(k.data(), k.size());
  }
  void Begin() { m_.emplace(al_); }
  bool Insert(size_t i, uint64_t v) { return m_->emplace(keys_[i], v).second; }
  const uint64_t* Find(size_t i) const { return Get(keys_[i]); }
  const uint64_t* FindMiss(size_t i) const { return Get(miss_[i]); }
  bool Erase(size_t i) { return m_->erase(keys_[i]) != 0; }
  size_t Size() const { return m_->size(); }
  void End() { m_.reset(); }

 private:
  const uint64_t* Get(const Key& k) const {
    auto it = m_->find(k);
    return it == m_->end() ? nullptr : &it->second;
  }
  typename Map::allocator_type al_;
  std::vector<Key> keys_, miss_;
  std::optional<Map> m_;
};

// pmr_hashmap with pmr_string keys, by (pointer, length).
class PmrStrMapOps {
 public:
  explicit PmrStrMapOps(pmr_mem_resource* r) : r_(r) {}
  void Prepare(const std::vector<std::string>& keys,
               const std::vector<std::string>& miss) {
    keys_ = &keys;
    miss_ = &miss;
  }
  void Begin() {
    if (!pmr_hashmap_init_string(&m_, sizeof(uint64_t), alignof(uint64_t), r_))
      Fail("pmr_hashmap_init_string failed");
  }
  bool Insert(size_t i, uint64_t v) {
    const std::string& k = (*keys_)[i];
    const pmr_hashmap_status st =
        pmr_hashmap_insert_str(&m_, k.data(), k.size(), &v, nullptr);
    if (PMR_UNLIKELY(st < 0)) Fail("allocation failed");
    return st == PMR_HASHMAP_INSERTED;
  }
  const uint64_t* Find(size_t i) const { return Get((*keys_)[i]); }
  const uint64_t* FindMiss(size_t i) const { return Get((*miss_)[i]); }
  bool Erase(size_t i) {
    const std::string& k = (*keys_)[i];
    return pmr_hashmap_erase_str(&m_, k.data(), k.size(), nullptr);
  }
  size_t Size() const { return pmr_hashmap_size(&m_); }
  void End() { pmr_hashmap_destroy(&m_); }

 private:
  const uint64_t* Get(const std::string& k) const {
    return static_cast<const uint64_t*>(
        pmr_hashmap_find_str(&m_, k.data(), k.size()));
  }
  pmr_mem_resource* r_;
  const std::vector<std::string>* keys_ = nullptr;
  const std::vector<std::string>* miss_ = nullptr;
  pmr_hashmap m_;
};

// Random strings of kSMinLen..kSMaxLen chars from an alphabet of letters and
// digits; `miss` keys start with '#', never used by the present ones.
std::string RandomKey(Rng& rng, bool miss) {
  static const char kAlpha[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::string k(rng.Between(kSMinLen, kSMaxLen), ' ');
  for (char& c : k) c = kAlpha[rng.Below(sizeof kAlpha - 1)];
  if (miss) k[0] = '#';
  return k;
}

template <class Ops, class Res>
void RunHStr(Ops ops, Res& res, const ChildArgs& args) {
  const size_t n = args.sizes.hs_keys;
  Rng rng(0x4853);
  std::vector<std::string> keys, miss;
  {
    std::unordered_set<std::string> seen;
    while (keys.size() < n) {
      std::string k = RandomKey(rng, false);
      if (seen.insert(k).second) keys.push_back(std::move(k));
    }
    for (size_t i = 0; i < n; ++i) miss.push_back(RandomKey(rng, true));
  }
  std::vector<uint32_t> hit(n), erase(n);
  for (size_t i = 0; i < n; ++i) hit[i] = erase[i] = static_cast<uint32_t>(i);
  for (size_t i = n - 1; i > 0; --i) {
    std::swap(hit[i], hit[rng.Below(static_cast<uint32_t>(i + 1))]);
    std::swap(erase[i], erase[rng.Below(static_cast<uint32_t>(i + 1))]);
  }
  ops.Prepare(keys, miss);
  TimeMapRounds(
      ops, res, args, n, "string hash map gave wrong answers",
      [&](size_t i) { return ops.Insert(i, i); },
      [&](size_t i) { return ops.Find(hit[i]); },
      [&](size_t i) { return ops.FindMiss(i); },
      [&](size_t i) { return ops.Erase(erase[i]); });
}

// ---- W: word count
// -----------------------------------------------------------

template <class Map>
class StdWordOps {
 public:
  using Key = typename Map::key_type;
  explicit StdWordOps(typename Map::allocator_type al) : al_(al) {}
  void Begin() { m_.emplace(al_); }
  void Count(const char* p, size_t n) { ++(*m_)[Key(p, n, al_)]; }
  size_t Distinct() const { return m_->size(); }
  uint64_t CountOf(const char* p, size_t n) const {
    auto it = m_->find(Key(p, n, al_));
    return it == m_->end() ? 0 : it->second;
  }
  void End() { m_.reset(); }

 private:
  typename Map::allocator_type al_;
  std::optional<Map> m_;
};

class PmrWordOps {
 public:
  explicit PmrWordOps(pmr_mem_resource* r) : r_(r) {}
  void Begin() {
    if (!pmr_hashmap_init_string(&m_, sizeof(uint64_t), alignof(uint64_t), r_))
      Fail("pmr_hashmap_init_string failed");
  }
  void Count(const char* p, size_t n) {
    uint64_t* c =
        static_cast<uint64_t*>(pmr_hashmap_emplace_str(&m_, p, n, nullptr));
    if (PMR_UNLIKELY(c == nullptr)) Fail("allocation failed");
    ++*c;
  }
  size_t Distinct() const { return pmr_hashmap_size(&m_); }
  uint64_t CountOf(const char* p, size_t n) const {
    const uint64_t* c =
        static_cast<const uint64_t*>(pmr_hashmap_find_str(&m_, p, n));
    return c == nullptr ? 0 : *c;
  }
  void End() { pmr_hashmap_destroy(&m_); }

 private:
  pmr_mem_resource* r_;
  pmr_hashmap m_;
};

// glib as a C user writes it: NUL-terminated lookups, owned keys and counts.
class GlibWordOps {
 public:
  void Begin() {
    t_ = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  }
  void Count(const char* p, size_t n) {
    char* w = Terminated(p, n);
    guint64* c = static_cast<guint64*>(g_hash_table_lookup(t_, w));
    if (c == nullptr) {
      c = g_new0(guint64, 1);
      g_hash_table_insert(t_, g_strndup(p, n), c);
    }
    ++*c;
  }
  size_t Distinct() const { return g_hash_table_size(t_); }
  uint64_t CountOf(const char* p, size_t n) {
    const guint64* c =
        static_cast<const guint64*>(g_hash_table_lookup(t_, Terminated(p, n)));
    return c == nullptr ? 0 : *c;
  }
  void End() {
    g_hash_table_destroy(t_);
    t_ = nullptr;
  }

 private:
  char* Terminated(const char* p, size_t n) {
    if (n >= sizeof buf_) Fail("word too long for the buffer");
    memcpy(buf_, p, n);
    buf_[n] = '\0';
    return buf_;
  }
  GHashTable* t_ = nullptr;
  char buf_[4096];
};

template <class Ops, class Res>
void RunW(Ops ops, Res& res, const ChildArgs& args) {
  const WTextInfo& t = WText(args.sizes);
  if (t.words.empty()) Fail("W: no text found under /usr/share");
  const char* text = t.text.data();
  const size_t n = t.words.size();
  const auto& first = t.words[0];
  const long base = StatusKib("VmRSS");
  std::vector<double> count, destroy, total;
  uint64_t acc = 0;
  for (int r = -args.warmup; r < args.rounds; ++r) {
    const uint64_t t0 = NowNs();
    ops.Begin();
    for (const auto& w : t.words) ops.Count(text + w.first, w.second);
    const uint64_t t1 = NowNs();
    if (ops.Distinct() != t.distinct) Fail("W: wrong number of words");
    acc += ops.CountOf(text + first.first, first.second);
    ops.End();
    res.drop();
    const uint64_t t2 = NowNs();
    if (r >= 0) {
      const double d = static_cast<double>(n);
      count.push_back((t1 - t0) / d);
      destroy.push_back((t2 - t1) / d);
      total.push_back((t2 - t0) / d);
    }
  }
  Sink() += acc;
  EmitMetric("count_ns_per_op", count);
  EmitMetric("destroy_ns_per_op", destroy);
  EmitMetric("total_ns_per_op", total);
  EmitRssGrowth(base);
}

// ---- S-char: strings one char at a time
// ---------------------------------------

template <class Ops, class Res>
void RunSChar(Ops ops, Res& res, const ChildArgs& args) {
  const size_t n = args.sizes.s_strings;
  Rng rng(0x5757);
  std::vector<uint8_t> len(n);
  for (size_t i = 0; i < n; ++i)
    len[i] = static_cast<uint8_t>(rng.Between(kSMinLen, kSMaxLen));
  static const char kText[] =
      "Content-Type: application/json; charset=utf-8 Accept-Encoding: gzip, "
      "br, deflate User-Agent: curl/7.88.1 Accept: */*";
  static_assert(sizeof kText > 32 + kSMaxLen, "text too short");
  ops.Prepare(n);
  const long base = StatusKib("VmRSS");
  std::vector<double> build, destroy, total;
  uint64_t acc = 0;
  for (int r = -args.warmup; r < args.rounds; ++r) {
    const uint64_t t0 = NowNs();
    for (size_t i = 0; i < n; ++i) {
      auto& s = ops.New(i);
      const char* src = kText + (i & 31);
      for (size_t j = 0; j < len[i]; ++j) ops.Push(s, src[j]);
    }
    const uint64_t t1 = NowNs();
    acc += ops.Check(n / 2) + ops.Check(n - 1);
    ops.DestroyAll();
    res.drop();
    const uint64_t t2 = NowNs();
    if (r >= 0) {
      const double d = static_cast<double>(n);
      build.push_back((t1 - t0) / d);
      destroy.push_back((t2 - t1) / d);
      total.push_back((t2 - t0) / d);
    }
  }
  Sink() += acc;
  EmitMetric("build_ns_per_op", build);
  EmitMetric("destroy_ns_per_op", destroy);
  EmitMetric("total_ns_per_op", total);
  EmitRssGrowth(base);
}

// Which container a row measures, by its adapter: the std container with
// std::allocator over malloc, the std::pmr one over a std resource, the pmr-c
// one over a pmr-c resource, absl::flat_hash_map for its own row.
inline StdVecOps<std::vector<uint64_t>> VecOps(MallocAdapter&) {
  return StdVecOps<std::vector<uint64_t>>({});
}
inline StdVecOps<std::pmr::vector<uint64_t>> VecOps(StdAdapter& r) {
  return StdVecOps<std::pmr::vector<uint64_t>>(r.resource());
}
inline PmrVecOps VecOps(PmrAdapter& r) { return PmrVecOps(r.resource()); }

inline StdMapOps<std::unordered_map<uint64_t, uint64_t>> MapOps(
    MallocAdapter&) {
  return StdMapOps<std::unordered_map<uint64_t, uint64_t>>({});
}
inline StdMapOps<absl::flat_hash_map<uint64_t, uint64_t>> MapOps(
    AbslMapAdapter&) {
  return StdMapOps<absl::flat_hash_map<uint64_t, uint64_t>>({});
}
inline StdMapOps<std::pmr::unordered_map<uint64_t, uint64_t>> MapOps(
    StdAdapter& r) {
  return StdMapOps<std::pmr::unordered_map<uint64_t, uint64_t>>(r.resource());
}
inline PmrMapOps MapOps(PmrAdapter& r) { return PmrMapOps(r.resource()); }

inline StdStrOps<std::string> StrOps(MallocAdapter&) {
  return StdStrOps<std::string>({});
}
inline StdStrOps<std::pmr::string> StrOps(StdAdapter& r) {
  return StdStrOps<std::pmr::string>(r.resource());
}
inline PmrStrOps StrOps(PmrAdapter& r) { return PmrStrOps(r.resource()); }

inline StdStrMapOps<std::unordered_map<std::string, uint64_t>> StrMapOps(
    MallocAdapter&) {
  return StdStrMapOps<std::unordered_map<std::string, uint64_t>>({});
}
inline StdStrMapOps<absl::flat_hash_map<std::string, uint64_t>> StrMapOps(
    AbslMapAdapter&) {
  return StdStrMapOps<absl::flat_hash_map<std::string, uint64_t>>({});
}
inline StdStrMapOps<std::pmr::unordered_map<std::pmr::string, uint64_t>>
StrMapOps(StdAdapter& r) {
  return StdStrMapOps<std::pmr::unordered_map<std::pmr::string, uint64_t>>(
      r.resource());
}
inline PmrStrMapOps StrMapOps(PmrAdapter& r) {
  return PmrStrMapOps(r.resource());
}

inline StdWordOps<std::unordered_map<std::string, uint64_t>> WordOps(
    MallocAdapter&) {
  return StdWordOps<std::unordered_map<std::string, uint64_t>>({});
}
inline GlibWordOps WordOps(GlibMapAdapter&) { return GlibWordOps(); }
inline StdWordOps<std::pmr::unordered_map<std::pmr::string, uint64_t>> WordOps(
    StdAdapter& r) {
  return StdWordOps<std::pmr::unordered_map<std::pmr::string, uint64_t>>(
      r.resource());
}
inline PmrWordOps WordOps(PmrAdapter& r) { return PmrWordOps(r.resource()); }

// Adapters with container rows (the others are never applicable there).
template <class A>
constexpr bool kContainerAdapter =
    std::is_base_of_v<MallocAdapter, A> || std::is_same_v<A, StdAdapter> ||
    std::is_same_v<A, PmrAdapter>;

// Calls body(make) with make() returning a fresh instance of a's adapter, its
// concrete type known to body (so the workload's calls stay inline).
template <class Body>
void WithAdapter(const WorkloadInfo& w, const AllocatorInfo& a, Body body) {
  const MakeCtx ctx{w.mono_first_chunk};
  std::visit([&](auto fn) { body([fn, ctx] { return fn(ctx); }); },
             a.make->make);
}

// The same for the container workloads: body(resource adapter).
template <class Body>
void WithResource(const WorkloadInfo& w, const AllocatorInfo& a, Body body) {
  WithAdapter(w, a, [&](auto make) {
    using A = AdapterOf<decltype(make)>;
    if constexpr (kContainerAdapter<A>) {
      auto res = make();
      body(*res);
    } else {
      Fail("no container over this allocator");
    }
  });
}

// ---- R: a real client, the Lua 5.4 interpreter -----------------------------
// Every allocation of a Lua state goes through the allocator: pmr-c resources
// through examples/lua's pmr_lua_alloc (sized frees, reallocs through
// pmr_reallocate, in place where the resource can), malloc and the drop-ins
// through realloc/free (what Lua's own allocator does), the others through
// their allocate + copy + deallocate.
const char kLuaScript[] = R"lua(
local n = N
-- Binary trees: many small tables built and dropped, one long-lived tree.
local function make(d)
  if d == 0 then return {} end
  d = d - 1
  return { make(d), make(d) }
end
local function check(t)
  if t[1] then return 1 + check(t[1]) + check(t[2]) end
  return 1
end
local long_lived = make(12)
local nodes = 0
for _ = 1, n do nodes = nodes + check(make(11)) end
-- String building: formatted pieces joined, strings grown by concatenation.
local parts = {}
for i = 1, 2000 * n do
  parts[#parts + 1] = string.format("%d:%s", i, string.rep("x", i % 23))
end
local joined = table.concat(parts, ",")
local grown = ""
for i = 1, 400 * n do grown = grown .. string.char(65 + i % 26) end
-- Table churn: string-keyed maps filled and half emptied, arrays grown
-- (reallocs) and shrunk, records of mixed sizes.
local map, live = {}, 0
for round = 1, n do
  for i = 1, 3000 do map["k" .. (i + round * 7)] = { round, i, tostring(i) } end
  for i = 1, 3000, 2 do map["k" .. (i + round * 7)] = nil end
end
for _ in pairs(map) do live = live + 1 end
local arrays = 0
for round = 1, n do
  local a = {}
  for i = 1, 5000 do a[i] = i * round end
  arrays = arrays + #a
end
return string.format("%d %d %d %d %d %d", nodes, #joined, #grown, live,
                     arrays, check(long_lived))
)lua";

struct LuaUd {
  void* adapter;
  void* (*alloc)(void* adapter, size_t n);
  void (*dealloc)(void* adapter, void* p, size_t n);
};

extern "C" void* LuaMalloc(void*, void* ptr, size_t, size_t nsize) {
  if (nsize == 0) {
    std::free(ptr);
    return nullptr;
  }
  return std::realloc(ptr, nsize);
}

extern "C" void* LuaGeneric(void* ud, void* ptr, size_t osize, size_t nsize) {
  auto* u = static_cast<LuaUd*>(ud);
  if (nsize == 0) {
    if (ptr != nullptr) u->dealloc(u->adapter, ptr, osize);
    return nullptr;
  }
  void* p = u->alloc(u->adapter, nsize);
  if (p != nullptr && ptr != nullptr) {
    std::memcpy(p, ptr, std::min(osize, nsize));
    u->dealloc(u->adapter, ptr, osize);
  }
  return p;
}

template <class Make>
void RunR(Make make, const ChildArgs& args) {
  using A = AdapterOf<Make>;
  auto a = make();
  LuaUd ud{
      a.get(), [](void* x, size_t n) { return static_cast<A*>(x)->alloc(n); },
      [](void* x, void* p, size_t n) { static_cast<A*>(x)->dealloc(p, n); }};
  lua_Alloc fn = LuaGeneric;
  void* fn_ud = &ud;
  if constexpr (std::is_same_v<A, PmrAdapter>) {
    fn = pmr_lua_alloc;
    fn_ud = a->resource();
  } else if constexpr (std::is_same_v<A, MallocAdapter>) {
    fn = LuaMalloc;
    fn_ud = nullptr;
  }
  const std::string script =
      "local N = " + std::to_string(args.sizes.r_scale) + "\n" + kLuaScript;
  const long base = StatusKib("VmRSS");
  std::vector<double> ms;
  std::string first;
  for (int r = -args.warmup; r < args.rounds; ++r) {
    const uint64_t t0 = NowNs();
    lua_State* L = lua_newstate(fn, fn_ud);
    if (L == nullptr) Fail("lua_newstate failed");
    luaL_openlibs(L);
    if (luaL_loadstring(L, script.c_str()) != LUA_OK ||
        lua_pcall(L, 0, 1, 0) != LUA_OK)
      Fail(lua_tostring(L, -1));
    std::string result = lua_tostring(L, -1);
    lua_close(L);
    const uint64_t t1 = NowNs();
    a->drop();
    if (first.empty()) first = result;
    if (result != first) Fail("lua: results differ between rounds");
    if (r >= 0) ms.push_back((t1 - t0) / 1e6);
  }
  EmitMetric("ms_per_run", ms);
  EmitRssGrowth(base);
}

// ---- Q: a real client, SQLite on an in-memory database ---------------------
// SQLite's allocator hooks are malloc-shaped (xFree and xRealloc get no
// size, xSize asks for it): pmr-c resources through pmr_sqlite_use (a
// pmr_malloc_adapter: no header over the pools and the thread cache), malloc
// and the drop-ins through hooks that call malloc, free, realloc and
// malloc_usable_size (what SQLite's own mem1.c does where
// malloc_usable_size exists, so the drop-ins take part with their own
// sizes).
extern "C" void* QMalloc(int n) { return std::malloc(static_cast<size_t>(n)); }
extern "C" void QFree(void* p) { std::free(p); }
extern "C" void* QRealloc(void* p, int n) {
  return std::realloc(p, static_cast<size_t>(n));
}
extern "C" int QSize(void* p) {
  return p == nullptr ? 0 : static_cast<int>(malloc_usable_size(p));
}
extern "C" int QRoundup(int n) { return (n + 7) & ~7; }
extern "C" int QInit(void*) { return SQLITE_OK; }
extern "C" void QShutdown(void*) {}

template <class Make>
void RunQ(Make make, const ChildArgs& args) {
  using A = AdapterOf<Make>;
  auto a = make();
  sqlite3_shutdown();
  if constexpr (std::is_same_v<A, PmrAdapter>) {
    if (pmr_sqlite_use(a->resource()) != SQLITE_OK)
      Fail("sqlite: SQLITE_CONFIG_MALLOC refused");
  } else if constexpr (std::is_same_v<A, MallocAdapter>) {
    static const sqlite3_mem_methods kMalloc = {
        QMalloc, QFree, QRealloc, QSize, QRoundup, QInit, QShutdown, nullptr};
    if (sqlite3_config(SQLITE_CONFIG_MALLOC, &kMalloc) != SQLITE_OK)
      Fail("sqlite: SQLITE_CONFIG_MALLOC refused");
  } else {
    Fail("sqlite: no malloc-shaped hooks over this allocator");
  }
  const long base = StatusKib("VmRSS");
  std::vector<double> ms;
  uint64_t first = 0;
  for (int r = -args.warmup; r < args.rounds; ++r) {
    const uint64_t t0 = NowNs();
    uint64_t digest = 0;
    if (sqlite3_initialize() != SQLITE_OK) Fail("sqlite3_initialize failed");
    int rc = sqlite_workload_run(static_cast<int>(args.sizes.q_rows), &digest);
    sqlite3_shutdown();
    const uint64_t t1 = NowNs();
    if (rc != SQLITE_OK) Fail(sqlite3_errstr(rc));
    a->drop();
    if (first == 0) first = digest;
    if (digest != first) Fail("sqlite: results differ between rounds");
    Sink() += digest;
    if (r >= 0) ms.push_back((t1 - t0) / 1e6);
  }
  EmitMetric("ms_per_run", ms);
  EmitRssGrowth(base);
}

const std::vector<MetricInfo> kAllocFree = {{"alloc_ns_per_op", "ns"},
                                            {"free_ns_per_op", "ns"},
                                            {"total_ns_per_op", "ns"},
                                            {"peak_rss_growth_kib", "KiB"}};

// The alloc/free workloads' common shape: A, B*, C.
WorkloadInfo AllocFree(const char* id, const char* title) {
  WorkloadInfo w;
  w.id = id;
  w.title = title;
  w.metrics = kAllocFree;
  w.primary = "total_ns_per_op";
  w.unit_label = "ns per block (alloc + free)";
  return w;
}

WorkloadInfo WorkloadA() {
  WorkloadInfo w = AllocFree(
      "A", "one thread: allocate 64 B blocks (writing each), then free all");
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "%d x %d B, alloc (incl. 64 B memset) and free timed separately; ns "
        "per block",
        s.a_blocks, kBlock);
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat("{\"blocks\":%d,\"block_bytes\":%d,\"threads\":1}",
                           s.a_blocks, kBlock);
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithAdapter(w, a, [&](auto make) { RunA(make, args); });
  };
  return w;
}

WorkloadInfo WorkloadB(int threads) {
  static const char* const kIds[] = {"B1", "B2", "B8"};
  static const char* const kTitles[] = {
      "1 thread: allocate 64 B blocks (writing each), then free them",
      "2 threads at once: each allocates 64 B blocks (writing each), then "
      "frees them",
      "8 threads at once: each allocates 64 B blocks (writing each), then "
      "frees them"};
  const int i = threads == 1 ? 0 : threads == 2 ? 1 : 2;
  WorkloadInfo w = AllocFree(kIds[i], kTitles[i]);
  w.threads = threads;
  w.instances = true;
  w.params = [](const WorkloadInfo& w, const Sizes& s) {
    return absl::StrFormat(
        "%d thread(s) x %d x %d B each; wall time of each phase / all blocks "
        "of all threads; "
        "thread-safe resources shared, others one per thread",
        w.threads, s.b_blocks, kBlock);
  };
  w.params_json = [](const WorkloadInfo& w, const Sizes& s) {
    return absl::StrFormat(
        "{\"blocks_per_thread\":%d,\"block_bytes\":%d,\"threads\":%d}",
        s.b_blocks, kBlock, w.threads);
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithAdapter(w, a,
                [&](auto make) { RunB(make, args, w.threads, a.thread_safe); });
  };
  return w;
}

WorkloadInfo WorkloadP() {
  WorkloadInfo w;
  w.id = "P";
  w.title =
      "short-lived pools: 2 threads, each makes its own instance per round, "
      "allocates 64 B blocks (writing each), frees them, destroys it";
  w.threads = 2;
  w.metrics = {{"total_ns_per_op", "ns"},
               {"kept_ns_per_op", "ns"},
               {"minor_faults_per_round", "faults"},
               {"peak_rss_growth_kib", "KiB"}};
  w.primary = "total_ns_per_op";
  w.unit_label = "ns per block (make + alloc + free + destroy)";
  w.params = [](const WorkloadInfo& w, const Sizes& s) {
    return absl::StrFormat(
        "%d threads, each round: make an instance, %d x %d B, free, destroy; "
        "wall time per block of the round (threads started and joined "
        "inside); kept = the same with instances made once and kept",
        w.threads, s.b_blocks, kBlock);
  };
  w.params_json = [](const WorkloadInfo& w, const Sizes& s) {
    return absl::StrFormat(
        "{\"blocks_per_thread\":%d,\"block_bytes\":%d,\"threads\":%d}",
        s.b_blocks, kBlock, w.threads);
  };
  w.notes = [](const WorkloadInfo&, const Sizes&) -> std::string {
    return "   minor_faults_per_round: page faults of a round of instances "
           "made per round (memory the process had to fault in)\n";
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithAdapter(w, a, [&](auto make) { RunP(make, args, w.threads); });
  };
  return w;
}

WorkloadInfo WorkloadC() {
  WorkloadInfo w = AllocFree(
      "C",
      "one thread: mixed sizes 64/128/256/512 B (4:3:2:1), freed in shuffled "
      "order");
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "%d allocations of 64/128/256/512 B drawn 4:3:2:1 (16 B written each), "
        "freed in a "
        "shuffled order; ns per block",
        s.c_allocs);
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "{\"allocations\":%d,\"sizes\":[64,128,256,512],\"ratio\":[4,3,2,1],"
        "\"threads\":1}",
        s.c_allocs);
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithAdapter(w, a, [&](auto make) { RunC(make, args); });
  };
  return w;
}

WorkloadInfo WorkloadD() {
  WorkloadInfo w;
  w.id = "D";
  w.title =
      "peak resident memory of workload A, each allocator in a fresh process";
  w.memory = true;
  w.metrics = {{"peak_rss_kib", "KiB"}, {"retained_after_free_kib", "KiB"}};
  w.primary = "peak_rss_kib";
  w.unit_label = "peak resident MiB";
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "%d x %d B = %.1f MiB payload; peak = VmHWM - VmRSS before allocating; "
        "retained = VmRSS after freeing all - VmRSS before",
        s.a_blocks, kBlock,
        static_cast<double>(s.a_blocks * kBlock) / (1 << 20));
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat("{\"blocks\":%d,\"block_bytes\":%d,\"threads\":1}",
                           s.a_blocks, kBlock);
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithAdapter(w, a, [&](auto make) { RunD(make, args); });
  };
  return w;
}

WorkloadInfo WorkloadE() {
  WorkloadInfo w;
  w.id = "E";
  w.title =
      "churn: random live block freed, random new size allocated, per step";
  w.metrics = {{"ns_per_step", "ns"}, {"peak_rss_growth_kib", "KiB"}};
  w.primary = "ns_per_step";
  w.unit_label = "ns per step (free + alloc)";
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "%d live blocks of %d..%d B; %d steps of (free a random live block, "
        "allocate a random "
        "size); sequence precomputed; ns per step (1 free + 1 alloc)",
        s.e_live, kEMin, kEMax, s.e_steps);
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "{\"live_blocks\":%d,\"steps\":%d,\"min_bytes\":%d,\"max_bytes\":%d,"
        "\"threads\":1}",
        s.e_live, s.e_steps, kEMin, kEMax);
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithAdapter(w, a, [&](auto make) { RunE(make, args); });
  };
  return w;
}

WorkloadInfo WorkloadF() {
  WorkloadInfo w;
  w.id = "F";
  w.title = "cross-thread: producer allocates, SPSC ring, consumer frees";
  w.threads = 2;
  w.thread_safe_only = true;
  w.instances = true;
  w.metrics = {{"ns_per_block", "ns"}, {"peak_rss_growth_kib", "KiB"}};
  w.primary = "ns_per_block";
  w.unit_label = "ns per block (alloc + hand-over + free)";
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "%d x %d B through a lock-free SPSC ring of %d slots; ns per block, "
        "wall time "
        "(alloc + hand-over + free)",
        s.f_blocks, kBlock, kFRing);
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "{\"blocks\":%d,\"block_bytes\":%d,\"ring_slots\":%d,\"threads\":2}",
        s.f_blocks, kBlock, kFRing);
  };
  w.notes = [](const WorkloadInfo&, const Sizes&) -> std::string {
    return "   F needs both cores: with other load on the machine, "
           "hand-over stalls dominate\n";
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithAdapter(w, a, [&](auto make) { RunF(make, args); });
  };
  return w;
}

WorkloadInfo WorkloadG() {
  WorkloadInfo w;
  w.id = "G";
  w.title =
      "request-scoped arena (gateway): ~50 blocks + a growing string per "
      "request, dropped at the end";
  w.metrics = {{"ns_per_request", "ns"}, {"peak_rss_growth_kib", "KiB"}};
  w.primary = "ns_per_request";
  w.unit_label = "ns per request";
  w.mono_first_chunk = kGMonoChunk;
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "%d requests; each %d..%d blocks of %d..%d B + one string grown by "
        "1..%d chars after each block "
        "(capacity from %d B, doubling: allocate new, memcpy, deallocate old); "
        "end of request: "
        "bump resources drop all at once (reset/release), others free each "
        "block; monotonic first "
        "chunk %d KiB; ns per request",
        s.g_requests, kGMinAllocs, kGMaxAllocs, kGMin, kGMax, kGPieceMax,
        kGStringStart, kGMonoChunk / 1024);
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "{\"requests\":%d,\"min_allocs\":%d,\"max_allocs\":%d,\"min_bytes\":%d,"
        "\"max_bytes\":%d,"
        "\"string_piece_max\":%d,\"string_start_capacity\":%d,\"monotonic_"
        "first_chunk\":%d,\"threads\":1}",
        s.g_requests, kGMinAllocs, kGMaxAllocs, kGMin, kGMax, kGPieceMax,
        kGStringStart, kGMonoChunk);
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithAdapter(w, a, [&](auto make) { RunG(make, args); });
  };
  return w;
}

// The container workloads' common shape: V, H, S.
WorkloadInfo Container(const char* id, const char* title, const char* pmr,
                       const char* std_type) {
  WorkloadInfo w;
  w.id = id;
  w.title = title;
  w.container = true;
  w.pmr_container = pmr;
  w.std_container = std_type;
  w.primary = "total_ns_per_op";
  return w;
}

WorkloadInfo WorkloadV() {
  WorkloadInfo w = Container(
      "V",
      "container: vector of uint64_t, push_back from empty (no reserve), then "
      "destroy",
      "pmr_vector", "vector");
  w.metrics = {{"push_ns_per_op", "ns"},
               {"destroy_ns_per_op", "ns"},
               {"total_ns_per_op", "ns"},
               {"peak_rss_growth_kib", "KiB"}};
  w.unit_label = "ns per element (push_back + destroy)";
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "%d x uint64_t appended one by one to an empty vector (no reserve; "
        "every type here doubles its "
        "capacity), then the vector destroyed (bump resources: + "
        "reset/release); ns per element. "
        "pmr_vector: pmr_vector_push_back (inline while there is capacity), "
        "grows in place through "
        "pmr_try_resize where the resource allows it (monotonic: while its "
        "chunk has room)",
        s.v_elems);
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "{\"elements\":%d,\"element_bytes\":8,\"reserve\":false,\"threads\":1}",
        s.v_elems);
  };
  w.notes = [](const WorkloadInfo&, const Sizes&) -> std::string {
    return "   V is mostly page faults: a vector this large gets fresh "
           "pages in every round (glibc "
           "mmaps blocks over 32 MiB and munmaps them on free)\n   "
           "unless its allocator keeps them "
           "(tcmalloc; pmr_monotonic's reset keeps its chunks); "
           "pmr_monotonic_release vs std_monotonic "
           "is like for like\n";
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithResource(w, a, [&](auto& res) { RunV(VecOps(res), res, args); });
  };
  return w;
}

// H and H-str: the metrics of TimeMapRounds, compared with absl's map too.
WorkloadInfo HashMapContainer(const char* id, const char* title) {
  WorkloadInfo w = Container(id, title, "pmr_hashmap", "unordered_map");
  w.metrics = {{"insert_ns_per_op", "ns"}, {"hit_ns_per_op", "ns"},
               {"miss_ns_per_op", "ns"},   {"erase_ns_per_op", "ns"},
               {"total_ns_per_op", "ns"},  {"peak_rss_growth_kib", "KiB"}};
  w.unit_label = "ns per operation (insert, hit, miss, erase: round / 4n)";
  w.extra_ref = "absl_flat_hash_map";
  return w;
}

// The note under H's and H-str's phase columns, for n keys.
std::string HashMapPhaseNote(size_t n) {
  return absl::StrFormat(
      "   insert, hit, miss, erase: ns per operation of each phase "
      "(erase includes destroying the empty map and reset/release);\n"
      "   total = whole round / %d operations; each column is its own "
      "median\n",
      4 * n);
}

WorkloadInfo WorkloadH() {
  WorkloadInfo w = HashMapContainer(
      "H",
      "container: hash map uint64_t -> uint64_t: insert random keys, lookups "
      "that hit and miss, erase all");
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "%d random uint64_t keys (precomputed, fixed seed) inserted into an "
        "empty map (no reserve); %d lookups "
        "that hit (shuffled order); %d that miss; %d erases (another shuffled "
        "order) and destroy (bump "
        "resources: + reset/release). Each phase timed on its own, ns per "
        "operation; total = the whole round "
        "/ %d operations. pmr_hashmap inserts, looks up and erases with the "
        "inline pmr_hashmap_insert_u64, _find_u64 and _erase_u64",
        s.h_keys, s.h_keys, s.h_keys, s.h_keys, 4 * s.h_keys);
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "{\"keys\":%d,\"hit_lookups\":%d,\"miss_lookups\":%d,\"erases\":%d,"
        "\"key_bytes\":8,\"value_bytes\":8,"
        "\"reserve\":false,\"threads\":1}",
        s.h_keys, s.h_keys, s.h_keys, s.h_keys);
  };
  w.phase_note = [](const WorkloadInfo&, const Sizes& s) {
    return HashMapPhaseNote(s.h_keys);
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithResource(w, a, [&](auto& res) { RunH(MapOps(res), res, args); });
  };
  return w;
}

WorkloadInfo WorkloadS() {
  WorkloadInfo w = Container(
      "S",
      "container: strings of 8-64 chars built by appends, all kept alive, "
      "then all destroyed",
      "pmr_string", "string");
  w.metrics = {{"build_ns_per_op", "ns"},
               {"destroy_ns_per_op", "ns"},
               {"total_ns_per_op", "ns"},
               {"peak_rss_growth_kib", "KiB"}};
  w.unit_label = "ns per string (build + destroy)";
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "%d strings of %d..%d chars (uniform), each built from empty by "
        "appending %d..%d-byte pieces (the last "
        "cut to the length); std::string keeps 15 chars inline, pmr_string 23, "
        "so most strings allocate and "
        "many grow twice. All are kept alive (slots reserved before timing), "
        "then all destroyed (bump "
        "resources: + reset/release); ns per string",
        s.s_strings, kSMinLen, kSMaxLen, 1, kSPieceMax);
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "{\"strings\":%d,\"min_length\":%d,\"max_length\":%d,\"piece_min\":1,"
        "\"piece_max\":%d,"
        "\"kept_alive\":true,\"threads\":1}",
        s.s_strings, kSMinLen, kSMaxLen, kSPieceMax);
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithResource(w, a, [&](auto& res) { RunS(StrOps(res), res, args); });
  };
  return w;
}

WorkloadInfo WorkloadHStr() {
  WorkloadInfo w = HashMapContainer(
      "H-str",
      "container: hash map string -> uint64_t: insert 8-64-char keys, lookups "
      "that hit and miss, erase all");
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "%d random keys of %d..%d chars (letters and digits; precomputed, "
        "fixed seed) inserted into an empty map (no reserve); %d lookups that "
        "hit (shuffled order); %d that miss (keys of the same lengths that "
        "are never present); %d erases (another shuffled order) and destroy. "
        "Each phase timed on its own, ns per operation; total = the whole "
        "round / %d operations. std maps: std::unordered_map<std::string, "
        "uint64_t>, std::pmr::unordered_map<std::pmr::string, uint64_t>, "
        "absl::flat_hash_map<std::string, uint64_t>, keys of the map's key "
        "type built before timing; pmr_hashmap (pmr_string keys) takes them "
        "as (pointer, length): pmr_hashmap_insert_str, _find_str, _erase_str",
        s.hs_keys, kSMinLen, kSMaxLen, s.hs_keys, s.hs_keys, s.hs_keys,
        4 * s.hs_keys);
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "{\"keys\":%d,\"hit_lookups\":%d,\"miss_lookups\":%d,\"erases\":%d,"
        "\"min_length\":%d,\"max_length\":%d,\"value_bytes\":8,"
        "\"reserve\":false,\"threads\":1}",
        s.hs_keys, s.hs_keys, s.hs_keys, s.hs_keys, kSMinLen, kSMaxLen);
  };
  w.phase_note = [](const WorkloadInfo&, const Sizes& s) {
    return HashMapPhaseNote(s.hs_keys);
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithResource(w, a, [&](auto& res) { RunHStr(StrMapOps(res), res, args); });
  };
  return w;
}

WorkloadInfo WorkloadW() {
  WorkloadInfo w = Container(
      "W",
      "container: word count (string -> count) over Debian's license and "
      "copyright texts",
      "pmr_hashmap", "unordered_map");
  w.metrics = {{"count_ns_per_op", "ns"},
               {"destroy_ns_per_op", "ns"},
               {"total_ns_per_op", "ns"},
               {"peak_rss_growth_kib", "KiB"}};
  w.unit_label = "ns per word (count + destroy)";
  w.extra_ref = "glib_ghashtable";
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "%s; split into words (maximal runs of ASCII letters, digits, '_' and "
        "apostrophes, case kept) before timing; every word counted in one map "
        "from empty (no reserve), then the map destroyed; ns per word. std: "
        "++m[std::string(p, n)] (std::pmr::string over the map's resource); "
        "pmr_hashmap: ++*pmr_hashmap_emplace_str(m, p, n); glib: the word "
        "copied with a NUL into a buffer, g_hash_table_lookup, and "
        "g_hash_table_insert(g_strndup(word), g_new0(guint64, 1)) when new",
        WText(s).description);
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    const WTextInfo& t = WText(s);
    return absl::StrFormat(
        "{\"files\":%d,\"bytes\":%d,\"words\":%d,\"distinct\":%d,"
        "\"threads\":1}",
        t.files, t.bytes, t.words.size(), t.distinct);
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithResource(w, a, [&](auto& res) { RunW(WordOps(res), res, args); });
  };
  return w;
}

WorkloadInfo WorkloadSChar() {
  WorkloadInfo w = Container(
      "S-char",
      "container: strings of 8-64 chars built one char at a time, all kept "
      "alive, then all destroyed",
      "pmr_string", "string");
  w.metrics = {{"build_ns_per_op", "ns"},
               {"destroy_ns_per_op", "ns"},
               {"total_ns_per_op", "ns"},
               {"peak_rss_growth_kib", "KiB"}};
  w.unit_label = "ns per string (build + destroy)";
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "%d strings of %d..%d chars (uniform, as in S), each built from empty "
        "one char at a time (std::string::push_back, pmr_string_push_back); "
        "all kept alive, then all destroyed (bump resources: + "
        "reset/release); ns per string",
        s.s_strings, kSMinLen, kSMaxLen);
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "{\"strings\":%d,\"min_length\":%d,\"max_length\":%d,"
        "\"piece_min\":1,\"piece_max\":1,\"kept_alive\":true,"
        "\"threads\":1}",
        s.s_strings, kSMinLen, kSMaxLen);
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithResource(w, a, [&](auto& res) { RunSChar(StrOps(res), res, args); });
  };
  return w;
}

}  // namespace

WorkloadInfo WorkloadR() {
  WorkloadInfo w;
  w.id = "R";
  w.title =
      "a real client: the Lua 5.4 interpreter running allocation-heavy Lua";
  w.metrics = {{"ms_per_run", "ms"}, {"peak_rss_growth_kib", "KiB"}};
  w.primary = "ms_per_run";
  w.unit_label = "ms per script run (new state, script, lua_close)";
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "Lua 5.4 (Debian's liblua5.4), a new state per run with the standard "
        "libraries; a script of binary trees, string building and table churn "
        "at size factor %d; pmr-c through pmr_lua_alloc (sized, "
        "pmr_reallocate), malloc rows through realloc/free",
        s.r_scale);
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat("{\"size_factor\":%d,\"threads\":1}", s.r_scale);
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithAdapter(w, a, [&](auto make) { RunR(make, args); });
  };
  return w;
}

WorkloadInfo WorkloadQ() {
  WorkloadInfo w;
  w.id = "Q";
  w.title = "a real client: SQLite on an in-memory database";
  w.malloc_shaped = true;
  w.metrics = {{"ms_per_run", "ms"}, {"peak_rss_growth_kib", "KiB"}};
  w.primary = "ms_per_run";
  w.unit_label = "ms per run (initialize, workload, sqlite3_shutdown)";
  w.params = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat(
        "SQLite 3 (Debian's libsqlite3), one connection to a new in-memory "
        "database per run: %d rows inserted in one transaction, two indexes "
        "built, %d point lookups, GROUP BY, UPDATE of a third, DELETE of a "
        "fifth, LIKE scan; SQLITE_CONFIG_MALLOC: pmr-c through "
        "pmr_malloc_adapter (pmr_sqlite_use), malloc rows through "
        "malloc/free/realloc/malloc_usable_size",
        s.q_rows, s.q_rows / 4 + 1);
  };
  w.params_json = [](const WorkloadInfo&, const Sizes& s) {
    return absl::StrFormat("{\"rows\":%d,\"lookups\":%d,\"threads\":1}",
                           s.q_rows, s.q_rows / 4 + 1);
  };
  w.run = [](const WorkloadInfo& w, const AllocatorInfo& a,
             const ChildArgs& args) {
    WithAdapter(w, a, [&](auto make) { RunQ(make, args); });
  };
  return w;
}

const std::vector<WorkloadInfo>& Workloads() {
  static const std::vector<WorkloadInfo> kAll = {
      WorkloadA(),     WorkloadB(1), WorkloadB(2), WorkloadB(8),   WorkloadP(),
      WorkloadC(),     WorkloadD(),  WorkloadE(),  WorkloadF(),    WorkloadG(),
      WorkloadV(),     WorkloadH(),  WorkloadS(),  WorkloadHStr(), WorkloadW(),
      WorkloadSChar(), WorkloadR(),  WorkloadQ(),
  };
  static const std::vector<WorkloadInfo> kWithSystem = [] {
    std::vector<WorkloadInfo> v = kAll;
    for (WorkloadInfo& w : SystemWorkloads()) v.push_back(std::move(w));
    return v;
  }();
  return kWithSystem;
}

}  // namespace bench
