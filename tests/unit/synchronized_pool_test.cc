// pmr_synchronized_pool under threads, and resources stacked on each other.
#include "resources/pmr_synchronized_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "resources/pmr_monotonic_buffer.h"
#include "resources/pmr_unsynchronized_pool.h"
#include "tests/testkit/counting_resource.h"

namespace {

using pmrtest::CountingResource;

struct Block {
  unsigned char* p;
  size_t n, a;
  unsigned char fill;
};

bool Intact(const Block& b) {
  for (size_t i = 0; i < b.n; ++i)
    if (b.p[i] != b.fill) return false;
  return true;
}

// A bounded multi-producer multi-consumer queue of blocks.
class Queue {
 public:
  void Push(Block b) {
    std::unique_lock<std::mutex> lock(mu_);
    not_full_.wait(lock, [&] { return q_.size() < 256; });
    q_.push_back(b);
    not_empty_.notify_one();
  }
  bool Pop(Block* b) {
    std::unique_lock<std::mutex> lock(mu_);
    not_empty_.wait(lock, [&] { return !q_.empty() || closed_; });
    if (q_.empty()) return false;
    *b = q_.front();
    q_.pop_front();
    not_full_.notify_one();
    return true;
  }
  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    not_empty_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable not_full_, not_empty_;
  std::deque<Block> q_;
  bool closed_ = false;
};

TEST(SynchronizedPool, EightThreadsMixedSizesCrossThreadFrees) {
  CountingResource up;
  pmr_synchronized_pool pool;
  pmr_synchronized_pool_init(&pool, nullptr, up.get());
  pmr_mem_resource* r = &pool.base;
  std::atomic<int> bad{0};
  Queue q;
  std::vector<std::thread> threads;
  // 4 producers keep some blocks and pass the others on; 4 consumers free
  // what they receive. Sizes mix pooled and oversize (> 4096).
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(t);
      std::vector<Block> own;
      for (int i = 0; i < 20000; ++i) {
        size_t n = rng() % 16 == 0 ? 4097 + rng() % 20000 : rng() % 600;
        size_t a = size_t{1} << (rng() % 6);
        auto* p = static_cast<unsigned char*>(pmr_allocate(r, n, a));
        if (p == nullptr || reinterpret_cast<uintptr_t>(p) % a != 0) {
          ++bad;
          continue;
        }
        Block b{p, n, a, static_cast<unsigned char>(rng())};
        std::memset(p, b.fill, n);
        if (i % 2) {
          q.Push(b);
        } else {
          own.push_back(b);
          if (own.size() > 100) {
            Block o = own[rng() % own.size()];
            if (!Intact(o)) ++bad;
            pmr_deallocate(r, o.p, o.n, o.a);
            own.erase(std::find_if(own.begin(), own.end(),
                                   [&](const Block& x) { return x.p == o.p; }));
          }
        }
      }
      for (const Block& b : own) {
        if (!Intact(b)) ++bad;
        pmr_deallocate(r, b.p, b.n, b.a);
      }
    });
  }
  std::vector<std::thread> consumers;
  for (int t = 0; t < 4; ++t) {
    consumers.emplace_back([&] {
      Block b;
      while (q.Pop(&b)) {
        if (!Intact(b)) ++bad;
        pmr_deallocate(r, b.p, b.n, b.a);
      }
    });
  }
  for (auto& th : threads) th.join();
  q.Close();
  for (auto& th : consumers) th.join();
  EXPECT_EQ(bad.load(), 0);
  // Every thread has exited; the pool still works and releases everything.
  void* p = pmr_allocate(r, 64, 8);
  ASSERT_NE(p, nullptr);
  pmr_deallocate(r, p, 64, 8);
  pmr_synchronized_pool_release(&pool);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  EXPECT_EQ(up.mismatches(), 0u) << up.last_mismatch();
  pmr_synchronized_pool_destroy(&pool);
}

TEST(SynchronizedPool, ProducerConsumerRecyclesMemoryInsteadOfGrowing) {
  CountingResource up;
  pmr_synchronized_pool pool;
  pmr_synchronized_pool_init(&pool, nullptr, up.get());
  pmr_mem_resource* r = &pool.base;
  Queue q;
  const int kBlocks = 200000;
  std::thread producer([&] {
    for (int i = 0; i < kBlocks; ++i) {
      auto* p = static_cast<unsigned char*>(pmr_allocate(r, 64, 8));
      ASSERT_NE(p, nullptr);
      p[0] = 1;
      q.Push({p, 64, 8, 1});
    }
    q.Close();
  });
  std::thread consumer([&] {
    Block b;
    while (q.Pop(&b)) pmr_deallocate(r, b.p, b.n, b.a);
  });
  producer.join();
  consumer.join();
  // At most 256 blocks are in flight; 200,000 went through. Without
  // recycling the pool would have taken ~12.8 MB from upstream.
  EXPECT_LT(up.max_outstanding_bytes(), size_t{2} << 20);
  pmr_synchronized_pool_destroy(&pool);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
}

