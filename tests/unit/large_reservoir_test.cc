// The reservoir of freed large memory (resources/internal/reservoir.h,
// pmr_large_reservoir_* in resources/pmr_segment_cache.h): freed large
// blocks serve later ones of any size without a new mapping, adjacent ranges
// merge, a block grows in place into the range after it, kept memory goes
// back to the OS after the delay, beyond the bound and on trim; threads and
// fork as the rest of the engine. No timing: the delay is driven by the test
// clock, reuse is checked by address, mapping counts and minor faults.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "resources/internal/platform.h"
#include "resources/internal/reservoir.h"
#include "resources/pmr_segment_cache.h"
#include "resources/pmr_synchronized_pool.h"
#include "resources/pmr_thread_cache.h"
#include "tests/testkit/clock.h"
#include "tests/testkit/os_memory.h"

namespace {

constexpr size_t kMiB = size_t{1} << 20;

using pmrtest::Resident;

long Pages(size_t n) { return static_cast<long>(n / sysconf(_SC_PAGESIZE)); }

long MinorFaults() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_minflt;
}

char* MapRegion(size_t n) {
  void* m = mmap(nullptr, n, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return m == MAP_FAILED ? nullptr : static_cast<char*>(m);
}

class LargeReservoirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!pmr_impl_reservoir_on())
      GTEST_SKIP() << "the reservoir is off (AddressSanitizer)";
    pmr_large_reservoir_set_limits(PMR_LARGE_RESERVOIR_DEFAULT_MAX_BYTES,
                                   PMR_LARGE_RESERVOIR_DEFAULT_DELAY_MS);
    pmr_large_reservoir_trim();
    ASSERT_TRUE(
        pmr_synchronized_pool_init(&pool_, nullptr, pmr_malloc_resource()));
    r_ = &pool_.base;
  }
  void TearDown() override {
    if (r_ != nullptr) pmr_synchronized_pool_destroy(&pool_);
    pmr_large_reservoir_trim();
    pmr_large_reservoir_set_limits(PMR_LARGE_RESERVOIR_DEFAULT_MAX_BYTES,
                                   PMR_LARGE_RESERVOIR_DEFAULT_DELAY_MS);
  }
  pmr_synchronized_pool pool_;
  pmr_mem_resource* r_ = nullptr;
};

TEST_F(LargeReservoirTest, AFreedBlockServesASmallerOneWithNoMappingNoFault) {
  const size_t n = 20 * kMiB, m = 15 * kMiB;
  errno = 1234;
  char* a = static_cast<char*>(pmr_allocate(r_, n, 16));
  ASSERT_NE(a, nullptr);
  memset(a, 1, n);
  pmr_deallocate(r_, a, n, 16);
  pmr_large_reservoir_stats s = pmr_large_reservoir_get_stats();
  EXPECT_GE(s.kept_bytes, n);
  EXPECT_GE(s.resident_bytes, n);
  EXPECT_LE(s.resident_bytes, s.max_bytes);
  EXPECT_EQ(Resident(a, n), Pages(n));  // kept, still resident
  const long faults = MinorFaults();
  char* b = static_cast<char*>(pmr_allocate(r_, m, 16));
  ASSERT_NE(b, nullptr);
  memset(b, 2, m);
  EXPECT_LT(MinorFaults() - faults, 64);  // 3840 pages, none faulted in
  EXPECT_EQ(b, a);
  pmr_large_reservoir_stats t = pmr_large_reservoir_get_stats();
  EXPECT_EQ(t.hits, s.hits + 1);
  EXPECT_EQ(t.misses, s.misses);
  pmr_deallocate(r_, b, m, 16);
  EXPECT_EQ(errno, 1234);
  // A trim gives it all back to the OS.
  pmr_synchronized_pool_trim(&pool_);
  EXPECT_EQ(Resident(a, n), -1);
  EXPECT_EQ(pmr_large_reservoir_get_stats().kept_bytes, 0u);
}

