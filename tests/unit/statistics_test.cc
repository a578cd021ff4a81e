// pmr_statistics: exact counts, peak, histogram, report, forwarding, threads,
// and use in front of and under other resources.
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "resources/pmr_monotonic_buffer.h"
#include "resources/pmr_statistics.h"
#include "resources/pmr_synchronized_pool.h"
#include "resources/pmr_unsynchronized_pool.h"
#include "tests/testkit/counting_resource.h"

namespace {

using pmrtest::Call;
using pmrtest::CountingResource;

class StatisticsTest : public ::testing::Test {
 protected:
  void SetUp() override { pmr_statistics_init(&s_, up_.get()); }
  void TearDown() override {
    pmr_statistics_destroy(&s_);
    EXPECT_EQ(up_.outstanding_blocks(), 0u);
    EXPECT_EQ(up_.mismatches(), 0u) << up_.last_mismatch();
  }
  pmr_mem_resource* r() { return &s_.base; }
  pmr_statistics_stats C() const { return pmr_statistics_get_stats(&s_); }

  CountingResource up_;
  pmr_statistics s_;
};

TEST(StatisticsBuckets, PowerOfTwoBoundaries) {
  EXPECT_EQ(pmr_statistics_bucket_of(0), 0u);
  EXPECT_EQ(pmr_statistics_bucket_of(1), 0u);
  EXPECT_EQ(pmr_statistics_bucket_of(8), 0u);
  EXPECT_EQ(pmr_statistics_bucket_of(9), 1u);
  EXPECT_EQ(pmr_statistics_bucket_of(16), 1u);
  EXPECT_EQ(pmr_statistics_bucket_of(17), 2u);
  EXPECT_EQ(pmr_statistics_bucket_of(32), 2u);
  EXPECT_EQ(pmr_statistics_bucket_of(33), 3u);
  EXPECT_EQ(pmr_statistics_bucket_of(1024), 7u);
  EXPECT_EQ(pmr_statistics_bucket_of(1025), 8u);
  EXPECT_EQ(pmr_statistics_bucket_of(1 << 20), 17u);
  EXPECT_EQ(pmr_statistics_bucket_of((1 << 20) + 1), 18u);
  EXPECT_EQ(pmr_statistics_bucket_of(SIZE_MAX), 18u);
  EXPECT_EQ(PMR_STATISTICS_BUCKETS, 19);
  for (unsigned i = 0; i + 1 < PMR_STATISTICS_BUCKETS; ++i) {
    size_t lim = pmr_statistics_bucket_limit(i);
    EXPECT_EQ(lim, size_t{8} << i);
    EXPECT_EQ(pmr_statistics_bucket_of(lim), i);
    EXPECT_EQ(pmr_statistics_bucket_of(lim + 1), i + 1);
  }
  EXPECT_EQ(pmr_statistics_bucket_limit(18), SIZE_MAX);
}

TEST_F(StatisticsTest, StartsAtZeroAndKnowsItsUpstream) {
  pmr_statistics_stats c = C();
  EXPECT_EQ(c.allocations, 0u);
  EXPECT_EQ(c.bytes_in_use, 0u);
  EXPECT_EQ(c.peak_bytes_in_use, 0u);
  for (unsigned i = 0; i < PMR_STATISTICS_BUCKETS; ++i)
    EXPECT_EQ(c.histogram[i], 0u);
  EXPECT_EQ(pmr_statistics_upstream(&s_), up_.get());
  EXPECT_TRUE(up_.calls().empty());
}

TEST_F(StatisticsTest, CountsAreExactAfterAKnownSequence) {
  const size_t sizes[] = {0, 8, 9, 16, 100, 4096, 1 << 20, (1 << 20) + 1};
  const size_t aligns[] = {1, 8, 16, 64, 8, 4096, 16, 32};
  std::vector<void*> ps;
  size_t total = 0;
  for (int i = 0; i < 8; ++i) {
    void* p = pmr_allocate(r(), sizes[i], aligns[i]);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % aligns[i], 0u);
    ps.push_back(p);
    total += sizes[i];
  }
  pmr_statistics_stats c = C();
  EXPECT_EQ(c.allocations, 8u);
  EXPECT_EQ(c.deallocations, 0u);
  EXPECT_EQ(c.failed_allocations, 0u);
  EXPECT_EQ(c.blocks_in_use, 8u);
  EXPECT_EQ(c.bytes_in_use, total);
  EXPECT_EQ(c.peak_bytes_in_use, total);
  EXPECT_EQ(c.total_bytes_allocated, total);
  EXPECT_EQ(c.histogram[0], 2u);   // 0, 8
  EXPECT_EQ(c.histogram[1], 2u);   // 9, 16
  EXPECT_EQ(c.histogram[4], 1u);   // 100 (65-128)
  EXPECT_EQ(c.histogram[9], 1u);   // 4096 (2049-4096)
  EXPECT_EQ(c.histogram[17], 1u);  // 1 MiB
  EXPECT_EQ(c.histogram[18], 1u);  // > 1 MiB
  uint64_t sum = 0;
  for (unsigned i = 0; i < PMR_STATISTICS_BUCKETS; ++i) sum += c.histogram[i];
  EXPECT_EQ(sum, 8u);

