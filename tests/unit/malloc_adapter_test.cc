// pmr_malloc_adapter: malloc/calloc/realloc/free over any resource, with the
// size kept in a header so free needs none.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

#include "mem_resource/pmr_malloc_adapter.h"
#include "resources/pmr_debug_resource.h"
#include "resources/pmr_monotonic_buffer.h"
#include "resources/pmr_statistics.h"
#include "resources/pmr_synchronized_pool.h"
#include "resources/pmr_thread_cache.h"
#include "resources/pmr_unsynchronized_pool.h"
#include "tests/testkit/counting_resource.h"
#include "tests/testkit/test_resources.h"

namespace {

constexpr size_t kHeader = PMR_MALLOC_ADAPTER_HEADER;

TEST(MallocAdapterTest, MallocAsksForSizePlusHeaderAndFreeGivesItBack) {
  pmrtest::CountingResource up;
  pmr_malloc_adapter a;
  ASSERT_TRUE(pmr_malloc_adapter_init(&a, up.get()));
  EXPECT_EQ(pmr_malloc_adapter_resource(&a), up.get());
  void* p = pmr_malloc_adapter_malloc(&a, 100);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % PMR_MAX_ALIGN, 0u);
  EXPECT_EQ(pmr_malloc_adapter_size(p), 100u);
  ASSERT_EQ(up.calls().size(), 1u);
  EXPECT_EQ(up.calls()[0].bytes, 100 + kHeader);
  EXPECT_EQ(up.calls()[0].alignment, PMR_MAX_ALIGN);
  memset(p, 0xAB, 100);
  pmr_malloc_adapter_free(&a, p);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  EXPECT_EQ(up.mismatches(), 0u) << up.last_mismatch();
}

TEST(MallocAdapterTest, NullResourceMeansTheDefault) {
  pmr_malloc_adapter a;
  ASSERT_TRUE(pmr_malloc_adapter_init(&a, nullptr));
  EXPECT_EQ(pmr_malloc_adapter_resource(&a), pmr_get_default_resource());
}

TEST(MallocAdapterTest, MallocZeroGivesDistinctBlocks) {
  pmrtest::CountingResource up;
  pmr_malloc_adapter a;
  pmr_malloc_adapter_init(&a, up.get());
  void* p = pmr_malloc_adapter_malloc(&a, 0);
  void* q = pmr_malloc_adapter_malloc(&a, 0);
  ASSERT_NE(p, nullptr);
  ASSERT_NE(q, nullptr);
  EXPECT_NE(p, q);
  EXPECT_EQ(pmr_malloc_adapter_size(p), 0u);
  pmr_malloc_adapter_free(&a, p);
  pmr_malloc_adapter_free(&a, q);
  pmr_malloc_adapter_free(&a, nullptr);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  EXPECT_EQ(up.mismatches(), 0u) << up.last_mismatch();
}

TEST(MallocAdapterTest, CallocZeroesEvenReusedMemory) {
  pmrtest::BumpResource bump;
  memset(bump.buf, 0xEE, sizeof bump.buf);
  pmr_malloc_adapter a;
  pmr_malloc_adapter_init(&a, &bump.base);
  auto* p = static_cast<unsigned char*>(pmr_malloc_adapter_calloc(&a, 30, 7));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(pmr_malloc_adapter_size(p), 210u);
  for (int i = 0; i < 210; ++i) ASSERT_EQ(p[i], 0) << i;
  pmr_malloc_adapter_free(&a, p);
}

