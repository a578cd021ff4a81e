// What the workload files (workloads_*.cc) share: timing, the checksum's
// helpers, metric output, the random sequences, the calls that make a row's
// adapter, the common shapes of the alloc/free and container entries, and the
// entries themselves, which Workloads() (workloads.cc) lists. Internal to
// //benchmarks:all.
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
// destroy phase. Each Ops class wraps one container type behind the same few
// inline calls, so a workload's runner is the same code for every row.
#ifndef PMR_BENCHMARKS_WORKLOADS_COMMON_H_
#define PMR_BENCHMARKS_WORKLOADS_COMMON_H_

#include <sched.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_format.h"
#include "benchmarks/adapters.h"
#include "benchmarks/child.h"
#include "benchmarks/json.h"
#include "benchmarks/registry.h"

namespace bench {

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

[[noreturn]] inline void Fail(const char* what) {
  std::fprintf(stderr, "benchmark child: %s\n", what);
  std::fflush(stderr);
  std::_Exit(4);
}

// A field of /proc/self/status in KiB ("VmRSS", "VmHWM"), or -1.
inline long StatusKib(const char* key) {
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

inline void EmitMetric(const char* id, const std::vector<double>& values) {
  std::string s = absl::StrFormat(
      "{\"type\":\"metric\",\"metric\":\"%s\",\"values\":[", id);
  for (size_t i = 0; i < values.size(); ++i)
    s += (i ? "," : "") + JsonNumber(values[i]);
  s += "]}\n";
  std::fputs(s.c_str(), stdout);
}

// Peak RSS of the process above `baseline_kib` (VmRSS taken when the
// workload's own arrays were ready): what the allocator made resident.
inline void EmitRssGrowth(long baseline_kib) {
  long hwm = StatusKib("VmHWM");
  EmitMetric("peak_rss_growth_kib",
             {static_cast<double>(std::max(0L, hwm - baseline_kib))});
}

// The inputs of C, E and G (fixed seeds): the latency study (latency.cc)
// repeats those loops on the same sequences. workloads_alloc.cc builds them.
struct CInput {
  std::vector<uint16_t> size;   // allocation i: 64/128/256/512 B (4:3:2:1)
  std::vector<uint32_t> order;  // the frees: a shuffle of 0 .. n-1
};
CInput MakeCInput(size_t n);
struct EInput {
  std::vector<uint16_t> init_size;  // the live blocks' sizes before the churn
  std::vector<uint32_t> idx;        // step s frees live block idx[s]
  std::vector<uint16_t> size;       // and allocates size[s] in its place
};
EInput MakeEInput(size_t live, size_t steps);

// One round of A, C or E on adapter `a`: the workloads' timed loops, shared
// by their run functions and the paired study (paired.cc). t[] gets the
// round's timestamps; *acc what it read, for Sink().
//
// A: n = ptrs.size() blocks of kBlock bytes allocated (each memset), then
// freed in order. t: start, allocations done, frees done.
template <class Adapter>
void ARound(Adapter& a, std::vector<void*>& ptrs, uint64_t* acc,
            uint64_t t[3]) {
  const size_t n = ptrs.size();
  t[0] = NowNs();
  for (size_t i = 0; i < n; ++i) {
    void* p = a.alloc(kBlock);
    CheckAlloc(p);
    std::memset(p, static_cast<int>(i), kBlock);
    ptrs[i] = p;
  }
  t[1] = NowNs();
  *acc += *static_cast<unsigned char*>(ptrs[n / 2]) +
          reinterpret_cast<uintptr_t>(ptrs[n - 1]);
  for (size_t i = 0; i < n; ++i) a.dealloc(ptrs[i], kBlock);
  a.drop();
  t[2] = NowNs();
}

// C: in.size.size() blocks of in.size[i] bytes allocated (16 B written
// each), then freed in in.order. ptrs: that many entries. t as A's.
template <class Adapter>
void CRound(Adapter& a, const CInput& in, std::vector<void*>& ptrs,
            uint64_t* acc, uint64_t t[3]) {
  const size_t n = in.size.size();
  t[0] = NowNs();
  for (size_t i = 0; i < n; ++i) {
    void* p = a.alloc(in.size[i]);
    CheckAlloc(p);
    Touch(p, in.size[i], i);
    ptrs[i] = p;
  }
  t[1] = NowNs();
  *acc += *static_cast<unsigned char*>(ptrs[n / 2]);
  for (size_t j = 0; j < n; ++j) {
    const uint32_t k = in.order[j];
    a.dealloc(ptrs[k], in.size[k]);
  }
  a.drop();
  t[2] = NowNs();
}

// E: the live blocks allocated (untimed), in.idx.size() steps timed (t[0],
// t[1]), the live blocks freed (untimed). ptr, cur: in.init_size.size()
// entries each.
template <class Adapter>
void ERound(Adapter& a, const EInput& in, std::vector<void*>& ptr,
            std::vector<uint16_t>& cur, uint64_t* acc, uint64_t t[2]) {
  const size_t live = in.init_size.size(), steps = in.idx.size();
  for (size_t k = 0; k < live; ++k) {
    ptr[k] = a.alloc(in.init_size[k]);
    CheckAlloc(ptr[k]);
    Touch(ptr[k], in.init_size[k], k);
    cur[k] = in.init_size[k];
  }
  t[0] = NowNs();
  for (size_t s = 0; s < steps; ++s) {
    const uint32_t k = in.idx[s];
    a.dealloc(ptr[k], cur[k]);
    void* p = a.alloc(in.size[s]);
    CheckAlloc(p);
    Touch(p, in.size[s], s);
    ptr[k] = p;
    cur[k] = in.size[s];
  }
  t[1] = NowNs();
  for (size_t k = 0; k < live; ++k) {
    *acc += *static_cast<unsigned char*>(ptr[k]);
    a.dealloc(ptr[k], cur[k]);
  }
  a.drop();
}
struct GInput {
  std::vector<uint8_t> count;  // request r's blocks
  std::vector<uint16_t> size;  // the blocks' sizes, request after request
  std::vector<uint8_t> piece;  // the chars appended after each block
};
GInput MakeGInput(size_t requests);

// One G request over adapter a: its c blocks (sizes size[0 .. c-1], each
// written), a string grown by piece[j] chars after block j (capacity from
// kGStringStart, doubling: allocate new, memcpy, deallocate old), then all
// dropped at once (bulk: a bump resource) or freed one by one. blocks: room
// for kGMaxAllocs pointers. Returns what the checksum takes of the string.
template <class Adapter>
inline uint64_t GRequest(Adapter& a, bool bulk, size_t c, const uint16_t* size,
                         const uint8_t* piece, void** blocks) {
  static const char kText[] =
      "GET /api/v1/items?id=42&fields=name,price HTTP/1.1 Host: example";
  size_t cap = kGStringStart, len = 0;
  char* s = static_cast<char*>(a.alloc(cap));
  CheckAlloc(s);
  for (size_t j = 0; j < c; ++j) {
    const size_t sz = size[j];
    void* p = a.alloc(sz);
    CheckAlloc(p);
    Touch(p, sz, j);
    blocks[j] = p;
    const size_t pc = piece[j];
    if (len + pc + 1 > cap) {
      char* ns = static_cast<char*>(a.alloc(cap * 2));
      CheckAlloc(ns);
      std::memcpy(ns, s, len);
      a.dealloc(s, cap);
      s = ns;
      cap *= 2;
    }
    std::memcpy(s + len, kText + (j & 31), pc);
    len += pc;
  }
  s[len] = '\0';
  const uint64_t sum = static_cast<unsigned char>(s[len / 2]) + len;
  if (bulk) {
    a.drop();
  } else {
    for (size_t j = 0; j < c; ++j) a.dealloc(blocks[j], size[j]);
    a.dealloc(s, cap);
  }
  return sum;
}

// A lock-free single-producer single-consumer ring of pointers (F, BP): the
// producer spins, then yields, while it is full; the consumer while it is
// empty. slots: a power of two.
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

inline const std::vector<MetricInfo> kAllocFree = {
    {"alloc_ns_per_op", "ns"},
    {"free_ns_per_op", "ns"},
    {"total_ns_per_op", "ns"},
    {"peak_rss_growth_kib", "KiB"}};

// The alloc/free workloads' common shape: A, B*, C.
inline WorkloadInfo AllocFree(const char* id, const char* title) {
  WorkloadInfo w;
  w.id = id;
  w.title = title;
  w.metrics = kAllocFree;
  w.primary = "total_ns_per_op";
  w.unit_label = "ns per block (alloc + free)";
  return w;
}

// The container workloads' common shape: V, H, S.
inline WorkloadInfo Container(const char* id, const char* title,
                              const char* pmr, const char* std_type) {
  WorkloadInfo w;
  w.id = id;
  w.title = title;
  w.container = true;
  w.pmr_container = pmr;
  w.std_container = std_type;
  w.primary = "total_ns_per_op";
  return w;
}

// The fragmentation study (fragmentation.cc) watches R's and Q's allocator:
// when set, R calls lua_state(L) on each new lua_State, Q calls
// sqlite_configured() once SQLite's allocator is configured.
struct ClientHooks {
  void (*lua_state)(void* L) = nullptr;
  void (*sqlite_configured)() = nullptr;
};
inline ClientHooks& TheClientHooks() {
  static ClientHooks hooks;
  return hooks;
}

// The entries of Workloads(), one function each, in the files of their
// families.
WorkloadInfo WorkloadA();  // workloads_alloc.cc
WorkloadInfo WorkloadC();
WorkloadInfo WorkloadD();
WorkloadInfo WorkloadE();
WorkloadInfo WorkloadG();
WorkloadInfo WorkloadB(int threads);  // workloads_threads.cc
WorkloadInfo WorkloadP();
WorkloadInfo WorkloadF();
WorkloadInfo WorkloadV();  // workloads_vector_string.cc
WorkloadInfo WorkloadS();
WorkloadInfo WorkloadSChar();
WorkloadInfo WorkloadH();  // workloads_hashmap.cc
WorkloadInfo WorkloadHStr();
WorkloadInfo WorkloadW();  // workloads_wordcount.cc
WorkloadInfo WorkloadR();  // workloads_clients.cc
WorkloadInfo WorkloadQ();
WorkloadInfo WorkloadL(int threads);  // workloads_large.cc
WorkloadInfo WorkloadBP();
WorkloadInfo WorkloadALat();  // latency.cc
WorkloadInfo WorkloadCLat();
WorkloadInfo WorkloadELat();
WorkloadInfo WorkloadGLat();
WorkloadInfo WorkloadBScale();  // scaling.cc
WorkloadInfo WorkloadFScale();
WorkloadInfo WorkloadEFrag();  // fragmentation.cc
WorkloadInfo WorkloadRFrag();
WorkloadInfo WorkloadQFrag();
WorkloadInfo WorkloadAPair();  // paired.cc
WorkloadInfo WorkloadCPair();
WorkloadInfo WorkloadEPair();

}  // namespace bench

#endif  // PMR_BENCHMARKS_WORKLOADS_COMMON_H_
