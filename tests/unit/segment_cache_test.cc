// pmr_segment_cache: segments given back by one pool serve the next without
// a new mapping; the bound holds under many threads; the delay gives their
// memory back; trim empties the cache; fork keeps it consistent.
#include "resources/pmr_segment_cache.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "resources/pmr_synchronized_pool.h"
#include "resources/pmr_thread_cache.h"
#include "resources/pmr_unsynchronized_pool.h"
#include "tests/testkit/clock.h"

namespace {

// One kind of pool over the malloc resource, made and destroyed by a test.
enum class Kind { kUnsync, kSync, kThreadCache };

class AnyPool {
 public:
  explicit AnyPool(Kind k) : kind_(k) {
    switch (k) {
      case Kind::kUnsync:
        pmr_unsynchronized_pool_init(&u_, nullptr, pmr_malloc_resource());
        break;
      case Kind::kSync:
        pmr_synchronized_pool_init(&s_, nullptr, pmr_malloc_resource());
        break;
      case Kind::kThreadCache:
        pmr_thread_cache_init(&t_, nullptr, pmr_malloc_resource());
        break;
    }
  }
  ~AnyPool() {
    switch (kind_) {
      case Kind::kUnsync:
        pmr_unsynchronized_pool_destroy(&u_);
        break;
      case Kind::kSync:
        pmr_synchronized_pool_destroy(&s_);
        break;
      case Kind::kThreadCache:
        pmr_thread_cache_destroy(&t_);
        break;
    }
  }
  pmr_mem_resource* r() {
    return kind_ == Kind::kUnsync ? &u_.base
           : kind_ == Kind::kSync ? &s_.base
                                  : &t_.base;
  }
  // n blocks of 64 bytes, written, then freed.
  void Use(size_t n) {
    std::vector<void*> v;
    for (size_t i = 0; i < n; ++i) {
      void* p = pmr_allocate(r(), 64, 8);
      ASSERT_NE(p, nullptr);
      *static_cast<size_t*>(p) = i;
      v.push_back(p);
    }
    for (size_t i = 0; i < n; ++i) {
      ASSERT_EQ(*static_cast<size_t*>(v[i]), i);
      pmr_deallocate(r(), v[i], 64, 8);
    }
  }

 private:
  Kind kind_;
  pmr_unsynchronized_pool u_;
  pmr_synchronized_pool s_;
  pmr_thread_cache t_;
};

class SegmentCacheTest : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    pmr_segment_cache_set_limits(PMR_SEGMENT_CACHE_DEFAULT_MAX_BYTES,
                                 PMR_SEGMENT_CACHE_DEFAULT_DELAY_MS);
    pmr_segment_cache_trim();
  }
  void TearDown() override {
    pmr_segment_cache_set_limits(PMR_SEGMENT_CACHE_DEFAULT_MAX_BYTES,
                                 PMR_SEGMENT_CACHE_DEFAULT_DELAY_MS);
    pmr_segment_cache_trim();
  }
};

TEST_P(SegmentCacheTest, ASegmentGivenBackIsReusedWithoutANewMapping) {
  {
    AnyPool a(GetParam());
    a.Use(1000);
  }
  const pmr_segment_cache_stats s0 = pmr_segment_cache_get_stats();
  ASSERT_GE(s0.cached_bytes, size_t{256} << 10);  // a's segment
  EXPECT_EQ(s0.resident_bytes, s0.cached_bytes);
  {
    AnyPool b(GetParam());
    b.Use(1000);
    const pmr_segment_cache_stats s1 = pmr_segment_cache_get_stats();
    EXPECT_EQ(s1.hits, s0.hits + 1);
    EXPECT_EQ(s1.misses, s0.misses);  // no new mapping
    EXPECT_LT(s1.cached_bytes, s0.cached_bytes);
  }
  EXPECT_EQ(pmr_segment_cache_get_stats().cached_bytes, s0.cached_bytes);
}

TEST_P(SegmentCacheTest, TrimEmptiesTheCache) {
  {
    AnyPool a(GetParam());
    a.Use(20000);
  }
  const size_t cached = pmr_segment_cache_get_stats().cached_bytes;
  ASSERT_GT(cached, 0u);
  EXPECT_EQ(pmr_segment_cache_trim(), cached);
  const pmr_segment_cache_stats st = pmr_segment_cache_get_stats();
  EXPECT_EQ(st.cached_bytes, 0u);
  EXPECT_EQ(st.resident_bytes, 0u);
}

