// pmr_good_size / pmr_usable_size: the optional usable_size op. The pools
// and the thread cache tell a pooled block's size from its page, say 0 for
// every other block (oversize, or an address inside one), and never answer
// wrong; resources without the op (and wrappers that cannot pass it on)
// say 0.
#include <gtest/gtest.h>

#include <cstdint>
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

constexpr size_t kAlign = PMR_MAX_ALIGN;

using Pool = pmrtest::PoolOfKind;  // the three resources with the op

class UsableSizeTest : public ::testing::TestWithParam<int> {};

TEST_P(UsableSizeTest, PooledRequestsGetTheirClassSize) {
  Pool pool(GetParam());
  pmr_mem_resource* r = pool.get();
  EXPECT_EQ(pmr_good_size(r, 0, kAlign), 16u);
  EXPECT_EQ(pmr_good_size(r, 1, kAlign), 16u);
  EXPECT_EQ(pmr_good_size(r, 17, kAlign), 32u);
  EXPECT_EQ(pmr_good_size(r, 100, kAlign), 112u);
  EXPECT_EQ(pmr_good_size(r, 1000, kAlign), 1024u);
  EXPECT_EQ(pmr_good_size(r, 8, 8), 8u);
  EXPECT_EQ(pmr_good_size(r, 100, 64), 128u);
  EXPECT_EQ(pmr_good_size(r, 8192, kAlign), 8192u);
  EXPECT_EQ(pmr_good_size(r, 8193, kAlign), 9360u);
  EXPECT_EQ(pmr_good_size(r, 16384, kAlign), 16384u);
  // Beyond the largest pooled block: oversize, which it cannot size.
  EXPECT_EQ(pmr_good_size(r, 16385, kAlign), 0u);
  EXPECT_EQ(pmr_good_size(r, 1 << 20, kAlign), 0u);
  // Bad requests.
  EXPECT_EQ(pmr_good_size(r, 100, 3), 0u);
  EXPECT_EQ(pmr_good_size(r, SIZE_MAX, kAlign), 0u);
}

TEST_P(UsableSizeTest, EveryPooledBlockTellsItsUsableSize) {
  Pool pool(GetParam());
  pmr_mem_resource* r = pool.get();
  std::vector<std::pair<void*, size_t>> blocks;
  for (size_t n = 0; n <= 16384; n += (n < 256 ? 1 : 37)) {
    size_t u = pmr_good_size(r, n, kAlign);
    ASSERT_GE(u, n);
    ASSERT_EQ(pmr_good_size(r, u, kAlign), u) << n;  // a usable size is one
    void* p = pmr_allocate(r, u, kAlign);
    ASSERT_NE(p, nullptr);
    ASSERT_EQ(reinterpret_cast<uintptr_t>(p) % kAlign, 0u);
    ASSERT_EQ(pmr_usable_size(r, p, kAlign), u) << n;
    blocks.emplace_back(p, u);
  }
  // A block allocated with fewer bytes than its class says its class size.
  void* q = pmr_allocate(r, 100, kAlign);
  EXPECT_EQ(pmr_usable_size(r, q, kAlign), 112u);
  pmr_deallocate(r, q, 100, kAlign);
  for (auto& b : blocks) pmr_deallocate(r, b.first, b.second, kAlign);
}

TEST_P(UsableSizeTest, OversizeBlocksAndTheirInsidesSayZero) {
  Pool pool(GetParam());
  pmr_mem_resource* r = pool.get();
  for (size_t n : {size_t{16385}, size_t{20000}, size_t{200000}}) {
    auto* p = static_cast<char*>(pmr_allocate(r, n, kAlign));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(pmr_usable_size(r, p, kAlign), 0u) << n;
    EXPECT_EQ(pmr_usable_size(r, p + 16, kAlign), 0u) << n;
    EXPECT_EQ(pmr_usable_size(r, p + n - 16, kAlign), 0u) << n;
    pmr_deallocate(r, p, n, kAlign);
  }
}

// Over a pool, a pool's oversize blocks are the inner pool's pooled
// blocks: only the inner one sizes them.
TEST_P(UsableSizeTest, APoolOverAPoolSizesOnlyItsOwnBlocks) {
  Pool inner(GetParam());
  pmr_pool_options opts = {0, 256, 0};
  Pool outer(GetParam(), &opts, inner.get());
  EXPECT_EQ(pmr_good_size(outer.get(), 1000, kAlign), 0u);
  void* p = pmr_allocate(outer.get(), 1000, kAlign);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(pmr_usable_size(outer.get(), p, kAlign), 0u);
  EXPECT_GE(pmr_usable_size(inner.get(), p, kAlign), 1000u);  // + trailer
  void* q = pmr_allocate(outer.get(), 200, kAlign);
  EXPECT_EQ(pmr_usable_size(outer.get(), q, kAlign), 224u);
  pmr_deallocate(outer.get(), q, 200, kAlign);
  pmr_deallocate(outer.get(), p, 1000, kAlign);
}