// A thread frees blocks of another thread's heap onto their pages' remote
// lists: the pages stay with their owner while it lives, and become free
// when it takes them back (here: when it exits); trim then returns them.
TEST(SynchronizedPool, CrossThreadFreesWaitForTheOwner) {
  CountingResource up;
  pmr_synchronized_pool p;
  ASSERT_TRUE(pmr_synchronized_pool_init(&p, nullptr, up.get()));
  std::vector<void*> blocks;
  std::mutex mu;
  std::condition_variable cv;
  int stage = 0;
  auto wait_for = [&](int n) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return stage >= n; });
  };
  auto reach = [&](int n) {
    std::lock_guard<std::mutex> lock(mu);
    stage = n;
    cv.notify_all();
  };
  std::thread producer([&] {
    for (int i = 0; i < 3000; ++i)
      blocks.push_back(pmr_allocate(&p.base, 64, 8));
    reach(1);
    wait_for(2);  // alive while the consumer frees
  });
  wait_for(1);
  const size_t free_before =
      pmr_synchronized_pool_get_stats(&p).free_page_bytes;
  std::thread consumer([&] {
    for (void* b : blocks) pmr_deallocate(&p.base, b, 64, 8);
  });
  consumer.join();
  EXPECT_EQ(pmr_synchronized_pool_get_stats(&p).free_page_bytes, free_before);
  reach(2);
  producer.join();
  const pmr_pool_stats st = pmr_synchronized_pool_get_stats(&p);
  EXPECT_GE(st.free_page_bytes, free_before + 3000u * 64);
  EXPECT_GT(pmr_synchronized_pool_trim(&p), 0u);
  EXPECT_LT(pmr_synchronized_pool_get_stats(&p).held_bytes, st.held_bytes / 2);
  pmr_synchronized_pool_destroy(&p);
}

TEST(SynchronizedPool, BlocksFromExitedThreadsCanBeFreedAnywhere) {
  CountingResource up;
  pmr_synchronized_pool pool;
  pmr_synchronized_pool_init(&pool, nullptr, up.get());
  std::vector<Block> blocks;
  for (int t = 0; t < 20; ++t) {  // thread churn
    std::thread([&] {
      for (int i = 0; i < 100; ++i) {
        auto* p =
            static_cast<unsigned char*>(pmr_allocate(&pool.base, 100, 16));
        std::memset(p, 5, 100);
        blocks.push_back({p, 100, 16, 5});
      }
    }).join();
  }
  for (const Block& b : blocks) {
    EXPECT_TRUE(Intact(b));
    pmr_deallocate(&pool.base, b.p, b.n, b.a);
  }
  pmr_synchronized_pool_destroy(&pool);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
}

// monotonic -> unsynchronized_pool -> synchronized_pool -> malloc, with a
// counting resource between each pair.
TEST(Chaining, ReleasingAnOuterResourceReturnsItsBlocksToTheInnerOne) {
  CountingResource c_malloc;
  pmr_synchronized_pool sync;
  pmr_pool_options big = {0, 1 << 20, 0};  // clamped to the page limit
  pmr_synchronized_pool_init(&sync, &big, c_malloc.get());
  CountingResource c_sync(&sync.base);
  pmr_unsynchronized_pool unsync;
  pmr_unsynchronized_pool_init(&unsync, nullptr, c_sync.get());
  CountingResource c_unsync(&unsync.base);
  pmr_monotonic_buffer mono;
  pmr_monotonic_buffer_init(&mono, c_unsync.get());

  for (int i = 0; i < 5000; ++i)
    ASSERT_NE(pmr_allocate(&mono.base, 24, 8), nullptr);
  EXPECT_GT(c_unsync.outstanding_blocks(), 0u);
  pmr_monotonic_buffer_release(&mono);
  EXPECT_EQ(c_unsync.outstanding_blocks(), 0u);  // back in the unsync pool...
  EXPECT_GT(c_sync.outstanding_blocks(),
            0u);  // ...which still holds its chunks
  pmr_unsynchronized_pool_release(&unsync);
  EXPECT_EQ(c_sync.outstanding_blocks(), 0u);
  // The unsync pool's segments were oversize for the sync pool: back already,
  // but for the oversize blocks it keeps for reuse (trim gives them back).
  EXPECT_EQ(c_malloc.outstanding_bytes(),
            pmr_synchronized_pool_get_stats(&sync).free_oversize_bytes);
  pmr_synchronized_pool_trim(&sync);
  EXPECT_EQ(c_malloc.outstanding_blocks(), 0u);
  ASSERT_NE(pmr_allocate(&mono.base, 24, 8), nullptr);  // all still usable

  pmr_monotonic_buffer_destroy(&mono);
  pmr_unsynchronized_pool_destroy(&unsync);
  pmr_synchronized_pool_destroy(&sync);
  EXPECT_EQ(c_unsync.outstanding_blocks(), 0u);
  EXPECT_EQ(c_sync.outstanding_blocks(), 0u);
  EXPECT_EQ(c_malloc.outstanding_blocks(), 0u);
  EXPECT_EQ(c_unsync.mismatches() + c_sync.mismatches() + c_malloc.mismatches(),
            0u);
}

TEST(Chaining, OtherOrdersToo) {
  // sync pool over a monotonic buffer over an unsync pool.
  CountingResource c_base;
  pmr_unsynchronized_pool unsync;
  pmr_unsynchronized_pool_init(&unsync, nullptr, c_base.get());
  pmr_monotonic_buffer mono;
  pmr_monotonic_buffer_init(&mono, &unsync.base);
  CountingResource c_mono(&mono.base);
  pmr_synchronized_pool sync;
  pmr_synchronized_pool_init(&sync, nullptr, c_mono.get());
  std::vector<void*> v;
  for (int i = 0; i < 3000; ++i)
    v.push_back(pmr_allocate(&sync.base, 1 + i % 5000, 8));
  for (int i = 0; i < 3000; ++i)
    pmr_deallocate(&sync.base, v[i], 1 + i % 5000, 8);
  pmr_synchronized_pool_destroy(&sync);
  EXPECT_EQ(c_mono.outstanding_blocks(), 0u);
  pmr_monotonic_buffer_destroy(&mono);
  pmr_unsynchronized_pool_destroy(&unsync);
  EXPECT_EQ(c_base.outstanding_blocks(), 0u);
  EXPECT_EQ(c_base.mismatches() + c_mono.mismatches(), 0u);
}

}  // namespace