// A request larger than any kept block's resident bytes: the freed blocks'
// resident pages are moved under it (Linux), so it faults nothing in, and it
// holds what they held.
TEST_F(LargeReservoirTest, ResidentPagesOfOtherRangesServeALargerRequest) {
#if !defined(__linux__)
  GTEST_SKIP() << "pages are moved only on Linux";
#endif
  const size_t n = 4 * kMiB;
  char* a = static_cast<char*>(pmr_allocate(r_, n, 16));
  char* b = static_cast<char*>(pmr_allocate(r_, n, 16));
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  memset(a, 1, n);
  memset(b, 2, n);
  pmr_deallocate(r_, a, n, 16);
  pmr_deallocate(r_, b, n, 16);
  pmr_large_reservoir_stats s = pmr_large_reservoir_get_stats();
  ASSERT_GE(s.resident_bytes, 2 * n);
  const long faults = MinorFaults();
  char* c = static_cast<char*>(pmr_allocate(r_, 2 * n, 16));
  ASSERT_NE(c, nullptr);
  pmr_large_reservoir_stats t = pmr_large_reservoir_get_stats();
  EXPECT_EQ(t.hits, s.hits + 1);
  EXPECT_EQ(t.moved_bytes, s.moved_bytes + n);
  // One block's bytes where they lay, the other's moved after them.
  ASSERT_TRUE(c == a || c == b);
  const char first = c == a ? 1 : 2;
  EXPECT_EQ(c[0], first);
  EXPECT_EQ(c[n - 1], first);
  EXPECT_EQ(c[2 * n - 1], 3 - first);
  // Resident before the program touches it: moved, not mapped afresh.
  EXPECT_EQ(Resident(c, 2 * n), Pages(2 * n));
  memset(c, 4, 2 * n);
#if !defined(PMR_TSAN) && !defined(__SANITIZE_THREAD__)
  // (ThreadSanitizer faults its shadow of the new addresses in.)
  EXPECT_LT(MinorFaults() - faults, 64);  // 2048 pages, none faulted in
#else
  (void)faults;
#endif
  EXPECT_EQ(Resident(c, 2 * n), Pages(2 * n));
  pmr_deallocate(r_, c, 2 * n, 16);
  pmr_synchronized_pool_trim(&pool_);
  EXPECT_EQ(pmr_large_reservoir_get_stats().kept_bytes, 0u);
  EXPECT_EQ(Resident(c, 2 * n), -1);
}

// The move under it all: pages of two adjacent mappings (a source the
// kernel's fixed move refuses before 6.17) land with their contents, the
// target stays mapped throughout, the source is gone.
TEST(OsMoveTest, PagesOfTwoMappingsMoveWithTheirContents) {
#if !defined(__linux__)
  GTEST_SKIP() << "pages are moved only on Linux";
#endif
  // Pieces of 512 KiB (ranges of less are given back, not split).
  const size_t ps = static_cast<size_t>(sysconf(_SC_PAGESIZE)), n = kMiB;
  char* src = MapRegion(2 * n);
  ASSERT_NE(src, nullptr);
  // The second half mapped again with another flag: two mappings.
  ASSERT_EQ(
      mmap(src + n, n, PROT_READ | PROT_WRITE,
           MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0),
      static_cast<void*>(src + n));
  for (size_t i = 0; i < 2 * n; i += ps) src[i] = static_cast<char>(i / ps + 1);
  char* dst = MapRegion(2 * n);
  ASSERT_NE(dst, nullptr);
  errno = 77;
  // From the middle of the first mapping into the second.
  EXPECT_TRUE(pmr_impl_os_move(src + n / 2, dst + ps, n));
  EXPECT_EQ(errno, 77);
  for (size_t i = 0; i < n; i += ps)
    EXPECT_EQ(dst[ps + i], static_cast<char>((n / 2 + i) / ps + 1)) << i;
  EXPECT_EQ(Resident(dst + ps, n), Pages(n));
  EXPECT_EQ(dst[0], 0);  // around it, the target as it was
  EXPECT_EQ(dst[ps + n], 0);
  EXPECT_EQ(Resident(src + n / 2, n), -1);  // the source is gone
  EXPECT_EQ(src[0], 1);                     // and nothing else
  EXPECT_EQ(src[2 * n - ps], static_cast<char>(2 * n / ps));
  munmap(src, 2 * n);
  munmap(dst, 2 * n);
}

TEST_F(LargeReservoirTest, AdjacentRangesMergeAndServeALargerRequest) {
  char* m = MapRegion(8 * kMiB);
  ASSERT_NE(m, nullptr);
  memset(m, 3, 8 * kMiB);
  ASSERT_TRUE(pmr_impl_reservoir_put(m + 4 * kMiB, 4 * kMiB, 4 * kMiB));
  ASSERT_TRUE(pmr_impl_reservoir_put(m, 4 * kMiB, 4 * kMiB));
  pmr_large_reservoir_stats s = pmr_large_reservoir_get_stats();
  EXPECT_EQ(s.ranges, 1u);
  EXPECT_EQ(s.kept_bytes, 8 * kMiB);
  EXPECT_EQ(s.resident_bytes, 8 * kMiB);
  EXPECT_EQ(pmr_impl_reservoir_take(8 * kMiB, 16, nullptr), m);
  EXPECT_EQ(pmr_large_reservoir_get_stats().kept_bytes, 0u);
  EXPECT_EQ(pmr_impl_reservoir_take(kMiB, 16, nullptr),
            nullptr);  // nothing kept
  munmap(m, 8 * kMiB);
}