  // Forwarded unchanged: same sizes and alignments, in order.
  std::vector<Call> calls = up_.calls();
  ASSERT_EQ(calls.size(), 8u);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(calls[i].kind, Call::kAllocate);
    EXPECT_EQ(calls[i].p, ps[i]);
    EXPECT_EQ(calls[i].bytes, sizes[i]);
    EXPECT_EQ(calls[i].alignment, aligns[i]);
  }

  for (int i = 0; i < 8; i += 2)
    pmr_deallocate(r(), ps[i], sizes[i], aligns[i]);
  c = C();
  EXPECT_EQ(c.deallocations, 4u);
  EXPECT_EQ(c.blocks_in_use, 4u);
  EXPECT_EQ(c.bytes_in_use, 8u + 16 + 4096 + (1 << 20) + 1);
  EXPECT_EQ(c.peak_bytes_in_use, total);
  EXPECT_EQ(c.total_bytes_allocated, total);
  for (int i = 1; i < 8; i += 2)
    pmr_deallocate(r(), ps[i], sizes[i], aligns[i]);
  c = C();
  EXPECT_EQ(c.deallocations, 8u);
  EXPECT_EQ(c.blocks_in_use, 0u);
  EXPECT_EQ(c.bytes_in_use, 0u);
  EXPECT_EQ(c.histogram[0], 2u);  // the histogram counts allocations made
  EXPECT_EQ(up_.deallocations(), 8u);
}

