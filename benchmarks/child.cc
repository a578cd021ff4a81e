// The measuring side of //benchmarks:all. One child process = one allocator
// on one workload: a fresh heap each time, and a drop-in malloc can be put in
// with LD_PRELOAD. It prints JSON lines on stdout:
//   {"type":"malloc","from":"<library that defines
//   malloc>","peer":...,"active":true,"version":...}
//   {"type":"metric","metric":"alloc_ns_per_op","values":[<one per timed
//   round>]}
//   {"type":"done","sink":<checksum that keeps the work observable>}
//
// Method, for every workload: inputs (sizes, orders, random sequences) are
// built before any timing; `warmup` untimed rounds, then `rounds` timed ones
// on the same allocator instance (a pool keeps its chunks across rounds, as
// malloc keeps its heap); pointers and block contents feed a checksum that is
// printed, so nothing can be optimised away.
//
// The container workloads V, H, S measure a container type over a resource
// (registry.cc's ContainerOf): the std container with std::allocator on the
// malloc rows, the std::pmr one over the std resource, the pmr-c one over the
// pmr-c resource, absl::flat_hash_map in H. One resource instance serves all
// rounds; each round makes its containers from empty and destroys them, then
// calls the resource's drop() (monotonic: reset or release) in the timed
// destroy phase.
#include "benchmarks/child.h"

#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <memory_resource>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "benchmarks/adapters.h"
#include "benchmarks/json.h"
#include "containers/pmr_hashmap.h"
#include "containers/pmr_string.h"
#include "containers/pmr_vector.h"

