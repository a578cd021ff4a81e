// pmr_malloc_adapter: malloc/calloc/realloc/free over any resource, with the
// size kept in a header so free needs none, or (over the pools and the thread
// cache, for pooled sizes) no header at all.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "mem_resource/pmr_malloc_adapter.h"
#include "resources/pmr_debug_resource.h"
#include "resources/pmr_monotonic_buffer.h"
#include "resources/pmr_statistics.h"
#include "resources/pmr_synchronized_pool.h"
#include "resources/pmr_thread_cache.h"
#include "resources/pmr_unsynchronized_pool.h"
#include "tests/testkit/counting_resource.h"
#include "tests/testkit/pools.h"
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
  EXPECT_EQ(pmr_malloc_adapter_size(&a, p), 100u);
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
  EXPECT_EQ(pmr_malloc_adapter_size(&a, p), 0u);
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
  EXPECT_EQ(pmr_malloc_adapter_size(&a, p), 210u);
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
  EXPECT_EQ(pmr_malloc_adapter_size(&a, p), 5000u);
  EXPECT_EQ(up.outstanding_bytes(), 5000 + kHeader);
  p = static_cast<char*>(pmr_malloc_adapter_realloc(&a, p, 4));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(memcmp(p, "0123", 4), 0);
  p = static_cast<char*>(pmr_malloc_adapter_realloc(&a, p, 0));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(pmr_malloc_adapter_size(&a, p), 0u);
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
  EXPECT_EQ(pmr_malloc_adapter_size(&a, p), 6u);
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
  EXPECT_EQ(pmr_malloc_adapter_size(&a, p), 1000u);
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
// Random traffic through adapter a: `steps` steps of malloc (calloc when
// use_calloc), free or realloc of up to max_bytes, each block filled with a
// byte of its size and checked before it is freed or moved, and its
// reported size at least what was asked. Returns the blocks still live.
std::vector<unsigned char*> RandomTraffic(pmr_malloc_adapter* a, uint32_t x,
                                          int steps, size_t max_bytes,
                                          bool use_calloc) {
  std::vector<unsigned char*> live;
  std::vector<size_t> sizes;
  for (int i = 0; i < steps; ++i) {
    x = x * 1103515245 + 12345;
    size_t n = (x >> 8) % max_bytes;
    int op = static_cast<int>((x >> 24) % 4);
    if (op == 0 || live.empty()) {
      auto* p = static_cast<unsigned char*>(
          use_calloc ? pmr_malloc_adapter_calloc(a, n, 1)
                     : pmr_malloc_adapter_malloc(a, n));
      EXPECT_NE(p, nullptr);
      if (p == nullptr) break;
      EXPECT_GE(pmr_malloc_adapter_size(a, p), n);
      memset(p, static_cast<int>(n & 0xFF), n);
      live.push_back(p);
      sizes.push_back(n);
    } else {
      size_t k = x % live.size();
      for (size_t j = 0; j < sizes[k]; ++j)
        EXPECT_EQ(live[k][j], static_cast<unsigned char>(sizes[k] & 0xFF));
      if (op == 1) {
        pmr_malloc_adapter_free(a, live[k]);
        live[k] = live.back();
        sizes[k] = sizes.back();
        live.pop_back();
        sizes.pop_back();
      } else {
        auto* p = static_cast<unsigned char*>(
            pmr_malloc_adapter_realloc(a, live[k], n));
        EXPECT_NE(p, nullptr);
        if (p == nullptr) break;
        EXPECT_GE(pmr_malloc_adapter_size(a, p), n);
        memset(p, static_cast<int>(n & 0xFF), n);
        live[k] = p;
        sizes[k] = n;
      }
    }
  }
  return live;
}

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

  std::vector<unsigned char*> live =
      RandomTraffic(&a, 12345, 4000, 3000, false);
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

// ---- headerless: over the pools and the thread cache --------------------