TEST_P(SegmentCacheTest, WithNoRoomSegmentsGoBackToTheOs) {
  pmr_segment_cache_set_limits(0, PMR_SEGMENT_CACHE_DEFAULT_DELAY_MS);
  const size_t misses = pmr_segment_cache_get_stats().misses;
  for (int i = 0; i < 3; ++i) {
    AnyPool a(GetParam());
    a.Use(1000);
  }
  const pmr_segment_cache_stats st = pmr_segment_cache_get_stats();
  EXPECT_EQ(st.cached_bytes, 0u);
  EXPECT_EQ(st.misses, misses + 3);
  EXPECT_EQ(st.max_bytes, 0u);
}

// A segment cached for the delay gives its memory back when the cache is
// next used; the segment itself stays cached and serves again.
TEST_P(SegmentCacheTest, ASegmentUnusedForTheDelayGivesItsMemoryBack) {
  pmrtest::FakeClock clock;
  {
    AnyPool a(GetParam());
    a.Use(1000);
  }
  {
    AnyPool b(GetParam());  // holds the first while a second is cached
    b.Use(1000);
    {
      AnyPool c(GetParam());
      c.Use(1000);
    }
    const pmr_segment_cache_stats s0 = pmr_segment_cache_get_stats();
    ASSERT_GT(s0.cached_bytes, 0u);
    EXPECT_EQ(s0.resident_bytes, s0.cached_bytes);
    clock.AdvanceMs(PMR_SEGMENT_CACHE_DEFAULT_DELAY_MS + 100);
  }  // b's segment goes in (a use of the cache): the older one is due
  const pmr_segment_cache_stats s1 = pmr_segment_cache_get_stats();
  EXPECT_LT(s1.resident_bytes, s1.cached_bytes);
  AnyPool d(GetParam());
  d.Use(3000);  // the cached segments serve, reading as written
}

// A pool that gave segments to the cache and then needs no more (no use of
// the cache follows) still gets their memory back to the OS after the
// delay: its own allocation slow paths tell the cache.
TEST_P(SegmentCacheTest, APoolThatNeedsNoMoreSegmentsLetsTheCacheGiveBack) {
  pmrtest::FakeClock clock;
  AnyPool a(GetParam());
  pmr_mem_resource* r = a.r();
  // 4 MiB of 64-byte blocks, then all freed: segments beyond the pool's
  // retention (1 MiB) are free, but the pool grew just now, so they wait.
  std::vector<void*> v;
  for (int i = 0; i < 65536; ++i) {
    v.push_back(pmr_allocate(r, 64, 8));
    ASSERT_NE(v.back(), nullptr);
  }
  for (void* p : v) pmr_deallocate(r, p, 64, 8);
  v.clear();
  // Slow paths of other classes: 128 KiB of blocks each, pages from the
  // free pages the pool keeps (no segment).
  auto churn = [&](size_t size) {
    for (size_t i = 0; i < (size_t{128} << 10) / size; ++i) {
      v.push_back(pmr_allocate(r, size, 8));
      ASSERT_NE(v.back(), nullptr);
      std::memset(v.back(), 1, size);
    }
    for (void* p : v) pmr_deallocate(r, p, size, 8);
    v.clear();
  };
  const size_t cached0 = pmr_segment_cache_get_stats().cached_bytes;
  clock.AdvanceMs(1100);  // past the pool's give-back delay
  churn(128);
  const pmr_segment_cache_stats s1 = pmr_segment_cache_get_stats();
  ASSERT_GT(s1.cached_bytes, cached0);  // the pool gave segments
  EXPECT_EQ(s1.resident_bytes, s1.cached_bytes);
  clock.AdvanceMs(PMR_SEGMENT_CACHE_DEFAULT_DELAY_MS + 100);
  for (size_t size : {256, 512, 1024, 2048}) churn(size);
  const pmr_segment_cache_stats s2 = pmr_segment_cache_get_stats();
  EXPECT_EQ(s2.hits, s1.hits);  // the cache was not used meanwhile
  EXPECT_EQ(s2.misses, s1.misses);
  EXPECT_EQ(s2.cached_bytes, s1.cached_bytes);
  EXPECT_EQ(s2.resident_bytes, 0u);  // yet its memory went back
  churn(64);                         // and the pool still serves
}