namespace bench {
namespace {

volatile uint64_t g_sink = 0;

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
  g_sink += acc;
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
  g_sink += acc;
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
  g_sink += acc;
  ph.Emit();
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
  g_sink += acc;
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
  g_sink += acc;
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
  alignas(64) std::atomic<size_t> head_{0};  // consumer's position
  alignas(64) size_t tail_cache_ = 0;        // consumer's view of tail_
  alignas(64) std::atomic<size_t> tail_{0};  // producer's position
  alignas(64) size_t head_cache_ = 0;        // producer's view of head_
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
  g_sink += acc;
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
  g_sink += acc;
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
  g_sink += acc;
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
    const pmr_hashmap_status st = pmr_hashmap_insert(&m_, &k, &v, nullptr);
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
  const long base = StatusKib("VmRSS");
  std::vector<double> ins_ns, hit_ns, miss_ns, erase_ns, total_ns;
  uint64_t acc = 0;
  for (int r = -args.warmup; r < args.rounds; ++r) {
    const uint64_t t0 = NowNs();
    ops.Begin();
    size_t inserted = 0;
    for (size_t i = 0; i < n; ++i) inserted += ops.Insert(keys[i], i);
    const uint64_t t1 = NowNs();
    size_t found = 0;
    uint64_t sum = 0;
    for (size_t i = 0; i < n; ++i) {
      const uint64_t* v = ops.Find(hit[i]);
      if (v != nullptr) {
        ++found;
        sum += *v;
      }
    }
    const uint64_t t2 = NowNs();
    size_t false_hits = 0;
    for (size_t i = 0; i < n; ++i) false_hits += ops.Find(miss[i]) != nullptr;
    const uint64_t t3 = NowNs();
    const size_t size_before = ops.Size();
    size_t erased = 0;
    for (size_t i = 0; i < n; ++i) erased += ops.Erase(erase[i]);
    const size_t size_after = ops.Size();
    ops.End();
    res.drop();
    const uint64_t t4 = NowNs();
    if (inserted != n || found != n || false_hits != 0 || erased != n ||
        size_before != n || size_after != 0)
      Fail("hash map gave wrong answers");
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
  g_sink += acc;
  EmitMetric("insert_ns_per_op", ins_ns);
  EmitMetric("hit_ns_per_op", hit_ns);
  EmitMetric("miss_ns_per_op", miss_ns);
  EmitMetric("erase_ns_per_op", erase_ns);
  EmitMetric("total_ns_per_op", total_ns);
  EmitRssGrowth(base);
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
  g_sink += acc;
  EmitMetric("build_ns_per_op", build);
  EmitMetric("destroy_ns_per_op", destroy);
  EmitMetric("total_ns_per_op", total);
  EmitRssGrowth(base);
}

void DispatchContainer(const WorkloadInfo& w, const AllocatorInfo& info,
                       const ChildArgs& args) {
  const std::string wl = w.id, id = info.id;
  if (info.family == Family::kMalloc || info.family == Family::kThirdParty) {
    MallocAdapter res;
    if (wl == "V") return RunV(StdVecOps<std::vector<uint64_t>>({}), res, args);
    if (wl == "H" && info.family == Family::kThirdParty)
      return RunH(StdMapOps<absl::flat_hash_map<uint64_t, uint64_t>>({}), res,
                  args);
    if (wl == "H")
      return RunH(StdMapOps<std::unordered_map<uint64_t, uint64_t>>({}), res,
                  args);
    if (wl == "S") return RunS(StdStrOps<std::string>({}), res, args);
  } else if (info.family == Family::kStd) {
    const StdAdapter::Kind kind =
        id == "std_new_delete"  ? StdAdapter::kNewDelete
        : id == "std_monotonic" ? StdAdapter::kMonotonic
                                : StdAdapter::kUnsyncPool;
    StdAdapter res(kind, 0);
    std::pmr::memory_resource* r = res.resource();
    if (wl == "V")
      return RunV(StdVecOps<std::pmr::vector<uint64_t>>(r), res, args);
    if (wl == "H")
      return RunH(StdMapOps<std::pmr::unordered_map<uint64_t, uint64_t>>(r),
                  res, args);
    if (wl == "S") return RunS(StdStrOps<std::pmr::string>(r), res, args);
  } else if (info.family == Family::kPmr) {
    const PmrAdapter::Kind kind =
        id == "pmr_malloc"              ? PmrAdapter::kMalloc
        : id == "pmr_monotonic"         ? PmrAdapter::kMonoReset
        : id == "pmr_monotonic_release" ? PmrAdapter::kMonoRelease
                                        : PmrAdapter::kUnsyncPool;
    PmrAdapter res(kind, 0);
    pmr_mem_resource* r = res.resource();
    if (wl == "V") return RunV(PmrVecOps(r), res, args);
    if (wl == "H") return RunH(PmrMapOps(r), res, args);
    if (wl == "S") return RunS(PmrStrOps(r), res, args);
  }
  Fail("unknown container workload");
}

template <class Make>
void RunWorkload(const WorkloadInfo& w, const AllocatorInfo& info, Make make,
                 const ChildArgs& args) {
  const std::string id = w.id;
  if (id == "A") return RunA(make, args);
  if (id == "D") return RunD(make, args);
  if (id[0] == 'B') return RunB(make, args, w.threads, info.thread_safe);
  if (id == "C") return RunC(make, args);
  if (id == "E") return RunE(make, args);
  if (id == "F") return RunF(make, args);
  if (id == "G") return RunG(make, args);
  Fail("unknown workload");
}

void Dispatch(const WorkloadInfo& w, const AllocatorInfo& info,
              const ChildArgs& args) {
  if (w.container) {
    if (!Applicable(w, info, nullptr))
      Fail("allocator not applicable to this workload");
    return DispatchContainer(w, info, args);
  }
  const std::string id = info.id;
  // G gives every monotonic resource the same first chunk; elsewhere defaults.
  const size_t mono = std::string(w.id) == "G" ? kGMonoChunk : 0;
  auto run = [&](auto make) { RunWorkload(w, info, make, args); };
  if (info.family == Family::kMalloc)
    return run([] { return std::make_unique<MallocAdapter>(); });
  if (id == "std_new_delete")
    return run(
        [] { return std::make_unique<StdAdapter>(StdAdapter::kNewDelete, 0); });
  if (id == "std_monotonic")
    return run([mono] {
      return std::make_unique<StdAdapter>(StdAdapter::kMonotonic, mono);
    });
  if (id == "std_unsync_pool")
    return run([] {
      return std::make_unique<StdAdapter>(StdAdapter::kUnsyncPool, 0);
    });
  if (id == "std_sync_pool")
    return run(
        [] { return std::make_unique<StdAdapter>(StdAdapter::kSyncPool, 0); });
  if (id == "simple_pool")
    return run([] { return std::make_unique<SimplePoolAdapter>(); });
  if (id == "arena")
    return run([] { return std::make_unique<ArenaAdapter>(); });
  if (id == "no_allocator") {
    if (std::string(w.id) != "F") Fail("no_allocator is F's floor only");
    return run([] { return std::make_unique<NoAllocatorAdapter>(); });
  }
  if (id == "pmr_malloc")
    return run(
        [] { return std::make_unique<PmrAdapter>(PmrAdapter::kMalloc, 0); });
  if (id == "pmr_monotonic")
    return run([mono] {
      return std::make_unique<PmrAdapter>(PmrAdapter::kMonoReset, mono);
    });
  if (id == "pmr_monotonic_release")
    return run([mono] {
      return std::make_unique<PmrAdapter>(PmrAdapter::kMonoRelease, mono);
    });
  if (id == "pmr_monotonic_inline")
    return run([mono] { return std::make_unique<PmrMonoInlineAdapter>(mono); });
  if (id == "pmr_unsync_pool")
    return run([] {
      return std::make_unique<PmrAdapter>(PmrAdapter::kUnsyncPool, 0);
    });
  if (id == "pmr_sync_pool")
    return run(
        [] { return std::make_unique<PmrAdapter>(PmrAdapter::kSyncPool, 0); });
  if (id == "pmr_thread_cache")
    return run([] {
      return std::make_unique<PmrAdapter>(PmrAdapter::kThreadCache, 0);
    });
  if (id == "pmr_thread_cache_pool")
    return run([] {
      return std::make_unique<PmrAdapter>(PmrAdapter::kThreadCachePool, 0);
    });
  Fail("unknown allocator");
}

// Which library really defines malloc in this process, and whether the
// expected peer is active (a preload that failed silently is caught here).
bool ReportMalloc(const std::string& expect_peer) {
  std::string from = "?";
  void* m = dlsym(RTLD_DEFAULT, "malloc");
  Dl_info info;
  if (m != nullptr && dladdr(m, &info) != 0 && info.dli_fname != nullptr)
    from = info.dli_fname;
  std::string line =
      absl::StrFormat("{\"type\":\"malloc\",\"from\":%s", JsonString(from));
  bool ok = true;
  if (!expect_peer.empty()) {
    const PeerInfo* peer = FindPeer(expect_peer);
    std::string version, detail;
    bool symbol = false;
    if (peer != nullptr) {
      for (const char* sym : peer->probe_symbols)
        symbol = symbol || dlsym(RTLD_DEFAULT, sym) != nullptr;
      if (expect_peer == "jemalloc") {
        using Mallctl = int (*)(const char*, void*, size_t*, void*, size_t);
        if (auto f =
                reinterpret_cast<Mallctl>(dlsym(RTLD_DEFAULT, "mallctl"))) {
          const char* v = nullptr;
          size_t len = sizeof v;
          if (f("version", &v, &len, nullptr, 0) == 0 && v != nullptr)
            version = v;
        }
      } else if (expect_peer == "tcmalloc") {
        using TcVersion = const char* (*)(int*, int*, const char**);
        if (auto f = reinterpret_cast<TcVersion>(
                dlsym(RTLD_DEFAULT, "tc_version"))) {
          int major = 0, minor = 0;
          const char* patch = nullptr;
          const char* v = f(&major, &minor, &patch);
          if (v != nullptr) version = v;
        }
      } else if (expect_peer == "mimalloc") {
        using MiVersion = int (*)();
        if (auto f = reinterpret_cast<MiVersion>(
                dlsym(RTLD_DEFAULT, "mi_version"))) {
          const int v = f();
          version = absl::StrFormat("mimalloc %d.%d.%d", v / 100, (v / 10) % 10,
                                    v % 10);
        }
      }
    }
    const bool lib_ok =
        peer != nullptr && from.find(peer->lib_substring) != std::string::npos;
    ok = symbol && lib_ok;
    if (!symbol)
      detail = "its symbols are not in the process (LD_PRELOAD ignored?)";
    else if (!lib_ok)
      detail = "malloc resolves to " + from + ", not to the preloaded library";
    line += absl::StrFormat(
        ",\"peer\":%s,\"active\":%s,\"version\":%s,\"detail\":%s",
        JsonString(expect_peer), ok ? "true" : "false", JsonString(version),
        JsonString(detail));
  }
  line += "}\n";
  std::fputs(line.c_str(), stdout);
  return ok;
}

}  // namespace

int ChildMain(const ChildArgs& args) {
  if (args.timeout_s > 0)
    alarm(static_cast<unsigned>(
        args.timeout_s));  // a hung child dies; the parent reports it
  const bool ok = ReportMalloc(args.expect_peer);
  std::fflush(stdout);
  if (!ok) return 3;
  if (args.probe) return 0;
  const WorkloadInfo* w = FindWorkload(args.workload);
  const AllocatorInfo* a = FindAllocator(args.allocator);
  if (w == nullptr || a == nullptr) {
    std::fprintf(stderr, "benchmark child: unknown workload or allocator\n");
    return 2;
  }
  Dispatch(*w, *a, args);
  std::fputs(absl::StrFormat("{\"type\":\"done\",\"sink\":%d}\n",
                             static_cast<uint64_t>(g_sink))
                 .c_str(),
             stdout);
  std::fflush(stdout);
  return 0;
}

}  // namespace bench