// A pool kind (0 unsynchronized, 1 synchronized, 2 thread cache) under a
// statistics resource, which counts exactly what the adapter asks for.
class Headerless : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    ASSERT_TRUE(pmr_statistics_init(&stats_, pool_.get()));
    pmr_malloc_adapter_init(&a_, &stats_.base);
  }
  void TearDown() override {
    pmr_statistics_stats s = pmr_statistics_get_stats(&stats_);
    EXPECT_EQ(s.blocks_in_use, 0u);
    EXPECT_EQ(s.bytes_in_use, 0u);
    pmr_statistics_destroy(&stats_);
  }
  size_t in_use() { return pmr_statistics_get_stats(&stats_).bytes_in_use; }

  pmrtest::PoolOfKind pool_{GetParam()};
  pmr_statistics stats_;
  pmr_malloc_adapter a_;
};

TEST_P(Headerless, PooledBlocksCarryNoHeaderAndReportTheirUsableSize) {
  void* p = pmr_malloc_adapter_malloc(&a_, 100);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % PMR_MAX_ALIGN, 0u);
  EXPECT_EQ(pmr_malloc_adapter_size(&a_, p), 112u);  // the class size
  EXPECT_EQ(pmr_malloc_adapter_footprint(&a_, p), 112u);
  EXPECT_EQ(pmr_malloc_adapter_roundup(&a_, 100), 112u);
  EXPECT_EQ(in_use(), 112u);  // asked for exactly that, no header
  memset(p, 0x5A, 112);       // every usable byte is the caller's
  pmr_malloc_adapter_free(&a_, p);
  EXPECT_EQ(in_use(), 0u);
  void* z = pmr_malloc_adapter_malloc(&a_, 0);
  ASSERT_NE(z, nullptr);
  EXPECT_EQ(pmr_malloc_adapter_size(&a_, z), 16u);
  pmr_malloc_adapter_free(&a_, z);
  EXPECT_EQ(pmr_malloc_adapter_size(&a_, nullptr), 0u);
}

TEST_P(Headerless, EverySizeIsAlignedAsMallocs) {
  std::vector<void*> blocks;
  for (size_t n = 0; n <= 9000; n += 7) {
    void* p = pmr_malloc_adapter_malloc(&a_, n);
    ASSERT_NE(p, nullptr);
    ASSERT_EQ(reinterpret_cast<uintptr_t>(p) % PMR_MAX_ALIGN, 0u) << n;
    ASSERT_GE(pmr_malloc_adapter_size(&a_, p), n);
    blocks.push_back(p);
  }
  for (void* p : blocks) pmr_malloc_adapter_free(&a_, p);
}

// The target of the headerless path: 16 bytes less per pooled block than
// the header path over the same pool, in the adapter's own accounting
// (footprint) and in what the resource below counts. The sizes are class
// sizes, so the header is the whole difference (over the pool, a 48-byte
// block then takes a 48-byte slot instead of a 64-byte one).
TEST_P(Headerless, SavesTheHeaderOnEveryPooledBlock) {
  pmrtest::CountingResource no_op(&stats_.base);  // hides the op: header path
  pmr_malloc_adapter with_header;
  pmr_malloc_adapter_init(&with_header, no_op.get());
  constexpr size_t kBlocks = 1000;
  for (size_t n : {size_t{16}, size_t{48}, size_t{96}, size_t{4096}}) {
    std::vector<void*> lean, fat;
    size_t lean_bytes = 0, fat_bytes = 0;
    size_t before = in_use();
    for (size_t i = 0; i < kBlocks; ++i) {
      lean.push_back(pmr_malloc_adapter_malloc(&a_, n));
      lean_bytes += pmr_malloc_adapter_footprint(&a_, lean.back());
    }
    size_t lean_counted = in_use() - before;
    for (size_t i = 0; i < kBlocks; ++i) {
      fat.push_back(pmr_malloc_adapter_malloc(&with_header, n));
      fat_bytes += pmr_malloc_adapter_footprint(&with_header, fat.back());
    }
    size_t fat_counted = in_use() - before - lean_counted;
    EXPECT_EQ(lean_bytes, lean_counted) << n;
    EXPECT_EQ(fat_bytes, fat_counted) << n;
    EXPECT_EQ(fat_bytes - lean_bytes, kBlocks * PMR_MALLOC_ADAPTER_HEADER)
        << n;  // n is a class size: the header is all the difference
    EXPECT_EQ(pmr_malloc_adapter_size(&with_header, fat[0]), n);
    for (void* p : lean) pmr_malloc_adapter_free(&a_, p);
    for (void* p : fat) pmr_malloc_adapter_free(&with_header, p);
  }
}

