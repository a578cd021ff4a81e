// Memory held by the thread-safe pools follows the working set: threads that
// come and go, and a producer and a consumer contending for the same pages,
// do not make the pools take ever more from upstream.
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <mutex>
#include <thread>
#include <tuple>
#include <vector>

#include "resources/pmr_synchronized_pool.h"
#include "resources/pmr_thread_cache.h"
#include "resources/pmr_unsynchronized_pool.h"
#include "tests/testkit/counting_resource.h"

namespace {

using pmrtest::CountingResource;

#if defined(PMR_TSAN) || defined(PMR_ASAN)
constexpr int kGenerations = 40;  // sanitizers are 5-20x slower
#else
constexpr int kGenerations = 160;
#endif
constexpr int kThreads = 4;
constexpr int kBlocks = 5000;

size_t SizeOf(int i) { return size_t{64} << (i % 4); }  // 64 .. 512 bytes

// The working set of one generation: what its threads hold at once.
size_t WorkingSet() {
  size_t ws = 0;
  for (int i = 0; i < kBlocks; ++i) ws += SizeOf(i);
  return ws * kThreads;
}

// Each generation: kThreads new threads each allocate kBlocks blocks, hold
// them until all are allocated, free them and exit. Returns the upstream
// bytes held after generation 10, after half of them and after the last.
template <class Pool>
std::tuple<size_t, size_t, size_t> Churn(Pool& pool, CountingResource& up) {
  size_t after10 = 0, half = 0;
  for (int g = 0; g < kGenerations; ++g) {
    std::atomic<int> ready{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&] {
        std::vector<void*> v;
        v.reserve(kBlocks);
        for (int i = 0; i < kBlocks; ++i) {
          void* p = pmr_allocate(pool.r(), SizeOf(i), 16);
          ASSERT_NE(p, nullptr);
          static_cast<unsigned char*>(p)[0] = 1;
          v.push_back(p);
        }
        ++ready;
        while (ready.load() < kThreads) std::this_thread::yield();
        for (int i = 0; i < kBlocks; ++i)
          pmr_deallocate(pool.r(), v[i], SizeOf(i), 16);
      });
    for (auto& th : threads) th.join();
    if (g == 9) after10 = up.outstanding_bytes();
    if (g == kGenerations / 2 - 1) half = up.outstanding_bytes();
  }
  return {after10, half, up.outstanding_bytes()};
}

// keep: max_free_bytes (0: the default).
pmr_pool_options Keep(size_t keep) {
  pmr_pool_options o = {};
  o.max_free_bytes = keep;
  return o;
}

struct Sync {
  explicit Sync(pmr_mem_resource* up, size_t keep = 0) {
    pmr_pool_options o = Keep(keep);
    pmr_synchronized_pool_init(&p, &o, up);
  }
  ~Sync() { pmr_synchronized_pool_destroy(&p); }
  pmr_mem_resource* r() { return &p.base; }
  size_t held() { return pmr_synchronized_pool_get_stats(&p).held_bytes; }
  pmr_synchronized_pool p;
};

struct TC {
  explicit TC(pmr_mem_resource* up, size_t keep = 0) {
    pmr_thread_cache_options o = {};
    o.pool = Keep(keep);
    pmr_thread_cache_init(&t, &o, up);
  }
  ~TC() { pmr_thread_cache_destroy(&t); }
  pmr_mem_resource* r() { return &t.base; }
  size_t held() { return pmr_thread_cache_get_stats(&t).held_bytes; }
  pmr_thread_cache t;
};

template <class Pool>
void ThreadChurnPlateaus() {
  CountingResource up;
  Pool pool(up.get());
  auto [after10, half, after] = Churn(pool, up);
  size_t ws = WorkingSet();
  EXPECT_EQ(pool.held(), up.outstanding_bytes());  // the query is exact
  // Pages come in segments of up to 1 MiB: two segments of slack (how far
  // a generation's threads spread over shards depends on the scheduler).
  const size_t slack = size_t{2} << 20;
  EXPECT_LE(after, ws * 3 / 2 + slack) << "working set " << ws;
  EXPECT_LE(after, half + slack) << "still growing in the second half";
  std::printf("held after 10 generations %zu, after %d %zu, working set %zu\n",
              after10, kGenerations, after, ws);
}

TEST(Growth, SynchronizedPoolThreadChurnPlateaus) {
  ThreadChurnPlateaus<Sync>();
}
TEST(Growth, ThreadCacheThreadChurnPlateaus) { ThreadChurnPlateaus<TC>(); }