TEST_F(StatisticsTest, FailedAllocationsAreCountedAndErrnoKept) {
  up_.fail_always();
  errno = 0;
  EXPECT_EQ(pmr_allocate(r(), 64, 8), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  up_.never_fail();
  // Bad arguments are rejected before the resource: not counted.
  EXPECT_EQ(pmr_allocate(r(), 64, 3), nullptr);
  EXPECT_EQ(pmr_allocate(r(), SIZE_MAX, 8), nullptr);
  void* p = pmr_allocate(r(), 64, 8);
  pmr_statistics_stats c = C();
  EXPECT_EQ(c.failed_allocations, 1u);
  EXPECT_EQ(c.allocations, 1u);
  EXPECT_EQ(c.histogram[3], 1u);
  pmr_deallocate(r(), p, 64, 8);
}

TEST_F(StatisticsTest, SuccessLeavesErrnoAlone) {
  errno = 4242;
  void* p = pmr_allocate(r(), 100, 8);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(errno, 4242);
  pmr_deallocate(r(), p, 100, 8);
  EXPECT_EQ(errno, 4242);
}

TEST_F(StatisticsTest, PeakFollowsTheMaximumAndResets) {
  void* a = pmr_allocate(r(), 1000, 8);
  void* b = pmr_allocate(r(), 3000, 8);
  pmr_deallocate(r(), b, 3000, 8);
  void* c = pmr_allocate(r(), 500, 8);
  EXPECT_EQ(C().peak_bytes_in_use, 4000u);
  EXPECT_EQ(C().bytes_in_use, 1500u);
  pmr_statistics_reset_peak(&s_);
  EXPECT_EQ(C().peak_bytes_in_use, 1500u);
  void* d = pmr_allocate(r(), 100, 8);
  EXPECT_EQ(C().peak_bytes_in_use, 1600u);
  pmr_deallocate(r(), d, 100, 8);
  pmr_deallocate(r(), c, 500, 8);
  EXPECT_EQ(C().peak_bytes_in_use, 1600u);
  pmr_statistics_reset_peak(&s_);
  EXPECT_EQ(C().peak_bytes_in_use, 1000u);
  pmr_deallocate(r(), a, 1000, 8);
  pmr_statistics_reset_peak(&s_);
  EXPECT_EQ(C().peak_bytes_in_use, 0u);
}

TEST_F(StatisticsTest, EqualOnlyToItself) {
  EXPECT_TRUE(pmr_is_equal(r(), r()));
  EXPECT_FALSE(pmr_is_equal(r(), up_.get()));
  pmr_statistics other;
  pmr_statistics_init(&other, up_.get());
  EXPECT_FALSE(pmr_is_equal(r(), &other.base));
  pmr_statistics_destroy(&other);
}

TEST(StatisticsDefault, NullUpstreamIsTheDefaultAtInit) {
  CountingResource up;
  pmr_mem_resource* prev = pmr_set_default_resource(up.get());
  pmr_statistics s;
  pmr_statistics_init(&s, nullptr);
  pmr_set_default_resource(prev);
  EXPECT_EQ(pmr_statistics_upstream(&s), up.get());
  void* p = pmr_allocate(&s.base, 10, 1);
  EXPECT_EQ(up.allocations(), 1u);
  pmr_deallocate(&s.base, p, 10, 1);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  pmr_statistics_destroy(&s);
}

TEST(StatisticsResize, ForwardsTryResizeAndAdjustsCounts) {
  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init(&m, nullptr);
  pmr_statistics s;
  pmr_statistics_init(&s, &m.base);
  void* p = pmr_allocate(&s.base, 100, 8);
  ASSERT_TRUE(pmr_try_resize(&s.base, p, 100, 300, 8));
  pmr_statistics_stats c = pmr_statistics_get_stats(&s);
  EXPECT_EQ(c.resizes, 1u);
  EXPECT_EQ(c.allocations, 1u);
  EXPECT_EQ(c.bytes_in_use, 300u);
  EXPECT_EQ(c.peak_bytes_in_use, 300u);
  EXPECT_EQ(c.total_bytes_allocated, 300u);
  ASSERT_TRUE(pmr_try_resize(&s.base, p, 300, 50, 8));
  c = pmr_statistics_get_stats(&s);
  EXPECT_EQ(c.resizes, 2u);
  EXPECT_EQ(c.bytes_in_use, 50u);
  EXPECT_EQ(c.peak_bytes_in_use, 300u);
  EXPECT_EQ(c.total_bytes_allocated, 300u);
  void* q = pmr_allocate(&s.base, 10, 8);
  // Not the latest block any more: the arena refuses, nothing changes.
  EXPECT_FALSE(pmr_try_resize(&s.base, p, 50, 60, 8));
  c = pmr_statistics_get_stats(&s);
  EXPECT_EQ(c.resizes, 2u);
  EXPECT_EQ(c.bytes_in_use, 60u);
  pmr_deallocate(&s.base, q, 10, 8);
  pmr_deallocate(&s.base, p, 50, 8);
  EXPECT_EQ(pmr_statistics_get_stats(&s).bytes_in_use, 0u);
  pmr_statistics_destroy(&s);
  pmr_monotonic_buffer_destroy(&m);

  // An upstream without try_resize: false, no count.
  pmr_statistics h;
  pmr_statistics_init(&h, pmr_malloc_resource());
  void* x = pmr_allocate(&h.base, 10, 8);
  EXPECT_FALSE(pmr_try_resize(&h.base, x, 10, 20, 8));
  EXPECT_EQ(pmr_statistics_get_stats(&h).resizes, 0u);
  EXPECT_EQ(pmr_statistics_get_stats(&h).bytes_in_use, 10u);
  pmr_deallocate(&h.base, x, 10, 8);
  pmr_statistics_destroy(&h);
}

std::string Report(const pmr_statistics* s) {
  char* buf = nullptr;
  size_t len = 0;
  FILE* f = open_memstream(&buf, &len);
  EXPECT_NE(f, nullptr);
  EXPECT_TRUE(pmr_statistics_report(s, f));
  fclose(f);
  std::string out(buf, len);
  free(buf);
  return out;
}

TEST_F(StatisticsTest, ReportShowsTheNumbers) {
  void* a = pmr_allocate(r(), 12, 8);
  void* b = pmr_allocate(r(), 3000, 8);
  void* c = pmr_allocate(r(), 2 << 20, 8);
  up_.fail_always();
  EXPECT_EQ(pmr_allocate(r(), 5, 8), nullptr);
  up_.never_fail();
  pmr_deallocate(r(), c, 2 << 20, 8);
  std::string rep = Report(&s_);
  char self[64];
  snprintf(self, sizeof self, "pmr_statistics %p", static_cast<void*>(&s_));
  EXPECT_NE(rep.find(self), std::string::npos) << rep;
  EXPECT_NE(rep.find("allocations:      3 (failed: 1)"), std::string::npos)
      << rep;
  EXPECT_NE(rep.find("deallocations:    1\n"), std::string::npos) << rep;
  EXPECT_NE(rep.find("in use:           2 blocks, 3012 bytes"),
            std::string::npos)
      << rep;
  EXPECT_NE(rep.find("peak in use:      2100164 bytes"), std::string::npos)
      << rep;
  EXPECT_NE(rep.find("total allocated:  2100164 bytes"), std::string::npos)
      << rep;
  EXPECT_NE(rep.find("        9 - 16        1\n"), std::string::npos) << rep;
  EXPECT_NE(rep.find("     2049 - 4096      1\n"), std::string::npos) << rep;
  EXPECT_NE(rep.find("> 1048576   1\n"), std::string::npos) << rep;
  EXPECT_EQ(rep.find(" 0 - 8 "), std::string::npos)
      << "empty buckets are left out\n"
      << rep;
  pmr_deallocate(r(), a, 12, 8);
  pmr_deallocate(r(), b, 3000, 8);
}

// Eight threads at once: every total exact, the peak within bounds.
TEST(StatisticsThreads, EightThreadsGiveExactTotals) {
  pmr_synchronized_pool pool;
  pmr_synchronized_pool_init(&pool, nullptr, nullptr);
  pmr_statistics s;
  pmr_statistics_init(&s, &pool.base);
  constexpr int kThreads = 8, kRounds = 20000, kKeep = 32;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&s, t] {
      std::vector<std::pair<void*, size_t>> live;
      for (int i = 0; i < kRounds; ++i) {
        size_t n = 1 + (i * 7 + t) % 200;  // 1..200
        void* p = pmr_allocate(&s.base, n, 8);
        ASSERT_NE(p, nullptr);
        live.emplace_back(p, n);
        if (live.size() > kKeep) {
          pmr_deallocate(&s.base, live.front().first, live.front().second, 8);
          live.erase(live.begin());
        }
      }
      for (auto& b : live) pmr_deallocate(&s.base, b.first, b.second, 8);
    });
  }
  for (auto& th : threads) th.join();
  // Replay each thread alone: its totals and the most it ever held.
  uint64_t total = 0, hist[PMR_STATISTICS_BUCKETS] = {};
  size_t max_one = 0, sum_of_max = 0;
  for (int t = 0; t < kThreads; ++t) {
    std::vector<size_t> live;
    size_t held = 0, most = 0;
    for (int i = 0; i < kRounds; ++i) {
      size_t n = 1 + (i * 7 + t) % 200;
      total += n;
      ++hist[pmr_statistics_bucket_of(n)];
      live.push_back(n);
      held += n;
      most = std::max(most, held);
      if (live.size() > kKeep) {
        held -= live.front();
        live.erase(live.begin());
      }
    }
    max_one = std::max(max_one, most);
    sum_of_max += most;
  }
  pmr_statistics_stats c = pmr_statistics_get_stats(&s);
  EXPECT_EQ(c.allocations, uint64_t{kThreads} * kRounds);
  EXPECT_EQ(c.deallocations, uint64_t{kThreads} * kRounds);
  EXPECT_EQ(c.failed_allocations, 0u);
  EXPECT_EQ(c.blocks_in_use, 0u);
  EXPECT_EQ(c.bytes_in_use, 0u);
  EXPECT_EQ(c.total_bytes_allocated, total);
  for (unsigned i = 0; i < PMR_STATISTICS_BUCKETS; ++i)
    EXPECT_EQ(c.histogram[i], hist[i]) << i;
  // At least what one thread held at its most (each thread's share of the
  // counter never goes negative), at most all of them at their most.
  EXPECT_GE(c.peak_bytes_in_use, max_one);
  EXPECT_LE(c.peak_bytes_in_use, sum_of_max);
  pmr_statistics_destroy(&s);
  pmr_synchronized_pool_destroy(&pool);
}

