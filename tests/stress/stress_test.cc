// Stress for the thread-safe resources: 8 threads, mixed sizes (pooled,
// oversize, and over the malloc resource some mapped from the OS), cross-thread
// frees through shared mailboxes, and thread churn
// (workers end and new ones start mid-run). Every block carries a pattern
// written at allocation and checked at free. Also run under TSan and ASan
// (.ci/run), where the operation count is scaled down (the tools are ~10x
// slower) but the mix is the same.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "resources/pmr_synchronized_pool.h"
#include "resources/pmr_thread_cache.h"
#include "tests/testkit/conformance.h"
#include "tests/testkit/counting_resource.h"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr long kOpsPerThread = 125000;  // x 8 x 2 = 2M
#else
constexpr long kOpsPerThread = 400000;  // x 8 threads x 2 generations = 6.4M
#endif

namespace {

struct Block {
  uint32_t* p;
  size_t bytes, alignment;
  uint32_t tag;
};

// Blocks this large (mapped from the OS over the malloc resource) carry the
// pattern in their first and last kEdgeWords words and in one word of
// every 4 KiB between (memory given back to the OS by mistake reads as
// zeros a whole OS page at a time): the mix stays cheap under the
// sanitizers.
constexpr size_t kLarge = size_t{128} << 10;
constexpr size_t kEdgeWords = 1024;

// The words of b that carry its pattern: all, or those of a large one.
template <typename F>
void ForPatternWords(const Block& b, F f) {
  size_t words = b.bytes / 4;
  if (b.bytes < kLarge) {
    for (size_t i = 0; i < words; ++i) f(i);
    return;
  }
  for (size_t i = 0; i < kEdgeWords; ++i) f(i);
  for (size_t i = kEdgeWords; i < words - kEdgeWords; i += 1024) f(i);
  for (size_t i = words - kEdgeWords; i < words; ++i) f(i);
}

// Fills with a tag-derived pattern; the first word is the tag.
void Fill(const Block& b) {
  ForPatternWords(b, [&](size_t i) {
    b.p[i] = b.tag * 2654435761u + static_cast<uint32_t>(i);
  });
}
bool Intact(const Block& b) {
  bool ok = true;
  ForPatternWords(b, [&](size_t i) {
    ok &= b.p[i] == b.tag * 2654435761u + static_cast<uint32_t>(i);
  });
  return ok;
}

class Mailbox {
 public:
  void Put(const Block& b) {
    std::lock_guard<std::mutex> lock(mu_);
    q_.push_back(b);
  }
  bool Take(Block* b) {
    std::lock_guard<std::mutex> lock(mu_);
    if (q_.empty()) return false;
    *b = q_.back();
    q_.pop_back();
    return true;
  }
  std::vector<Block> Drain() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::move(q_);
  }

 private:
  std::mutex mu_;
  std::vector<Block> q_;
};

struct StressCase {
  std::string name;
  std::function<std::unique_ptr<pmrtest::ResourceUnderTest>(pmr_mem_resource*)>
      make;
};

class Stress : public ::testing::TestWithParam<StressCase> {};

TEST_P(Stress, EightThreadsMixedSizesCrossThreadFreesAndChurn) {
  pmrtest::CountingResource up;
  std::unique_ptr<pmrtest::ResourceUnderTest> res = GetParam().make(up.get());
  pmr_mem_resource* r = res->get();
  constexpr int kThreads = 8;
  Mailbox boxes[kThreads];
  std::atomic<long> ops{0}, bad{0}, nulls{0};
  std::atomic<uint32_t> next_tag{1};

  auto worker = [&](int id, unsigned seed) {
    std::mt19937 rng(seed);
    std::vector<Block> own;
    for (long i = 0; i < kOpsPerThread; ++i) {
      unsigned dice = rng() % 100;
      if (dice < 45 || own.empty()) {
        unsigned kind = rng() % 1024;
        size_t bytes = kind == 0        ? kLarge + rng() % (size_t{256} << 10)
                       : kind % 32 == 0 ? 4100 + rng() % 30000
                                        : 4 + rng() % 1000;
        size_t alignment = size_t{1} << (2 + rng() % 5);
        auto* p = static_cast<uint32_t*>(pmr_allocate(r, bytes, alignment));
        if (p == nullptr) {
          ++nulls;
          continue;
        }
        if (reinterpret_cast<uintptr_t>(p) % alignment) ++bad;
        Block b{p, bytes, alignment, next_tag++};
        Fill(b);
        own.push_back(b);
      } else if (dice < 70) {  // free one of ours
        size_t k = rng() % own.size();
        if (!Intact(own[k])) ++bad;
        pmr_deallocate(r, own[k].p, own[k].bytes, own[k].alignment);
        own[k] = own.back();
        own.pop_back();
      } else if (dice < 85) {  // hand one to another thread
        size_t k = rng() % own.size();
        boxes[(id + 1 + rng() % (kThreads - 1)) % kThreads].Put(own[k]);
        own[k] = own.back();
        own.pop_back();
      } else {  // free one handed to us
        Block b;
        if (boxes[id].Take(&b)) {
          if (!Intact(b)) ++bad;
          pmr_deallocate(r, b.p, b.bytes, b.alignment);
        }
      }
      if (own.size() > 300) {  // keep the live set bounded
        if (!Intact(own.front())) ++bad;
        pmr_deallocate(r, own.front().p, own.front().bytes,
                       own.front().alignment);
        own.front() = own.back();
        own.pop_back();
      }
      ++ops;
    }
    // Leave some blocks behind in the mailboxes for the next generation.
    for (size_t k = 0; k < own.size(); ++k)
      boxes[(id + k) % kThreads].Put(own[k]);
  };

  // Two generations of 8 threads: the second frees what the first (now
  // exited) threads allocated.
  for (int gen = 0; gen < 2; ++gen) {
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back(worker, t, 1000u * gen + t);
    for (auto& th : threads) th.join();
  }
  for (auto& box : boxes) {
    for (const Block& b : box.Drain()) {
      if (!Intact(b)) ++bad;
      pmr_deallocate(r, b.p, b.bytes, b.alignment);
    }
  }
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(nulls.load(), 0);
  EXPECT_EQ(ops.load(), 2 * kThreads * kOpsPerThread);
  res.reset();
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  EXPECT_EQ(up.mismatches(), 0u) << up.last_mismatch();
  printf("stress %s: %ld operations, 8 threads x 2 generations\n",
         GetParam().name.c_str(), ops.load());
}