// A producer allocates, a consumer frees, with about 64 KiB in flight, while
// both keep each other's locks busy: held memory stays within a small
// multiple of what is in flight.
template <class Pool>
void ProducerConsumerPlateaus() {
  CountingResource up;
  Pool pool(up.get());
  constexpr size_t kRing = 1024;  // 1024 blocks of 64 bytes in flight
#if defined(PMR_TSAN) || defined(PMR_ASAN)
  constexpr long kTotal = 400000;
#else
  constexpr long kTotal = 4000000;
#endif
  std::vector<std::atomic<void*>> ring(kRing);
  for (auto& s : ring) s.store(nullptr);
  size_t mid = 0;
  std::thread consumer([&] {
    for (long i = 0; i < kTotal; ++i) {
      std::atomic<void*>& s = ring[i % kRing];
      void* p;
      while ((p = s.exchange(nullptr)) == nullptr) std::this_thread::yield();
      pmr_deallocate(pool.r(), p, 64, 8);
    }
  });
  for (long i = 0; i < kTotal; ++i) {
    void* p = pmr_allocate(pool.r(), 64, 8);
    ASSERT_NE(p, nullptr);
    std::atomic<void*>& s = ring[i % kRing];
    while (s.load() != nullptr) std::this_thread::yield();
    s.store(p);
    if (i == kTotal / 10) mid = up.outstanding_bytes();
  }
  consumer.join();
  size_t end = up.outstanding_bytes();
  EXPECT_LE(end, mid + (size_t{1} << 20)) << "grew after a tenth of the run";
  EXPECT_LE(end, size_t{8} << 20);
  std::printf("held after %ld blocks %zu, at the end %zu\n", kTotal / 10, mid,
              end);
}

TEST(Growth, SynchronizedPoolProducerConsumerPlateaus) {
  ProducerConsumerPlateaus<Sync>();
}
TEST(Growth, ThreadCacheProducerConsumerPlateaus) {
  ProducerConsumerPlateaus<TC>();
}

}  // namespace

