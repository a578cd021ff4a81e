// Instruction counts per operation, for valgrind --tool=callgrind.
//
//   instructions SCENARIO N   runs SCENARIO's operation N times and exits.
//   instructions --list       prints the scenarios tools/instructions.sh runs.
//
// tools/instructions.sh runs every scenario at two values of N under callgrind
// and divides the difference, so start-up and set-up cancel out and what is
// left is the exact cost of one operation plus a minimal loop. Instruction
// counts do not depend on machine load, unlike times: use them to compare
// single-threaded designs. Timed comparisons are in //benchmarks:all.
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory_resource>

#include "mem_resource/pmr_mem_resource.h"
#include "resources/pmr_monotonic_buffer.h"
#include "resources/pmr_synchronized_pool.h"
#include "resources/pmr_thread_cache.h"
#include "resources/pmr_unsynchronized_pool.h"

namespace {

// Keeps p alive in a register so the compiler cannot drop the allocation.
inline void Sink(void* p) { asm volatile("" : : "r"(p)); }

constexpr size_t kSize = 64, kAlign = 8;

// The loops, and the helpers that call them, are always inlined: each
// scenario gets its own loop with pmr_allocate inlined into it, whatever the
// compiler would decide for a helper that several scenarios share.
#define LOOP_INLINE [[gnu::always_inline]] inline

template <typename Alloc, typename Free>
LOOP_INLINE void Pairs(long n, Alloc alloc, Free dealloc) {
  for (long i = 0; i < n; ++i) {
    void* p = alloc();
    Sink(p);
    dealloc(p);
  }
}

template <typename Alloc>
LOOP_INLINE void Allocs(long n, Alloc alloc) {
  for (long i = 0; i < n; ++i) Sink(alloc());
}

// Benchmark A's bulk shape: kBulk blocks allocated, then all freed in the
// order they came, round after round (n: a multiple of kBulk).
constexpr long kBulk = 100000;

template <typename Alloc, typename Free>
LOOP_INLINE void Bulk(long n, Alloc alloc, Free dealloc) {
  static void* blocks[kBulk];
  for (long round = 0; round < n / kBulk; ++round) {
    for (long i = 0; i < kBulk; ++i) {
      blocks[i] = alloc();
      Sink(blocks[i]);
    }
    for (long i = 0; i < kBulk; ++i) dealloc(blocks[i]);
  }
}

LOOP_INLINE void PmrBulk(long n, pmr_mem_resource* r) {
  Bulk(
      n, [r] { return pmr_allocate(r, kSize, kAlign); },
      [r](void* p) { pmr_deallocate(r, p, kSize, kAlign); });
}

// Benchmark E's churn shape: kLive blocks of 16..256 bytes live; each step
// frees a random one and allocates a random size in its place (n steps,
// counted per step). The sequence comes from a fixed xorshift generator,
// the same for every scenario; filling and emptying the set cost the same
// at every n, so they cancel out.
constexpr long kLive = 10000;

template <typename Alloc, typename Free>
LOOP_INLINE void Churn(long n, Alloc alloc, Free dealloc) {
  static void* blocks[kLive];
  static size_t sizes[kLive];
  uint64_t x = 88172645463325252u;
  auto next = [&x] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  for (long i = 0; i < kLive; ++i) {
    sizes[i] = 16 + (next() % 16) * 16;
    blocks[i] = alloc(sizes[i]);
    Sink(blocks[i]);
  }
  for (long i = 0; i < n; ++i) {
    uint64_t r = next();
    size_t at = static_cast<size_t>(r % kLive);
    dealloc(blocks[at], sizes[at]);
    sizes[at] = 16 + ((r >> 32) % 16) * 16;
    blocks[at] = alloc(sizes[at]);
    Sink(blocks[at]);
  }
  for (long i = 0; i < kLive; ++i) dealloc(blocks[i], sizes[i]);
}

LOOP_INLINE void PmrChurn(long n, pmr_mem_resource* r) {
  Churn(
      n, [r](size_t b) { return pmr_allocate(r, b, kAlign); },
      [r](void* p, size_t b) { pmr_deallocate(r, p, b, kAlign); });
}

// Benchmark C's mixed shape: kMixed blocks of 64/128/256/512 bytes drawn
// 4:3:2:1, allocated, then all freed in a shuffled order, round after round
// (n: a multiple of kMixed), counted per block. Sizes and order come from a
// fixed xorshift generator, made before the first round: the same for every
// scenario and every n.
constexpr long kMixed = 100000;

template <typename Alloc, typename Free>
LOOP_INLINE void Mixed(long n, Alloc alloc, Free dealloc) {
  static void* blocks[kMixed];
  static uint16_t sizes[kMixed];
  static uint32_t order[kMixed];
  static const uint16_t kBySlot[10] = {64,  64,  64,  64,  128,
                                       128, 128, 256, 256, 512};
  uint64_t x = 0xC0FFEEu;
  auto next = [&x] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  for (long i = 0; i < kMixed; ++i) {
    sizes[i] = kBySlot[next() % 10];
    order[i] = static_cast<uint32_t>(i);
  }
  for (long i = kMixed - 1; i > 0; --i) {
    long j = static_cast<long>(next() % static_cast<uint64_t>(i + 1));
    uint32_t t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  for (long round = 0; round < n / kMixed; ++round) {
    for (long i = 0; i < kMixed; ++i) {
      blocks[i] = alloc(sizes[i]);
      Sink(blocks[i]);
    }
    for (long i = 0; i < kMixed; ++i) {
      uint32_t k = order[i];
      dealloc(blocks[k], sizes[k]);
    }
  }
}

LOOP_INLINE void PmrMixed(long n, pmr_mem_resource* r) {
  Mixed(
      n, [r](size_t b) { return pmr_allocate(r, b, kAlign); },
      [r](void* p, size_t b) { pmr_deallocate(r, p, b, kAlign); });
}

// The same, freed through pmr_deallocate_unsized (the size not loaded).
LOOP_INLINE void PmrMixedUnsized(long n, pmr_mem_resource* r) {
  Mixed(
      n, [r](size_t b) { return pmr_allocate(r, b, kAlign); },
      [r](void* p, size_t) { pmr_deallocate_unsized(r, p, kAlign); });
}

// mimalloc called directly (not as a drop-in malloc): its own entry points,
// found with dlopen so that it does not replace this program's malloc.
struct Mimalloc {
  void* (*malloc)(size_t);
  void (*free)(void*);
  void* (*heap_new)();
  void* (*heap_malloc)(void*, size_t);
  bool ok = false;
  Mimalloc() {
    void* lib = dlopen("libmimalloc.so.2", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return;
    malloc = reinterpret_cast<void* (*)(size_t)>(dlsym(lib, "mi_malloc"));
    free = reinterpret_cast<void (*)(void*)>(dlsym(lib, "mi_free"));
    heap_new = reinterpret_cast<void* (*)()>(dlsym(lib, "mi_heap_new"));
    heap_malloc = reinterpret_cast<void* (*)(void*, size_t)>(
        dlsym(lib, "mi_heap_malloc"));
    ok = malloc && free && heap_new && heap_malloc;
  }
};

// Runs fn(mimalloc), or says on stderr that mimalloc is not installed (the
// count is then that of an empty run: tools/instructions.sh prints it).
template <typename Fn>
void WithMimalloc(Fn fn) {
  static Mimalloc mi;
  if (!mi.ok) {
    fprintf(stderr, "libmimalloc.so.2 not found\n");
    exit(3);
  }
  fn(mi);
}

// Pairs through the abstract interface (pmr_allocate / pmr_deallocate).
LOOP_INLINE void PmrPairs(long n, pmr_mem_resource* r) {
  Pairs(
      n, [r] { return pmr_allocate(r, kSize, kAlign); },
      [r](void* p) { pmr_deallocate(r, p, kSize, kAlign); });
}

LOOP_INLINE void StdPairs(long n, std::pmr::memory_resource* r) {
  Pairs(
      n, [r] { return r->allocate(kSize, kAlign); },
      [r](void* p) { r->deallocate(p, kSize, kAlign); });
}

// A scenario: its name, its run of n operations, and whether
// tools/instructions.sh also runs it under each peer malloc (PEER:name).
struct Scenario {
  const char* name;
  void (*run)(long n);
  bool peers = false;
};

const char* const kPeers[] = {"mimalloc", "jemalloc", "tcmalloc", "pmr_dropin"};

// In the order tools/instructions.sh prints them.
const Scenario kScenarios[] = {
    {"bare_pointer_bump",
     [](long n) {
       // The floor: a bump pointer over one big buffer, no checks but the
       // end.
       size_t cap = static_cast<size_t>(n) * kSize + kSize;
       char* buf = static_cast<char*>(malloc(cap));
       char* cur = buf;
       char* end = buf + cap;
       Allocs(n, [&] {
         char* p = reinterpret_cast<char*>(
             (reinterpret_cast<uintptr_t>(cur) + kAlign - 1) & ~(kAlign - 1));
         if (p + kSize > end) return static_cast<char*>(nullptr);
         cur = p + kSize;
         return p;
       });
       free(buf);
     }},
    {"pmr_monotonic_inline_allocate",
     [](long n) {
       pmr_monotonic_buffer m;
       pmr_monotonic_buffer_init(&m, nullptr);
       Allocs(n, [&m] {
         return pmr_monotonic_buffer_allocate(&m, kSize, kAlign);
       });
       pmr_monotonic_buffer_destroy(&m);
     }},
    {"pmr_monotonic_allocate",
     [](long n) {
       pmr_monotonic_buffer m;
       pmr_monotonic_buffer_init(&m, nullptr);
       pmr_mem_resource* r = &m.base;
       Allocs(n, [r] { return pmr_allocate(r, kSize, kAlign); });
       pmr_monotonic_buffer_destroy(&m);
     }},
    {"std_monotonic_allocate",
     [](long n) {
       std::pmr::monotonic_buffer_resource m;
       std::pmr::memory_resource* r = &m;
       Allocs(n, [r] { return r->allocate(kSize, kAlign); });
     }},
    {"pmr_unsynchronized_pool_pair",
     [](long n) {
       pmr_unsynchronized_pool pool;
       pmr_unsynchronized_pool_init(&pool, nullptr, nullptr);
       PmrPairs(n, &pool.base);
       pmr_unsynchronized_pool_destroy(&pool);
     }},
    {"pmr_synchronized_pool_pair",
     [](long n) {
       pmr_synchronized_pool pool;
       pmr_synchronized_pool_init(&pool, nullptr, nullptr);
       PmrPairs(n, &pool.base);
       pmr_synchronized_pool_destroy(&pool);
     }},
    {"pmr_thread_cache_pair",
     [](long n) {
       pmr_thread_cache tc;
       pmr_thread_cache_init(&tc, nullptr, nullptr);
       PmrPairs(n, &tc.base);
       pmr_thread_cache_destroy(&tc);
     }},
    {"pmr_unsynchronized_pool_bulk",
     [](long n) {
       pmr_unsynchronized_pool pool;
       pmr_unsynchronized_pool_init(&pool, nullptr, nullptr);
       PmrBulk(n, &pool.base);
       pmr_unsynchronized_pool_destroy(&pool);
     }},
    {"pmr_synchronized_pool_bulk",
     [](long n) {
       pmr_synchronized_pool pool;
       pmr_synchronized_pool_init(&pool, nullptr, nullptr);
       PmrBulk(n, &pool.base);
       pmr_synchronized_pool_destroy(&pool);
     }},
    {"pmr_thread_cache_bulk",
     [](long n) {
       pmr_thread_cache tc;
       pmr_thread_cache_init(&tc, nullptr, nullptr);
       PmrBulk(n, &tc.base);
       pmr_thread_cache_destroy(&tc);
     }},
    {"pmr_unsynchronized_pool_churn",
     [](long n) {
       pmr_unsynchronized_pool pool;
       pmr_unsynchronized_pool_init(&pool, nullptr, nullptr);
       PmrChurn(n, &pool.base);
       pmr_unsynchronized_pool_destroy(&pool);
     }},
    {"pmr_synchronized_pool_churn",
     [](long n) {
       pmr_synchronized_pool pool;
       pmr_synchronized_pool_init(&pool, nullptr, nullptr);
       PmrChurn(n, &pool.base);
       pmr_synchronized_pool_destroy(&pool);
     }},
    {"pmr_thread_cache_churn",
     [](long n) {
       pmr_thread_cache tc;
       pmr_thread_cache_init(&tc, nullptr, nullptr);
       PmrChurn(n, &tc.base);
       pmr_thread_cache_destroy(&tc);
     }},
    {"pmr_unsynchronized_pool_mixed",
     [](long n) {
       pmr_unsynchronized_pool pool;
       pmr_unsynchronized_pool_init(&pool, nullptr, nullptr);
       PmrMixed(n, &pool.base);
       pmr_unsynchronized_pool_destroy(&pool);
     }},
    {"pmr_synchronized_pool_mixed",
     [](long n) {
       pmr_synchronized_pool pool;
       pmr_synchronized_pool_init(&pool, nullptr, nullptr);
       PmrMixed(n, &pool.base);
       pmr_synchronized_pool_destroy(&pool);
     }},
    {"pmr_thread_cache_mixed",
     [](long n) {
       pmr_thread_cache tc;
       pmr_thread_cache_init(&tc, nullptr, nullptr);
       PmrMixed(n, &tc.base);
       pmr_thread_cache_destroy(&tc);
     }},
    {"pmr_unsynchronized_pool_mixed_unsized",
     [](long n) {
       pmr_unsynchronized_pool pool;
       pmr_unsynchronized_pool_init(&pool, nullptr, nullptr);
       PmrMixedUnsized(n, &pool.base);
       pmr_unsynchronized_pool_destroy(&pool);
     }},
    {"pmr_synchronized_pool_mixed_unsized",
     [](long n) {
       pmr_synchronized_pool pool;
       pmr_synchronized_pool_init(&pool, nullptr, nullptr);
       PmrMixedUnsized(n, &pool.base);
       pmr_synchronized_pool_destroy(&pool);
     }},
    {"pmr_thread_cache_mixed_unsized",
     [](long n) {
       pmr_thread_cache tc;
       pmr_thread_cache_init(&tc, nullptr, nullptr);
       PmrMixedUnsized(n, &tc.base);
       pmr_thread_cache_destroy(&tc);
     }},
    {"mi_malloc_pair",  // mimalloc's mi_malloc / mi_free, called directly
     [](long n) {
       WithMimalloc([n](const Mimalloc& mi) {
         Pairs(
             n, [&mi] { return mi.malloc(kSize); },
             [&mi](void* p) { mi.free(p); });
       });
     }},
    {"mi_malloc_bulk",
     [](long n) {
       WithMimalloc([n](const Mimalloc& mi) {
         Bulk(
             n, [&mi] { return mi.malloc(kSize); },
             [&mi](void* p) { mi.free(p); });
       });
     }},
    {"mi_heap_pair",  // a mimalloc heap of its own (mi_heap_malloc / mi_free)
     [](long n) {
       WithMimalloc([n](const Mimalloc& mi) {
         void* heap = mi.heap_new();
         Pairs(
             n, [&mi, heap] { return mi.heap_malloc(heap, kSize); },
             [&mi](void* p) { mi.free(p); });
       });
     }},
    {"mi_heap_bulk",
     [](long n) {
       WithMimalloc([n](const Mimalloc& mi) {
         void* heap = mi.heap_new();
         Bulk(
             n, [&mi, heap] { return mi.heap_malloc(heap, kSize); },
             [&mi](void* p) { mi.free(p); });
       });
     }},
    {"mi_malloc_churn",
     [](long n) {
       WithMimalloc([n](const Mimalloc& mi) {
         Churn(
             n, [&mi](size_t b) { return mi.malloc(b); },
             [&mi](void* p, size_t) { mi.free(p); });
       });
     }},
    {"mi_malloc_mixed",
     [](long n) {
       WithMimalloc([n](const Mimalloc& mi) {
         Mixed(
             n, [&mi](size_t b) { return mi.malloc(b); },
             [&mi](void* p, size_t) { mi.free(p); });
       });
     }},
    {"malloc_pair",  // glibc, or whatever malloc is preloaded
     [](long n) {
       Pairs(
           n, [] { return malloc(kSize); }, [](void* p) { free(p); });
     },
     true},
    {"pmr_malloc_resource_pair",
     [](long n) { PmrPairs(n, pmr_malloc_resource()); }},
    {"malloc_bulk",  // glibc, or whatever malloc is preloaded
     [](long n) {
       Bulk(
           n, [] { return malloc(kSize); }, [](void* p) { free(p); });
     },
     true},
    {"malloc_churn",  // glibc, or whatever malloc is preloaded
     [](long n) {
       Churn(
           n, [](size_t b) { return malloc(b); },
           [](void* p, size_t) { free(p); });
     },
     true},
    {"malloc_mixed",  // glibc, or whatever malloc is preloaded
     [](long n) {
       Mixed(
           n, [](size_t b) { return malloc(b); },
           [](void* p, size_t) { free(p); });
     },
     true},
    {"std_unsynchronized_pool_pair",
     [](long n) {
       std::pmr::unsynchronized_pool_resource pool;
       StdPairs(n, &pool);
     }},
    {"std_synchronized_pool_pair",
     [](long n) {
       std::pmr::synchronized_pool_resource pool;
       StdPairs(n, &pool);
     }},
};

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "--list") == 0) {
    for (const Scenario& sc : kScenarios) {
      printf("%s\n", sc.name);
      if (sc.peers)
        for (const char* peer : kPeers) printf("%s:%s\n", peer, sc.name);
    }
    return 0;
  }
  if (argc != 3) {
    fprintf(stderr, "usage: %s SCENARIO N | --list\n", argv[0]);
    return 2;
  }
  for (const Scenario& sc : kScenarios) {
    if (strcmp(argv[1], sc.name) != 0) continue;
    sc.run(atol(argv[2]));
    return 0;
  }
  fprintf(stderr, "unknown scenario %s\n", argv[1]);
  return 2;
}