// Oversize requests keep the header; realloc crosses between the two kinds
// and keeps the contents.
TEST_P(Headerless, OversizeBlocksKeepAHeaderAndReallocCrossesKinds) {
  auto* p = static_cast<unsigned char*>(pmr_malloc_adapter_malloc(&a_, 20000));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(pmr_malloc_adapter_size(&a_, p), 20000u);
  EXPECT_EQ(pmr_malloc_adapter_footprint(&a_, p),
            20000u + PMR_MALLOC_ADAPTER_HEADER);
  EXPECT_EQ(pmr_malloc_adapter_roundup(&a_, 20000), 20000u);
  for (size_t i = 0; i < 20000; ++i) p[i] = static_cast<unsigned char>(i);
  p = static_cast<unsigned char*>(pmr_malloc_adapter_realloc(&a_, p, 300));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(pmr_malloc_adapter_size(&a_, p), 320u);
  EXPECT_EQ(in_use(), 320u);
  for (size_t i = 0; i < 300; ++i)
    ASSERT_EQ(p[i], static_cast<unsigned char>(i));
  void* same = pmr_malloc_adapter_realloc(&a_, p, 310);  // same class
  EXPECT_EQ(same, p);
  p = static_cast<unsigned char*>(pmr_malloc_adapter_realloc(&a_, p, 19000));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(pmr_malloc_adapter_size(&a_, p), 19000u);
  for (size_t i = 0; i < 300; ++i)
    ASSERT_EQ(p[i], static_cast<unsigned char>(i));
  p = static_cast<unsigned char*>(pmr_malloc_adapter_realloc(&a_, p, 1000));
  EXPECT_EQ(pmr_malloc_adapter_size(&a_, p), 1024u);
  p = static_cast<unsigned char*>(pmr_malloc_adapter_realloc(&a_, p, 0));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(pmr_malloc_adapter_size(&a_, p), 16u);
  for (size_t i = 0; i < 16; ++i)
    ASSERT_EQ(p[i], static_cast<unsigned char>(i));
  pmr_malloc_adapter_free(&a_, p);
}

TEST_P(Headerless, MixedTrafficKeepsContentsAndBalances) {
  std::vector<unsigned char*> live = RandomTraffic(&a_, 777, 6000, 12000, true);
  size_t footprints = 0;
  for (unsigned char* p : live)
    footprints += pmr_malloc_adapter_footprint(&a_, p);
  EXPECT_EQ(footprints, in_use());
  for (unsigned char* p : live) pmr_malloc_adapter_free(&a_, p);
}

INSTANTIATE_TEST_SUITE_P(Pools, Headerless, ::testing::Values(0, 1, 2),
                         pmrtest::PoolKindName);

// Blocks freed and sized by threads other than the one that allocated them.
TEST(HeaderlessThreads, CrossThreadFreeAndSize) {
  pmr_thread_cache tc;
  ASSERT_TRUE(pmr_thread_cache_init(&tc, nullptr, nullptr));
  pmr_malloc_adapter a;
  pmr_malloc_adapter_init(&a, &tc.base);
  constexpr int kThreads = 4, kEach = 3000;
  std::vector<void*> blocks(kThreads * kEach);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        size_t n = static_cast<size_t>((i * 37) % 10000);
        void* p = pmr_malloc_adapter_malloc(&a, n);
        memset(p, t, n);
        blocks[static_cast<size_t>(t * kEach + i)] = p;
      }
    });
  for (auto& th : threads) th.join();
  threads.clear();
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      int other = (t + 1) % kThreads;
      for (int i = 0; i < kEach; ++i) {
        size_t n = static_cast<size_t>((i * 37) % 10000);
        void* p = blocks[static_cast<size_t>(other * kEach + i)];
        EXPECT_GE(pmr_malloc_adapter_size(&a, p), n);
        p = pmr_malloc_adapter_realloc(&a, p, n / 2);
        pmr_malloc_adapter_free(&a, p);
      }
    });
  for (auto& th : threads) th.join();
  pmr_thread_cache_destroy(&tc);
}

}  // namespace