template <typename T, typename Init>
std::unique_ptr<pmrtest::ResourceUnderTest> Own(Init init,
                                                void (*destroy)(T*)) {
  return std::unique_ptr<pmrtest::ResourceUnderTest>(
      new pmrtest::OwnedResource<T>(init, destroy));
}

// Each thread-safe resource over upstream up.
std::unique_ptr<pmrtest::ResourceUnderTest> SyncPoolOver(pmr_mem_resource* up) {
  return Own<pmr_synchronized_pool>(
      [up](pmr_synchronized_pool* p) {
        pmr_synchronized_pool_init(p, nullptr, up);
      },
      pmr_synchronized_pool_destroy);
}
std::unique_ptr<pmrtest::ResourceUnderTest> ThreadCacheOver(
    pmr_mem_resource* up) {
  return Own<pmr_thread_cache>(
      [up](pmr_thread_cache* t) { pmr_thread_cache_init(t, nullptr, up); },
      pmr_thread_cache_destroy);
}

// thread_cache over a synchronized pool: the recommended stack. Over the
// malloc resource, the cache's free pages (the pool's mappings) go back to
// the OS too.
class CacheOverPool : public pmrtest::ResourceUnderTest {
 public:
  explicit CacheOverPool(pmr_mem_resource* up) {
    pmr_synchronized_pool_init(&pool_, nullptr, up);
    pmr_thread_cache_init(&tc_, nullptr, &pool_.base);
  }
  ~CacheOverPool() override {
    pmr_thread_cache_destroy(&tc_);
    pmr_synchronized_pool_destroy(&pool_);
  }
  pmr_mem_resource* get() override { return &tc_.base; }

 private:
  pmr_synchronized_pool pool_;
  pmr_thread_cache tc_;
};

INSTANTIATE_TEST_SUITE_P(
    ThreadSafe, Stress,
    ::testing::Values(
        StressCase{"synchronized_pool", SyncPoolOver},
        StressCase{"thread_cache", ThreadCacheOver},
        // Over the malloc resource (not counted): segments
        // and large blocks mapped from the OS, free pages
        // given back, parked blocks reclaimed before a
        // mapping, all while other threads run.
        StressCase{"thread_cache_over_malloc",
                   [](pmr_mem_resource*) {
                     return ThreadCacheOver(pmr_malloc_resource());
                   }},
        StressCase{"synchronized_pool_over_malloc",
                   [](pmr_mem_resource*) {
                     return SyncPoolOver(pmr_malloc_resource());
                   }},
        StressCase{"thread_cache_over_synchronized_pool",
                   [](pmr_mem_resource* up) {
                     return std::unique_ptr<pmrtest::ResourceUnderTest>(
                         new CacheOverPool(up));
                   }},
        StressCase{"thread_cache_over_synchronized_pool_over_malloc",
                   [](pmr_mem_resource*) {
                     return std::unique_ptr<pmrtest::ResourceUnderTest>(
                         new CacheOverPool(pmr_malloc_resource()));
                   }}),
    [](const ::testing::TestParamInfo<StressCase>& info) {
      return info.param.name;
    });

}  // namespace
