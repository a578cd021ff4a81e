// pmr_deallocate_unsized: the pools and the thread cache take a pooled
// block back without its size (their deallocate_unsized op); statistics
// goes through usable_size; every other block and resource answers 0 and
// is left alone.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "mem_resource/pmr_mem_resource.h"
#include "resources/pmr_debug_resource.h"
#include "resources/pmr_monotonic_buffer.h"
#include "resources/pmr_statistics.h"
#include "resources/pmr_synchronized_pool.h"
#include "resources/pmr_thread_cache.h"
#include "resources/pmr_unsynchronized_pool.h"
#include "tests/testkit/counting_resource.h"
#include "tests/testkit/pools.h"

namespace {

using Pool = pmrtest::PoolOfKind;

class DeallocateUnsized : public ::testing::TestWithParam<int> {};

// Blocks of every pooled size, asked with any bytes and alignment up to
// 4 KiB, go back without their size: each answer is the block's usable
// size, and once all are back the pool holds nothing of its upstream's
// after a trim (a block left out keeps its segment).
TEST_P(DeallocateUnsized, EveryPooledBlockGoesBack) {
  pmrtest::CountingResource up;
  {
    Pool pool(GetParam(), nullptr, up.get());
    pmr_mem_resource* r = pool.get();
    struct Block {
      void* p;
      size_t usable, alignment;
    };
    std::vector<Block> blocks;
    for (size_t n = 1; n <= 16384; n += (n < 512 ? 7 : 301)) {
      for (size_t a : {size_t{8}, size_t{16}, size_t{64}, size_t{4096}}) {
        size_t u = pmr_good_size(r, n, a);
        ASSERT_GE(u, n) << n << " " << a;
        void* p = pmr_allocate(r, n, a);
        ASSERT_NE(p, nullptr);
        ASSERT_EQ(reinterpret_cast<uintptr_t>(p) % a, 0u);
        memset(p, 0x5a, n);
        EXPECT_EQ(pmr_usable_size(r, p, a), u);
        blocks.push_back({p, u, a});
      }
    }
    void* kept = pmr_allocate(r, 100, 16);
    for (const Block& b : blocks)
      EXPECT_EQ(pmr_deallocate_unsized(r, b.p, b.alignment), b.usable);
    pool.trim();
    EXPECT_GT(up.outstanding_blocks(), 0u);  // kept's segment
    EXPECT_EQ(pmr_deallocate_unsized(r, kept, 16), 112u);
    pool.trim();
    EXPECT_EQ(up.outstanding_blocks(), 0u);
  }
  EXPECT_EQ(up.mismatches(), 0u);
}

// Blocks another thread allocated (the thread-safe ones: a remote free).
TEST_P(DeallocateUnsized, AnotherThreadsBlocksGoBack) {
  if (GetParam() == 0) GTEST_SKIP() << "one thread only";
  pmrtest::CountingResource up;
  {
    Pool pool(GetParam(), nullptr, up.get());
    pmr_mem_resource* r = pool.get();
    std::vector<void*> blocks;
    std::thread t([&] {
      for (size_t i = 0; i < 3000; ++i)
        blocks.push_back(pmr_allocate(r, 16 + (i * 37) % 9000, 16));
    });
    t.join();
    for (size_t i = 0; i < blocks.size(); ++i)
      ASSERT_EQ(pmr_deallocate_unsized(r, blocks[i], 16),
                pmr_good_size(r, 16 + (i * 37) % 9000, 16))
          << i;
    pool.trim();
    EXPECT_EQ(up.outstanding_blocks(), 0u);
  }
}

// An oversize block: 0, and the block is still the caller's to use and to
// deallocate with its size.
TEST_P(DeallocateUnsized, OversizeBlocksAnswerZeroAndStay) {
  Pool pool(GetParam());
  pmr_mem_resource* r = pool.get();
  for (size_t n : {size_t{16385}, size_t{100000}, size_t{1} << 20}) {
    auto* p = static_cast<unsigned char*>(pmr_allocate(r, n, 16));
    ASSERT_NE(p, nullptr);
    memset(p, 1, n);
    EXPECT_EQ(pmr_deallocate_unsized(r, p, 16), 0u) << n;
    memset(p, 2, n);
    pmr_deallocate(r, p, n, 16);
  }
  void* aligned = pmr_allocate(r, 100, 8192);  // above the pages' alignment
  EXPECT_EQ(pmr_deallocate_unsized(r, aligned, 8192), 0u);
  pmr_deallocate(r, aligned, 100, 8192);
}

std::vector<std::string>* g_reports = nullptr;
void Capture(const char* message, void*) { g_reports->push_back(message); }

// A block given back twice is reported (and the second call does
// nothing): the same check as pmr_deallocate's.
TEST_P(DeallocateUnsized, ASecondFreeIsReported) {
  std::vector<std::string> reports;
  g_reports = &reports;
  pmr_misuse_handler old = pmr_set_misuse_handler(Capture, nullptr);
  {
    Pool pool(GetParam());
    pmr_mem_resource* r = pool.get();
    void* keep = pmr_allocate(r, 1000, 16);  // the page stays in use
    void* p = pmr_allocate(r, 1000, 16);
    EXPECT_EQ(pmr_deallocate_unsized(r, p, 16), 1024u);
    EXPECT_TRUE(reports.empty());
    pmr_deallocate_unsized(r, p, 16);
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_NE(reports[0].find("double free"), std::string::npos) << reports[0];
    void* a = pmr_allocate(r, 1000, 16);
    void* b = pmr_allocate(r, 1000, 16);
    EXPECT_NE(a, b);  // p was not put on a list twice
    pmr_deallocate(r, a, 1000, 16);
    pmr_deallocate(r, b, 1000, 16);
    pmr_deallocate(r, keep, 1000, 16);
  }
  pmr_set_misuse_handler(old, nullptr);
  g_reports = nullptr;
}

INSTANTIATE_TEST_SUITE_P(All, DeallocateUnsized, ::testing::Values(0, 1, 2),
                         pmrtest::PoolKindName);

// Statistics has no op of its own: the call asks its usable size, then
// deallocates with it, and statistics counts that size.
TEST(DeallocateUnsizedResources, StatisticsGoesThroughTheUsableSize) {
  pmr_thread_cache tc;
  ASSERT_TRUE(pmr_thread_cache_init(&tc, nullptr, nullptr));
  pmr_statistics st;
  ASSERT_TRUE(pmr_statistics_init(&st, &tc.base));
  size_t u = pmr_good_size(&st.base, 100, 16);
  void* p = pmr_allocate(&st.base, u, 16);
  EXPECT_EQ(pmr_statistics_get_stats(&st).bytes_in_use, u);
  EXPECT_EQ(pmr_deallocate_unsized(&st.base, p, 16), u);
  EXPECT_EQ(pmr_statistics_get_stats(&st).bytes_in_use, 0u);
  pmr_statistics_destroy(&st);
  pmr_thread_cache_destroy(&tc);
}

// Resources that cannot tell a size, and bad arguments: 0, nothing done.
TEST(DeallocateUnsizedResources, OthersAnswerZeroAndKeepTheBlock) {
  pmrtest::CountingResource counting;
  pmr_monotonic_buffer mono;
  ASSERT_TRUE(pmr_monotonic_buffer_init(&mono, nullptr));
  for (pmr_mem_resource* r :
       {pmr_malloc_resource(), counting.get(), &mono.base}) {
    void* p = pmr_allocate(r, 100, 16);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(pmr_deallocate_unsized(r, p, 16), 0u);
    memset(p, 3, 100);  // still the caller's
    pmr_deallocate(r, p, 100, 16);
  }
  EXPECT_EQ(counting.outstanding_blocks(), 0u);
  EXPECT_EQ(counting.mismatches(), 0u);
  pmr_synchronized_pool pool;
  ASSERT_TRUE(pmr_synchronized_pool_init(&pool, nullptr, nullptr));
  void* p = pmr_allocate(&pool.base, 100, 16);
  EXPECT_EQ(pmr_deallocate_unsized(&pool.base, nullptr, 16), 0u);
  EXPECT_EQ(pmr_deallocate_unsized(&pool.base, p, 3), 0u);  // not a power of 2
  EXPECT_EQ(pmr_usable_size(&pool.base, p, 16), 112u);      // still in use
  // NULL: the default resource.
  pmr_mem_resource* old = pmr_set_default_resource(&pool.base);
  EXPECT_EQ(pmr_deallocate_unsized(nullptr, p, 16), 112u);
  pmr_set_default_resource(old);
  pmr_synchronized_pool_destroy(&pool);
  pmr_monotonic_buffer_destroy(&mono);
}

// The debug resource checks exact sizes and tells none: 0.
TEST(DeallocateUnsizedResources, TheDebugResourceAnswersZero) {
  pmr_thread_cache tc;
  ASSERT_TRUE(pmr_thread_cache_init(&tc, nullptr, nullptr));
  pmr_debug_resource dbg;
  ASSERT_TRUE(pmr_debug_resource_init(&dbg, nullptr, &tc.base));
  void* p = pmr_allocate(&dbg.base, 112, 16);
  EXPECT_EQ(pmr_deallocate_unsized(&dbg.base, p, 16), 0u);
  pmr_deallocate(&dbg.base, p, 112, 16);
  EXPECT_EQ(pmr_debug_resource_destroy(&dbg), 0u);
  pmr_thread_cache_destroy(&tc);
}

}  // namespace