// Under a pool: it sees the pool's chunks, exactly what reaches upstream.
TEST(StatisticsStacking, AsTheUpstreamOfAPoolAndAnArena) {
  CountingResource up;
  pmr_statistics s;
  pmr_statistics_init(&s, up.get());
  pmr_unsynchronized_pool pool;
  pmr_unsynchronized_pool_init(&pool, nullptr, &s.base);
  std::vector<void*> v;
  for (int i = 0; i < 1000; ++i) v.push_back(pmr_allocate(&pool.base, 48, 8));
  v.push_back(
      pmr_allocate(&pool.base, 100000, 8));  // oversize: straight through
  pmr_statistics_stats c = pmr_statistics_get_stats(&s);
  EXPECT_EQ(c.allocations, up.allocations());
  EXPECT_EQ(c.bytes_in_use, up.outstanding_bytes());
  EXPECT_EQ(c.blocks_in_use, up.outstanding_blocks());
  EXPECT_GE(c.bytes_in_use, 1000u * 48 + 100000);
  pmr_unsynchronized_pool_destroy(&pool);
  c = pmr_statistics_get_stats(&s);
  EXPECT_EQ(c.blocks_in_use, 0u);
  EXPECT_EQ(c.bytes_in_use, 0u);
  EXPECT_EQ(c.deallocations, c.allocations);

  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init(&m, &s.base);
  for (int i = 0; i < 100; ++i)
    ASSERT_NE(pmr_allocate(&m.base, 100, 8), nullptr);
  c = pmr_statistics_get_stats(&s);
  EXPECT_EQ(c.bytes_in_use, up.outstanding_bytes());
  EXPECT_GE(c.bytes_in_use, 10000u);
  pmr_monotonic_buffer_destroy(&m);
  EXPECT_EQ(pmr_statistics_get_stats(&s).bytes_in_use, 0u);
  pmr_statistics_destroy(&s);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  EXPECT_EQ(up.mismatches(), 0u) << up.last_mismatch();
}