// Memory that went back to upstream and came back as another pool's
// oversize block is not taken for a pooled block of the first.
TEST_P(UsableSizeTest, ReleasedSegmentsAreForgotten) {
  pmrtest::CountingResource up;
  for (int round = 0; round < 3; ++round) {
    Pool pool(GetParam(), nullptr, up.get());
    void* p = pmr_allocate(pool.get(), 64, kAlign);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(pmr_usable_size(pool.get(), p, kAlign), 64u);
    pmr_deallocate(pool.get(), p, 64, kAlign);
  }
  // The same upstream's memory, now a block of a pool over it as oversize.
  Pool pool(GetParam(), nullptr, up.get());
  void* big = pmr_allocate(pool.get(), 1 << 20, kAlign);
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(pmr_usable_size(pool.get(), big, kAlign), 0u);
  pmr_deallocate(pool.get(), big, 1 << 20, kAlign);
}

INSTANTIATE_TEST_SUITE_P(All, UsableSizeTest, ::testing::Values(0, 1, 2),
                         pmrtest::PoolKindName);

TEST(UsableSizeResources, WithoutTheOpEveryAnswerIsZero) {
  pmr_monotonic_buffer mono;
  ASSERT_TRUE(pmr_monotonic_buffer_init(&mono, nullptr));
  pmrtest::CountingResource counting;
  for (pmr_mem_resource* r : {pmr_malloc_resource(), pmr_null_resource(),
                              &mono.base, counting.get()}) {
    EXPECT_EQ(pmr_good_size(r, 100, kAlign), 0u);
    void* p = pmr_allocate(r, 100, kAlign);
    if (p != nullptr) {
      EXPECT_EQ(pmr_usable_size(r, p, kAlign), 0u);
      pmr_deallocate(r, p, 100, kAlign);
    }
  }
  EXPECT_EQ(pmr_usable_size(pmr_malloc_resource(), nullptr, kAlign), 0u);
  pmr_monotonic_buffer_destroy(&mono);
}

TEST(UsableSizeResources, NullMeansTheDefault) {
  pmr_synchronized_pool pool;
  ASSERT_TRUE(pmr_synchronized_pool_init(&pool, nullptr, nullptr));
  EXPECT_EQ(pmr_good_size(nullptr, 100, kAlign), 0u);  // malloc's: none
  pmr_mem_resource* old = pmr_set_default_resource(&pool.base);
  EXPECT_EQ(pmr_good_size(nullptr, 100, kAlign), 112u);
  void* p = pmr_allocate(nullptr, 112, kAlign);
  EXPECT_EQ(pmr_usable_size(nullptr, p, kAlign), 112u);
  pmr_deallocate(nullptr, p, 112, kAlign);
  pmr_set_default_resource(old);
  pmr_synchronized_pool_destroy(&pool);
}

// Statistics passes blocks through and so passes the answers on; the
// debug resource checks exact sizes and so says nothing.
TEST(UsableSizeResources, WrappersPassOnOrSayNothing) {
  pmr_thread_cache tc;
  ASSERT_TRUE(pmr_thread_cache_init(&tc, nullptr, nullptr));
  pmr_statistics st;
  ASSERT_TRUE(pmr_statistics_init(&st, &tc.base));
  EXPECT_EQ(pmr_good_size(&st.base, 100, kAlign), 112u);
  void* p = pmr_allocate(&st.base, 112, kAlign);
  EXPECT_EQ(pmr_usable_size(&st.base, p, kAlign), 112u);
  pmr_deallocate(&st.base, p, 112, kAlign);
  pmr_statistics over_malloc;
  ASSERT_TRUE(pmr_statistics_init(&over_malloc, pmr_malloc_resource()));
  EXPECT_EQ(pmr_good_size(&over_malloc.base, 100, kAlign), 0u);
  pmr_debug_resource dbg;
  ASSERT_TRUE(pmr_debug_resource_init(&dbg, nullptr, &tc.base));
  EXPECT_EQ(pmr_good_size(&dbg.base, 100, kAlign), 0u);
  p = pmr_allocate(&dbg.base, 112, kAlign);
  EXPECT_EQ(pmr_usable_size(&dbg.base, p, kAlign), 0u);
  pmr_deallocate(&dbg.base, p, 112, kAlign);
  EXPECT_EQ(pmr_debug_resource_destroy(&dbg), 0u);
  pmr_statistics_destroy(&over_malloc);
  pmr_statistics_destroy(&st);
  pmr_thread_cache_destroy(&tc);
}

// Any thread may ask, also of blocks another thread allocated (TSan).
TEST(UsableSizeResources, AnyThreadAsksOfAnyBlock) {
  for (int kind = 1; kind <= 2; ++kind) {
    Pool pool(kind);
    pmr_mem_resource* r = pool.get();
    std::vector<void*> blocks(4 * 2000);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {
        for (int i = 0; i < 2000; ++i) {
          size_t n = pmr_good_size(r, (size_t)(i % 900) + 1, kAlign);
          blocks[(size_t)t * 2000 + (size_t)i] = pmr_allocate(r, n, kAlign);
        }
      });
    for (auto& th : threads) th.join();
    threads.clear();
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {
        // Each thread frees another's blocks, asking their size first.
        int other = (t + 1) % 4;
        for (int i = 0; i < 2000; ++i) {
          void* p = blocks[(size_t)other * 2000 + (size_t)i];
          size_t n = pmr_good_size(r, (size_t)(i % 900) + 1, kAlign);
          EXPECT_EQ(pmr_usable_size(r, p, kAlign), n);
          pmr_deallocate(r, p, n, kAlign);
        }
      });
    for (auto& th : threads) th.join();
  }
}

}  // namespace