TEST_F(LargeReservoirTest, KeptMemoryGoesBackAfterTheDelay) {
  pmrtest::FakeClock clock;
  char* m = MapRegion(4 * kMiB);
  ASSERT_NE(m, nullptr);
  memset(m, 4, 4 * kMiB);
  ASSERT_TRUE(pmr_impl_reservoir_put(m, 4 * kMiB, 4 * kMiB));
  const size_t purged = pmr_large_reservoir_get_stats().purged_bytes;
  clock.AdvanceMs(PMR_LARGE_RESERVOIR_DEFAULT_DELAY_MS - 1);
  EXPECT_TRUE(pmr_impl_reservoir_tick());
  EXPECT_EQ(Resident(m, 4 * kMiB), Pages(4 * kMiB));
  clock.AdvanceMs(2);
  EXPECT_FALSE(pmr_impl_reservoir_tick());
  EXPECT_EQ(Resident(m, 4 * kMiB), -1);
  EXPECT_EQ(pmr_large_reservoir_get_stats().purged_bytes, purged + 4 * kMiB);
}

TEST_F(LargeReservoirTest, APoolsSlowPathsPurgeWhatItKept) {
  pmrtest::FakeClock clock;
  const size_t n = 4 * kMiB;
  char* a = static_cast<char*>(pmr_allocate(r_, n, 16));
  ASSERT_NE(a, nullptr);
  memset(a, 5, n);
  pmr_deallocate(r_, a, n, 16);
  EXPECT_EQ(Resident(a, n), Pages(n));
  clock.AdvanceMs(PMR_LARGE_RESERVOIR_DEFAULT_DELAY_MS + 1);
  // Small allocations only: their slow paths tell the reservoir.
  std::vector<void*> v;
  for (int i = 0; i < 20000; ++i) v.push_back(pmr_allocate(r_, 64, 8));
  for (void* p : v) pmr_deallocate(r_, p, 64, 8);
  EXPECT_EQ(Resident(a, n), -1);
}

TEST_F(LargeReservoirTest, KeptResidentBytesNeverExceedTheBound) {
  pmrtest::FakeClock clock;
  pmr_large_reservoir_set_limits(8 * kMiB, 1000);
  char* m = MapRegion(16 * kMiB);
  ASSERT_NE(m, nullptr);
  memset(m, 6, 16 * kMiB);
  char* parts[3] = {m, m + 5 * kMiB, m + 10 * kMiB};  // not adjacent
  for (char* p : parts) {
    ASSERT_TRUE(pmr_impl_reservoir_put(p, 4 * kMiB, 4 * kMiB));
    EXPECT_LE(pmr_large_reservoir_get_stats().resident_bytes, 8 * kMiB);
    clock.AdvanceMs(1);
  }
  EXPECT_EQ(Resident(parts[0], 4 * kMiB), -1);  // the oldest went back
  EXPECT_EQ(Resident(parts[1], 4 * kMiB), Pages(4 * kMiB));
  EXPECT_EQ(Resident(parts[2], 4 * kMiB), Pages(4 * kMiB));
  pmr_large_reservoir_trim();
  EXPECT_EQ(Resident(parts[2], 4 * kMiB), -1);
  munmap(m, 16 * kMiB);
  // Bound 0: nothing kept.
  pmr_large_reservoir_set_limits(0, 1000);
  char* p = MapRegion(4 * kMiB);
  ASSERT_NE(p, nullptr);
  EXPECT_FALSE(pmr_impl_reservoir_put(p, 4 * kMiB, 4 * kMiB));
  munmap(p, 4 * kMiB);
}