// In front of a pool: it sees what the program asks for.
TEST(StatisticsStacking, InFrontOfAPoolAndAnArena) {
  CountingResource up;
  pmr_unsynchronized_pool pool;
  pmr_unsynchronized_pool_init(&pool, nullptr, up.get());
  pmr_statistics s;
  pmr_statistics_init(&s, &pool.base);
  std::vector<void*> v;
  for (int i = 0; i < 100; ++i) v.push_back(pmr_allocate(&s.base, 24, 8));
  pmr_statistics_stats c = pmr_statistics_get_stats(&s);
  EXPECT_EQ(c.allocations, 100u);
  EXPECT_EQ(c.bytes_in_use, 2400u);
  EXPECT_EQ(c.histogram[2], 100u);
  EXPECT_LT(up.allocations(), 100u);  // the pool took few chunks
  for (void* p : v) pmr_deallocate(&s.base, p, 24, 8);
  EXPECT_EQ(pmr_statistics_get_stats(&s).bytes_in_use, 0u);
  pmr_statistics_destroy(&s);
  pmr_unsynchronized_pool_destroy(&pool);

  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init(&m, up.get());
  pmr_statistics_init(&s, &m.base);
  for (int i = 0; i < 10; ++i) pmr_allocate(&s.base, 1000, 16);
  EXPECT_EQ(pmr_statistics_get_stats(&s).bytes_in_use, 10000u);
  EXPECT_EQ(pmr_statistics_get_stats(&s).histogram[7], 10u);
  pmr_statistics_destroy(&s);
  pmr_monotonic_buffer_destroy(&m);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
}

}  // namespace