namespace {

// An upstream over malloc that refuses to hold more than `cap` bytes.
struct Capped {
  pmr_mem_resource base;
  size_t cap, held = 0;
  std::atomic<long> refused{0};
  std::mutex mu;
  explicit Capped(size_t c) : cap(c) { base.ops = &kOps; }
  static void* Allocate(pmr_mem_resource* self, size_t bytes, size_t align) {
    auto* c = reinterpret_cast<Capped*>(self);
    std::lock_guard<std::mutex> g(c->mu);
    if (c->held + bytes > c->cap) {
      ++c->refused;
      return nullptr;
    }
    void* p = pmr_allocate(pmr_malloc_resource(), bytes, align);
    if (p != nullptr) c->held += bytes;
    return p;
  }
  static void Deallocate(pmr_mem_resource* self, void* p, size_t bytes,
                         size_t align) {
    auto* c = reinterpret_cast<Capped*>(self);
    std::lock_guard<std::mutex> g(c->mu);
    c->held -= bytes;
    pmr_deallocate(pmr_malloc_resource(), p, bytes, align);
  }
  static const pmr_mem_resource_ops kOps;
};
const pmr_mem_resource_ops Capped::kOps = {
    Capped::Allocate, Capped::Deallocate, nullptr, nullptr, nullptr, nullptr,
    nullptr};

struct Unsync {
  explicit Unsync(pmr_mem_resource* up, size_t keep = 0) {
    pmr_pool_options o = Keep(keep);
    pmr_unsynchronized_pool_init(&p, &o, up);
  }
  ~Unsync() { pmr_unsynchronized_pool_destroy(&p); }
  pmr_mem_resource* r() { return &p.base; }
  size_t trim() { return pmr_unsynchronized_pool_trim(&p); }
  pmr_unsynchronized_pool p;
};
struct SyncT : Sync {
  using Sync::Sync;
  size_t trim() { return pmr_synchronized_pool_trim(&p); }
};
struct TCT : TC {
  using TC::TC;
  size_t trim() { return pmr_thread_cache_trim(&t); }
};

// Under a 32 MiB cap: fill with one size until upstream refuses, free it
// all, then fill with another size, four rounds: freed pages serve any
// class, so each round gets (almost) as many bytes as the first.
template <class Pool>
void CappedUpstreamServesEveryRound() {
  Capped up(size_t{32} << 20);
  Pool pool(&up.base);
  const size_t sizes[] = {64, 512, 48, 4096};
  size_t first = 0;
  for (size_t r = 0; r < 4; ++r) {
    std::vector<void*> v;
    for (void* p; (p = pmr_allocate(pool.r(), sizes[r], 16)) != nullptr;)
      v.push_back(p);
    size_t bytes = v.size() * sizes[r];
    if (r == 0) first = bytes;
    EXPECT_GE(bytes, first * 85 / 100) << "round " << r << " size " << sizes[r];
    for (void* p : v) pmr_deallocate(pool.r(), p, sizes[r], 16);
  }
  const size_t before = up.held;
  // trim says exactly what went back, segments freed on the way included.
  const size_t given = pool.trim();
  EXPECT_EQ(given, before - up.held);
  EXPECT_LT(up.held, size_t{1} << 20);  // freed, trimmed: (almost) nothing
}

// Under a 32 MiB cap: fill with small blocks until upstream refuses, free
// them all, then ask for large blocks (an interpreter growing a table): the
// pool gives its free pages back when upstream refuses and tries again, so
// they succeed at once, with no pause, as they would over malloc.
template <class Pool>
void CappedUpstreamServesLargeBlocksAfterSmallOnes() {
  Capped up(size_t{32} << 20);
  Pool pool(&up.base);
  for (int round = 0; round < 3; ++round) {
    std::vector<void*> v;
    for (void* p; (p = pmr_allocate(pool.r(), 64, 16)) != nullptr;)
      v.push_back(p);
    ASSERT_GT(v.size() * 64, size_t{24} << 20);
    for (void* p : v) pmr_deallocate(pool.r(), p, 64, 16);
    errno = EDOM;
    std::vector<void*> big;
    for (int i = 0; i < 6; ++i) {
      void* b = pmr_allocate(pool.r(), size_t{4} << 20, 16);
      ASSERT_NE(b, nullptr) << "round " << round << ", block " << i;
      big.push_back(b);
    }
    EXPECT_EQ(errno, EDOM);  // recovered: errno as it was
    for (void* b : big) pmr_deallocate(pool.r(), b, size_t{4} << 20, 16);
  }
}

// ... and the other way round: freed large blocks the pool keeps for reuse
// (max_free_bytes) go back when a segment for small blocks is refused.
template <class Pool>
void CappedUpstreamServesSmallBlocksAfterKeptLargeOnes() {
  Capped up(size_t{32} << 20);
  Pool pool(&up.base, size_t{64} << 20);  // keeps every freed block
  std::vector<void*> big;
  for (void* b; (b = pmr_allocate(pool.r(), size_t{4} << 20, 16)) != nullptr;)
    big.push_back(b);
  ASSERT_GE(big.size(), 6u);
  for (void* b : big) pmr_deallocate(pool.r(), b, size_t{4} << 20, 16);
  std::vector<void*> v;
  for (size_t i = 0; i < (size_t{20} << 20) / 64; ++i) {
    void* p = pmr_allocate(pool.r(), 64, 16);
    ASSERT_NE(p, nullptr) << "after " << i * 64 << " bytes";
    v.push_back(p);
  }
  for (void* p : v) pmr_deallocate(pool.r(), p, 64, 16);
}

TEST(Capped, UnsynchronizedPoolServesLargeBlocksAfterSmallOnes) {
  CappedUpstreamServesLargeBlocksAfterSmallOnes<Unsync>();
}
TEST(Capped, SynchronizedPoolServesLargeBlocksAfterSmallOnes) {
  CappedUpstreamServesLargeBlocksAfterSmallOnes<SyncT>();
}
TEST(Capped, ThreadCacheServesLargeBlocksAfterSmallOnes) {
  CappedUpstreamServesLargeBlocksAfterSmallOnes<TCT>();
}
TEST(Capped, UnsynchronizedPoolServesSmallBlocksAfterKeptLargeOnes) {
  CappedUpstreamServesSmallBlocksAfterKeptLargeOnes<Unsync>();
}
TEST(Capped, SynchronizedPoolServesSmallBlocksAfterKeptLargeOnes) {
  CappedUpstreamServesSmallBlocksAfterKeptLargeOnes<SyncT>();
}
TEST(Capped, ThreadCacheServesSmallBlocksAfterKeptLargeOnes) {
  CappedUpstreamServesSmallBlocksAfterKeptLargeOnes<TCT>();
}

TEST(Capped, UnsynchronizedPoolServesEveryRound) {
  CappedUpstreamServesEveryRound<Unsync>();
}
TEST(Capped, SynchronizedPoolServesEveryRound) {
  CappedUpstreamServesEveryRound<SyncT>();
}
TEST(Capped, ThreadCacheServesEveryRound) {
  CappedUpstreamServesEveryRound<TCT>();
}

}  // namespace