TEST_F(LargeReservoirTest, ABlockGrowsInPlaceIntoTheRangeAfterIt) {
  char* m = MapRegion(32 * kMiB);
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(pmr_impl_reservoir_put(m, 32 * kMiB, 0));
  char* b = static_cast<char*>(pmr_allocate(r_, 4 * kMiB, 16));
  ASSERT_EQ(b, m);  // carved from the front of the one range
  memset(b, 7, 4 * kMiB);
  const size_t grown = pmr_large_reservoir_get_stats().grown;
  ASSERT_TRUE(pmr_try_resize(r_, b, 4 * kMiB, 10 * kMiB, 16));
  EXPECT_EQ(pmr_large_reservoir_get_stats().grown, grown + 1);
  b[10 * kMiB - 1] = 8;
  EXPECT_EQ(b[0], 7);
  EXPECT_FALSE(pmr_try_resize(r_, b, 10 * kMiB, 40 * kMiB, 16));
  pmr_deallocate(r_, b, 10 * kMiB, 16);
  pmr_large_reservoir_stats s = pmr_large_reservoir_get_stats();
  EXPECT_EQ(s.ranges, 1u);  // merged back whole
  EXPECT_EQ(s.kept_bytes, 32 * kMiB);
  pmr_large_reservoir_trim();
  EXPECT_EQ(Resident(m, 32 * kMiB), -1);
}

TEST_F(LargeReservoirTest, ImpossibleRequestsChangeNothing) {
  char* a = static_cast<char*>(pmr_allocate(r_, 8 * kMiB, 16));
  ASSERT_NE(a, nullptr);
  pmr_deallocate(r_, a, 8 * kMiB, 16);
  pmr_large_reservoir_stats s = pmr_large_reservoir_get_stats();
  for (size_t n : {SIZE_MAX, SIZE_MAX - 4096, SIZE_MAX / 2 + 1}) {
    errno = 0;
    EXPECT_EQ(pmr_allocate(r_, n, 16), nullptr);
    EXPECT_EQ(errno, ENOMEM);
  }
  // A refusal gives kept memory back before its second try, as before the
  // reservoir: nothing more is kept, nothing in use changed.
  EXPECT_LE(pmr_large_reservoir_get_stats().kept_bytes, s.kept_bytes);
  EXPECT_LE(pmr_synchronized_pool_get_stats(&pool_).held_bytes, 2 * kMiB);
}

TEST_F(LargeReservoirTest, ThreadsShareIt) {
  pmr_thread_cache tc;
  ASSERT_TRUE(pmr_thread_cache_init(&tc, nullptr, pmr_malloc_resource()));
  pmr_mem_resource* r = &tc.base;
  std::atomic<int> bad{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t) {
    ts.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t) + 1);
      std::vector<std::pair<char*, size_t>> live;
      for (int i = 0; i < 60; ++i) {
        size_t n = (2 + rng() % 6) * kMiB + rng() % 4096;
        char* p = static_cast<char*>(pmr_allocate(r, n, 16));
        if (p == nullptr) {
          ++bad;
          continue;
        }
        p[0] = p[n - 1] = static_cast<char>(t);
        live.emplace_back(p, n);
        if (live.size() > 3) {
          size_t k = rng() % live.size();
          auto [q, m] = live[k];
          if (q[0] != t || q[m - 1] != t) ++bad;
          pmr_deallocate(r, q, m, 16);
          live.erase(live.begin() + static_cast<long>(k));
        }
      }
      for (auto [q, m] : live) pmr_deallocate(r, q, m, 16);
    });
  }
  for (auto& t : ts) t.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(pmr_large_reservoir_get_stats().hits, 0u);
  EXPECT_LE(pmr_large_reservoir_get_stats().resident_bytes,
            PMR_LARGE_RESERVOIR_DEFAULT_MAX_BYTES);
  pmr_thread_cache_trim(&tc);
  EXPECT_EQ(pmr_large_reservoir_get_stats().kept_bytes, 0u);
  pmr_thread_cache_destroy(&tc);
}

TEST_F(LargeReservoirTest, AForkedChildUsesIt) {
  std::atomic<bool> stop{false};
  std::thread busy([&] {
    while (!stop.load()) {
      void* p = pmr_allocate(r_, 3 * kMiB, 16);
      if (p != nullptr) pmr_deallocate(r_, p, 3 * kMiB, 16);
    }
  });
  for (int i = 0; i < 10; ++i) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      char* p = static_cast<char*>(pmr_allocate(r_, 5 * kMiB, 16));
      if (p == nullptr) _exit(1);
      memset(p, 9, 5 * kMiB);
      pmr_deallocate(r_, p, 5 * kMiB, 16);
      p = static_cast<char*>(pmr_allocate(r_, 4 * kMiB, 16));
      _exit(p == nullptr ? 2 : 0);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  stop = true;
  busy.join();
}

}  // namespace