TEST_P(SegmentCacheTest, TheBoundHoldsUnderManyThreadsMakingPools) {
  const size_t kMax = size_t{3} << 20;
  pmr_segment_cache_set_limits(kMax, PMR_SEGMENT_CACHE_DEFAULT_DELAY_MS);
  std::atomic<bool> stop{false};
  std::atomic<size_t> worst{0};
  std::thread watcher([&] {
    while (!stop.load()) {
      size_t c = pmr_segment_cache_get_stats().cached_bytes;
      if (c > worst.load()) worst = c;
    }
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        AnyPool p(GetParam());
        p.Use(20000);  // 1.3 MB: two or three segments
      }
    });
  for (auto& th : threads) th.join();
  stop = true;
  watcher.join();
  EXPECT_LE(worst.load(), kMax);
  EXPECT_GT(pmr_segment_cache_get_stats().hits, 0u);
}

// fork() while other threads make and destroy pools: the child's cache is
// consistent (it makes, uses and destroys pools, and trims the cache).
TEST_P(SegmentCacheTest, ForkWhileOtherThreadsMakePools) {
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t)
    threads.emplace_back([&] {
      while (!stop.load()) {
        AnyPool p(GetParam());
        p.Use(5000);
      }
    });
  for (int round = 0; round < 5; ++round) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      // No malloc here: the other threads may have held the allocator's
      // lock at the fork (glibc's malloc is fork-safe, ASan's is not).
      static void* v[5000];
      int bad = 0;
      for (int i = 0; i < 3; ++i) {
        AnyPool p(GetParam());
        for (void*& b : v) {
          b = pmr_allocate(p.r(), 64, 8);
          if (b == nullptr) ++bad;
        }
        for (void* b : v) pmr_deallocate(p.r(), b, 64, 8);
      }
      pmr_segment_cache_trim();
      if (pmr_segment_cache_get_stats().cached_bytes != 0) ++bad;
      _exit(bad == 0 ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << round;
  }
  stop = true;
  for (auto& th : threads) th.join();
}

// An oversize block that is a segment of a pool over the pool (aligned to a
// page, a segment's size or a little more) goes to the cache too when its
// pool does not keep it, and serves the next such block; other large
// blocks go back to the OS; a pool's own segment never takes a cached
// block whose size is not a whole number of pages.
TEST_F(SegmentCacheTest, SegmentsOfAPoolOverAPoolAreCachedToo) {
  pmr_pool_options o = {};
  o.max_free_bytes = 1;  // the pool keeps none
  const size_t kBig = (size_t{1} << 20) + 100, kPage = size_t{64} << 10;
  auto once = [&](size_t align) {
    pmr_unsynchronized_pool a;
    pmr_unsynchronized_pool_init(&a, &o, pmr_malloc_resource());
    void* b = pmr_allocate(&a.base, kBig, align);
    EXPECT_NE(b, nullptr);
    memset(b, 1, kBig);
    pmr_deallocate(&a.base, b, kBig, align);
    pmr_unsynchronized_pool_destroy(&a);
  };
  once(16);  // an array: back to the OS
  EXPECT_EQ(pmr_segment_cache_get_stats().cached_bytes, 0u);
  once(kPage);
  const pmr_segment_cache_stats s0 = pmr_segment_cache_get_stats();
  ASSERT_GE(s0.cached_bytes, kBig);
  {
    AnyPool p(Kind::kUnsync);  // its segments: not the block
    p.Use(1000);
    EXPECT_GE(pmr_segment_cache_get_stats().cached_bytes, kBig);
  }
  const size_t hits = pmr_segment_cache_get_stats().hits;
  once(kPage);
  EXPECT_EQ(pmr_segment_cache_get_stats().hits, hits + 1);
}