TEST(MallocAdapterTest, OverflowFailsWithENOMEMWithoutCallingTheResource) {
  pmrtest::CountingResource up;
  pmr_malloc_adapter a;
  pmr_malloc_adapter_init(&a, up.get());
  errno = 0;
  EXPECT_EQ(pmr_malloc_adapter_calloc(&a, SIZE_MAX / 2, 3), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(pmr_malloc_adapter_malloc(&a, SIZE_MAX - 3), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  void* p = pmr_malloc_adapter_malloc(&a, 8);
  errno = 0;
  EXPECT_EQ(pmr_malloc_adapter_realloc(&a, p, SIZE_MAX - 3), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_EQ(up.calls().size(), 1u);
  pmr_malloc_adapter_free(&a, p);
  EXPECT_EQ(up.mismatches(), 0u) << up.last_mismatch();
}

TEST(MallocAdapterTest, ReallocKeepsContentsAndSizes) {
  pmrtest::CountingResource up;
  pmr_malloc_adapter a;
  pmr_malloc_adapter_init(&a, up.get());
  auto* p = static_cast<char*>(pmr_malloc_adapter_realloc(&a, nullptr, 10));
  ASSERT_NE(p, nullptr);
  memcpy(p, "0123456789", 10);
  p = static_cast<char*>(pmr_malloc_adapter_realloc(&a, p, 5000));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(memcmp(p, "0123456789", 10), 0);
  EXPECT_EQ(pmr_malloc_adapter_size(p), 5000u);
  EXPECT_EQ(up.outstanding_bytes(), 5000 + kHeader);
  p = static_cast<char*>(pmr_malloc_adapter_realloc(&a, p, 4));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(memcmp(p, "0123", 4), 0);
  p = static_cast<char*>(pmr_malloc_adapter_realloc(&a, p, 0));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(pmr_malloc_adapter_size(p), 0u);
  pmr_malloc_adapter_free(&a, p);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  EXPECT_EQ(up.mismatches(), 0u) << up.last_mismatch();
}

TEST(MallocAdapterTest, FailedReallocLeavesTheBlockValid) {
  pmrtest::CountingResource up;
  pmr_malloc_adapter a;
  pmr_malloc_adapter_init(&a, up.get());
  auto* p = static_cast<char*>(pmr_malloc_adapter_malloc(&a, 6));
  memcpy(p, "hello", 6);
  up.fail_always();
  errno = 0;
  EXPECT_EQ(pmr_malloc_adapter_realloc(&a, p, 600), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_STREQ(p, "hello");
  EXPECT_EQ(pmr_malloc_adapter_size(p), 6u);
  up.never_fail();
  pmr_malloc_adapter_free(&a, p);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  EXPECT_EQ(up.mismatches(), 0u) << up.last_mismatch();
}

TEST(MallocAdapterTest, ReallocGrowsInPlaceWhereTheResourceCan) {
  pmrtest::BumpResource bump;
  pmr_malloc_adapter a;
  pmr_malloc_adapter_init(&a, &bump.base);
  void* p = pmr_malloc_adapter_malloc(&a, 16);
  EXPECT_EQ(pmr_malloc_adapter_realloc(&a, p, 1000), p);
  EXPECT_EQ(bump.resize_successes, 1);
  EXPECT_EQ(bump.allocates, 1);
  EXPECT_EQ(pmr_malloc_adapter_size(p), 1000u);
}

TEST(MallocAdapterTest, SuccessLeavesErrnoAlone) {
  pmr_malloc_adapter a;
  pmr_malloc_adapter_init(&a, pmr_malloc_resource());
  errno = 4321;
  void* p = pmr_malloc_adapter_calloc(&a, 4, 4);
  p = pmr_malloc_adapter_realloc(&a, p, 64);
  pmr_malloc_adapter_free(&a, p);
  EXPECT_EQ(errno, 4321);
}

// Over every resource of the library, under a debug resource (which checks
// every size and alignment given back) and a statistics counter.
class MallocAdapterOverResources : public ::testing::TestWithParam<int> {};

TEST_P(MallocAdapterOverResources, MixedTrafficBalancesExactly) {
  pmr_monotonic_buffer mono;
  pmr_unsynchronized_pool unsync;
  pmr_synchronized_pool sync;
  pmr_thread_cache tc;
  pmr_mem_resource* r = pmr_malloc_resource();
  switch (GetParam()) {
    case 1:
      ASSERT_TRUE(pmr_monotonic_buffer_init(&mono, nullptr));
      r = &mono.base;
      break;
    case 2:
      ASSERT_TRUE(pmr_unsynchronized_pool_init(&unsync, nullptr, nullptr));
      r = &unsync.base;
      break;
    case 3:
      ASSERT_TRUE(pmr_synchronized_pool_init(&sync, nullptr, nullptr));
      r = &sync.base;
      break;
    case 4:
      ASSERT_TRUE(pmr_thread_cache_init(&tc, nullptr, nullptr));
      r = &tc.base;
      break;
  }
  pmr_debug_resource dbg;
  ASSERT_TRUE(pmr_debug_resource_init(&dbg, nullptr, r));
  pmr_statistics stats;
  ASSERT_TRUE(pmr_statistics_init(&stats, &dbg.base));
  pmr_malloc_adapter a;
  pmr_malloc_adapter_init(&a, &stats.base);

  std::vector<unsigned char*> live;
  std::vector<size_t> sizes;
  uint32_t x = 12345;
  for (int i = 0; i < 4000; ++i) {
    x = x * 1103515245 + 12345;
    size_t n = (x >> 8) % 3000;
    int op = static_cast<int>((x >> 24) % 4);
    if (op == 0 || live.empty()) {
      auto* p = static_cast<unsigned char*>(pmr_malloc_adapter_malloc(&a, n));
      ASSERT_NE(p, nullptr);
      memset(p, static_cast<int>(n & 0xFF), n);
      live.push_back(p);
      sizes.push_back(n);
    } else {
      size_t k = x % live.size();
      for (size_t j = 0; j < sizes[k]; ++j)
        ASSERT_EQ(live[k][j], static_cast<unsigned char>(sizes[k] & 0xFF));
      if (op == 1) {
        pmr_malloc_adapter_free(&a, live[k]);
        live[k] = live.back();
        sizes[k] = sizes.back();
        live.pop_back();
        sizes.pop_back();
      } else {
        auto* p = static_cast<unsigned char*>(
            pmr_malloc_adapter_realloc(&a, live[k], n));
        ASSERT_NE(p, nullptr);
        memset(p, static_cast<int>(n & 0xFF), n);
        live[k] = p;
        sizes[k] = n;
      }
    }
  }
  for (unsigned char* p : live) pmr_malloc_adapter_free(&a, p);
  pmr_statistics_stats s = pmr_statistics_get_stats(&stats);
  EXPECT_EQ(s.blocks_in_use, 0u);
  EXPECT_EQ(s.bytes_in_use, 0u);
  EXPECT_EQ(pmr_debug_resource_get_stats(&dbg).misuse, 0u);
  EXPECT_EQ(pmr_debug_resource_destroy(&dbg), 0u);  // no leak
  pmr_statistics_destroy(&stats);
  switch (GetParam()) {
    case 1:
      pmr_monotonic_buffer_destroy(&mono);
      break;
    case 2:
      pmr_unsynchronized_pool_destroy(&unsync);
      break;
    case 3:
      pmr_synchronized_pool_destroy(&sync);
      break;
    case 4:
      pmr_thread_cache_destroy(&tc);
      break;
  }
}

std::string ResourceName(const ::testing::TestParamInfo<int>& info) {
  static const char* const kNames[] = {"malloc", "monotonic",
                                       "unsynchronized_pool",
                                       "synchronized_pool", "thread_cache"};
  return kNames[info.param];
}

INSTANTIATE_TEST_SUITE_P(All, MallocAdapterOverResources,
                         ::testing::Values(0, 1, 2, 3, 4), ResourceName);

}  // namespace
