// Instruction counts per operation, for valgrind --tool=callgrind.
//
//   instructions SCENARIO N   runs SCENARIO's operation N times and exits.
//
// tools/instructions.sh runs every scenario at two values of N under callgrind
// and divides the difference, so start-up and set-up cancel out and what is
// left is the exact cost of one operation plus a minimal loop. Instruction
// counts do not depend on machine load, unlike times: use them to compare
// single-threaded designs. Timed comparisons are in //benchmarks:all.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory_resource>
#include <string>

#include "mem_resource/pmr_mem_resource.h"
#include "resources/pmr_monotonic_buffer.h"
#include "resources/pmr_synchronized_pool.h"
#include "resources/pmr_thread_cache.h"
#include "resources/pmr_unsynchronized_pool.h"

namespace {

// Keeps p alive in a register so the compiler cannot drop the allocation.
inline void Sink(void* p) { asm volatile("" : : "r"(p)); }

constexpr size_t kSize = 64, kAlign = 8;

template <typename Alloc, typename Free>
void Pairs(long n, Alloc alloc, Free dealloc) {
  for (long i = 0; i < n; ++i) {
    void* p = alloc();
    Sink(p);
    dealloc(p);
  }
}

template <typename Alloc>
void Allocs(long n, Alloc alloc) {
  for (long i = 0; i < n; ++i) Sink(alloc());
}

int Run(const std::string& s, long n) {
  if (s == "malloc_pair") {  // glibc, or whatever malloc is preloaded
    Pairs(
        n, [] { return malloc(kSize); }, [](void* p) { free(p); });
  } else if (s == "pmr_malloc_resource_pair") {
    pmr_mem_resource* r = pmr_malloc_resource();
    Pairs(
        n, [r] { return pmr_allocate(r, kSize, kAlign); },
        [r](void* p) { pmr_deallocate(r, p, kSize, kAlign); });
  } else if (s == "pmr_unsynchronized_pool_pair") {
    pmr_unsynchronized_pool pool;
    pmr_unsynchronized_pool_init(&pool, nullptr, nullptr);
    pmr_mem_resource* r = &pool.base;
    Pairs(
        n, [r] { return pmr_allocate(r, kSize, kAlign); },
        [r](void* p) { pmr_deallocate(r, p, kSize, kAlign); });
    pmr_unsynchronized_pool_destroy(&pool);
  } else if (s == "pmr_synchronized_pool_pair") {
    pmr_synchronized_pool pool;
    pmr_synchronized_pool_init(&pool, nullptr, nullptr);
    pmr_mem_resource* r = &pool.base;
    Pairs(
        n, [r] { return pmr_allocate(r, kSize, kAlign); },
        [r](void* p) { pmr_deallocate(r, p, kSize, kAlign); });
    pmr_synchronized_pool_destroy(&pool);
  } else if (s == "pmr_thread_cache_pair") {
    pmr_thread_cache tc;
    pmr_thread_cache_init(&tc, nullptr, nullptr);
    pmr_mem_resource* r = &tc.base;
    Pairs(
        n, [r] { return pmr_allocate(r, kSize, kAlign); },
        [r](void* p) { pmr_deallocate(r, p, kSize, kAlign); });
    pmr_thread_cache_destroy(&tc);
  } else if (s == "std_unsynchronized_pool_pair") {
    std::pmr::unsynchronized_pool_resource pool;
    std::pmr::memory_resource* r = &pool;
    Pairs(
        n, [r] { return r->allocate(kSize, kAlign); },
        [r](void* p) { r->deallocate(p, kSize, kAlign); });
  } else if (s == "std_synchronized_pool_pair") {
    std::pmr::synchronized_pool_resource pool;
    std::pmr::memory_resource* r = &pool;
    Pairs(
        n, [r] { return r->allocate(kSize, kAlign); },
        [r](void* p) { r->deallocate(p, kSize, kAlign); });
  } else if (s == "pmr_monotonic_allocate") {
    pmr_monotonic_buffer m;
    pmr_monotonic_buffer_init(&m, nullptr);
    pmr_mem_resource* r = &m.base;
    Allocs(n, [r] { return pmr_allocate(r, kSize, kAlign); });
    pmr_monotonic_buffer_destroy(&m);
  } else if (s == "pmr_monotonic_inline_allocate") {
    pmr_monotonic_buffer m;
    pmr_monotonic_buffer_init(&m, nullptr);
    Allocs(n,
           [&m] { return pmr_monotonic_buffer_allocate(&m, kSize, kAlign); });
    pmr_monotonic_buffer_destroy(&m);
  } else if (s == "std_monotonic_allocate") {
    std::pmr::monotonic_buffer_resource m;
    std::pmr::memory_resource* r = &m;
    Allocs(n, [r] { return r->allocate(kSize, kAlign); });
  } else if (s == "bare_pointer_bump") {
    // The floor: a bump pointer over one big buffer, no checks but the end.
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
  } else {
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s SCENARIO N\n", argv[0]);
    return 2;
  }
  if (Run(argv[1], atol(argv[2])) != 0) {
    fprintf(stderr, "unknown scenario %s\n", argv[1]);
    return 2;
  }
  return 0;
}