long RssKib() {
  long pages = 0, resident = 0;
  FILE* f = fopen("/proc/self/statm", "r");
  if (f == nullptr) return -1;
  if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = -1;
  fclose(f);
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

// After the process-wide trim, what pools made and destroyed held is gone
// from the process: resident memory is back within 1 MiB of the start.
TEST_P(SegmentCacheTest, AfterTheTrimResidentMemoryIsBackWhereItStarted) {
  std::vector<void*> blocks;  // the test's own memory, allocated first
  blocks.reserve(20000);
  const long before = RssKib();
  ASSERT_GT(before, 0);
  for (int i = 0; i < 4; ++i) {
    AnyPool p(GetParam());
    for (int j = 0; j < 20000; ++j) {
      void* b = pmr_allocate(p.r(), 256, 8);
      ASSERT_NE(b, nullptr);
      memset(b, j, 256);  // 5 MB resident
      blocks.push_back(b);
    }
    for (void* b : blocks) pmr_deallocate(p.r(), b, 256, 8);
    blocks.clear();
  }
  EXPECT_GT(pmr_segment_cache_get_stats().resident_bytes, size_t{1} << 20);
  pmr_segment_cache_trim();
  EXPECT_LE(RssKib(), before + 1024);
}

std::string KindName(const ::testing::TestParamInfo<Kind>& info) {
  static const char* const kNames[] = {"unsynchronized", "synchronized",
                                       "thread_cache"};
  return kNames[static_cast<int>(info.param)];
}

// The cache's own entry points (resources/internal/segment_cache.h,
// platform.h), for what the pools cannot be made to ask for exactly.
extern "C" {
void* pmr_impl_os_map(size_t bytes, size_t alignment);
void pmr_impl_os_unmap(void* p, size_t bytes);
void* pmr_impl_segment_cache_take(size_t bytes, size_t most, size_t unit,
                                  size_t* got, bool* warm);
bool pmr_impl_segment_cache_put(void* p, size_t bytes);
}

// A segment taken whose memory went back already is faulted in again by its
// taker: the cache gives back as much resident memory first (here a newer
// segment too large for the request), as it does on a miss.
TEST(SegmentCacheEntries, AColdHitSendsAsMuchResidentMemoryBack) {
  pmr_segment_cache_set_limits(PMR_SEGMENT_CACHE_DEFAULT_MAX_BYTES,
                               PMR_SEGMENT_CACHE_DEFAULT_DELAY_MS);
  pmr_segment_cache_trim();
  pmrtest::FakeClock clock;
  const size_t kSmall = size_t{256} << 10, kLarge = size_t{1} << 20;
  const size_t kAlign = size_t{1} << 20;  // PMR_IMPL_SEGMENT_CACHE_MAX
  void* small = pmr_impl_os_map(kSmall, kAlign);
  void* large = pmr_impl_os_map(kLarge, kAlign);
  ASSERT_NE(small, nullptr);
  ASSERT_NE(large, nullptr);
  std::memset(small, 1, kSmall);
  std::memset(large, 2, kLarge);
  ASSERT_TRUE(pmr_impl_segment_cache_put(small, kSmall));
  clock.AdvanceMs(PMR_SEGMENT_CACHE_DEFAULT_DELAY_MS + 100);
  ASSERT_TRUE(
      pmr_impl_segment_cache_put(large, kLarge));  // the small one is due
  pmr_segment_cache_stats st = pmr_segment_cache_get_stats();
  ASSERT_EQ(st.cached_bytes, kSmall + kLarge);
  ASSERT_EQ(st.resident_bytes, kLarge);
  size_t got = 0;
  bool warm = true;
  void* p = pmr_impl_segment_cache_take(kSmall, kSmall, size_t{64} << 10, &got,
                                        &warm);
  EXPECT_EQ(p, small);
  EXPECT_EQ(got, kSmall);
  EXPECT_FALSE(warm);
  st = pmr_segment_cache_get_stats();
  EXPECT_EQ(st.cached_bytes, kLarge);
  EXPECT_EQ(st.resident_bytes, 0u);  // the large one's memory went back
  pmr_impl_os_unmap(p, kSmall);
  EXPECT_EQ(pmr_segment_cache_trim(), kLarge);
}

INSTANTIATE_TEST_SUITE_P(Pools, SegmentCacheTest,
                         ::testing::Values(Kind::kUnsync, Kind::kSync,
                                           Kind::kThreadCache),
                         KindName);

}  // namespace
