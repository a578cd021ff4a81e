// pmr_thread_cache: per-thread page heaps, remote frees, what a thread
// keeps, thread exit and adoption, several instances, destroy/exit races,
// upstream failure.
#include "resources/pmr_thread_cache.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "resources/pmr_synchronized_pool.h"
#include "tests/testkit/counting_resource.h"

namespace {

using pmrtest::CountingResource;

// A reusable barrier for n threads.
class Barrier {
 public:
  explicit Barrier(int n) : n_(n) {}
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    int gen = gen_;
    if (++waiting_ == n_) {
      waiting_ = 0;
      ++gen_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return gen != gen_; });
    }
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int n_, waiting_ = 0, gen_ = 0;
};

struct TC {
  explicit TC(pmr_mem_resource* up,
              const pmr_thread_cache_options* o = nullptr) {
    EXPECT_TRUE(pmr_thread_cache_init(&tc, o, up));
  }
  ~TC() { pmr_thread_cache_destroy(&tc); }
  pmr_mem_resource* r() { return &tc.base; }
  pmr_thread_cache_stats stats() { return pmr_thread_cache_get_stats(&tc); }
  pmr_thread_cache tc;
};

TEST(ThreadCache, InitNeverCallsUpstreamAndOptionsAreEffective) {
  CountingResource up;
  pmr_thread_cache_options o = {};
  TC t(up.get(), &o);
  EXPECT_EQ(up.calls().size(), 0u);
  pmr_thread_cache_options e = pmr_thread_cache_get_options(&t.tc);
  EXPECT_EQ(e.pool.largest_required_pool_block, PMR_POOL_DEFAULT_LARGEST_BLOCK);
  EXPECT_EQ(pmr_thread_cache_upstream(&t.tc), up.get());
}

TEST(ThreadCache, SteadyStateNeedsNoUpstreamAndNoPageMoves) {
  CountingResource up;
  TC t(up.get());
  std::vector<void*> v;
  for (int round = 0; round < 100; ++round) {
    for (int i = 0; i < 100; ++i) v.push_back(pmr_allocate(t.r(), 64, 8));
    for (void* p : v) pmr_deallocate(t.r(), p, 64, 8);
    v.clear();
    if (round == 0) up.clear_calls();
  }
  EXPECT_EQ(up.calls().size(), 0u);
  pmr_thread_cache_stats st = t.stats();
  EXPECT_EQ(st.threads, 1u);
  // 10,000 allocations from one page, which stays the class's current page.
  EXPECT_EQ(st.thread_page_bytes, size_t{64} << 10);
  EXPECT_EQ(st.pages_taken, 1u);
  EXPECT_EQ(st.pages_returned, 0u);
}

// Oversize blocks as in the pools (pool_test.cc): a freed one serves the next
// request of its size without upstream, within max_free_bytes, from any
// thread; trim gives it back.
TEST(ThreadCache, FreedOversizeBlocksAreKeptForReuseUntilTrim) {
  CountingResource up;
  TC t(up.get());
  void* a = pmr_allocate(t.r(), 50000, 16);
  ASSERT_NE(a, nullptr);
  std::memset(a, 1, 50000);
  pmr_deallocate(t.r(), a, 50000, 16);
  EXPECT_GE(t.stats().free_oversize_bytes, 50000u);
  EXPECT_EQ(up.outstanding_bytes(), t.stats().held_bytes);
  size_t calls = up.calls().size();
  void* b = nullptr;
  std::thread([&] { b = pmr_allocate(t.r(), 50000, 16); }).join();
  EXPECT_EQ(b, a);
  EXPECT_EQ(up.calls().size(), calls);
  EXPECT_EQ(t.stats().free_oversize_bytes, 0u);
  pmr_deallocate(t.r(), b, 50000, 16);
  EXPECT_GE(pmr_thread_cache_trim(&t.tc), 50000u);
  EXPECT_EQ(t.stats().free_oversize_bytes, 0u);
  EXPECT_EQ(up.outstanding_bytes(), t.stats().held_bytes);
}

// Over a pool, the thread cache keeps no freed oversize block: the pool
// under it keeps it and serves the next request (pool_test.cc).
TEST(ThreadCache, OverAPoolOnlyThePoolUnderItKeepsFreedOversizeBlocks) {
  CountingResource up;
  pmr_synchronized_pool sp;
  pmr_synchronized_pool_init(&sp, nullptr, up.get());
  {
    TC t(&sp.base);
    void* a = pmr_allocate(t.r(), 50000, 16);
    ASSERT_NE(a, nullptr);
    std::memset(a, 1, 50000);
    pmr_deallocate(t.r(), a, 50000, 16);
    EXPECT_EQ(t.stats().free_oversize_bytes, 0u);
    EXPECT_GE(pmr_synchronized_pool_get_stats(&sp).free_oversize_bytes, 50000u);
    size_t calls = up.calls().size();
    void* b = pmr_allocate(t.r(), 50000, 16);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(up.calls().size(), calls);
    EXPECT_EQ(pmr_synchronized_pool_get_stats(&sp).free_oversize_bytes, 0u);
    pmr_deallocate(t.r(), b, 50000, 16);
  }
  pmr_synchronized_pool_destroy(&sp);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
}

// A page whose blocks are all free goes back to the shared free pages,
// except a class's current page: a thread keeps at most one page with no
// block in use per class, whatever it freed.
TEST(ThreadCache, AThreadKeepsAtMostOnePageWithNoBlockInUsePerClass) {
  CountingResource up;
  TC t(up.get());
  for (size_t size : {32, 4096}) {
    std::vector<void*> v;
    for (int i = 0; i < 10000; ++i) v.push_back(pmr_allocate(t.r(), size, 8));
    for (void* p : v) pmr_deallocate(t.r(), p, size, 8);
  }
  pmr_thread_cache_stats st = t.stats();
  EXPECT_LE(st.thread_page_bytes, 2u * (64u << 10));
  EXPECT_GE(st.free_page_bytes + st.thread_page_bytes,
            st.held_bytes - (64u << 10));
  EXPECT_GT(st.pages_returned, 600u);  // 4096-byte blocks: 15 a page
}

// A thread that frees a large working set gets the same blocks back, every
// one distinct, without asking upstream: its pages went to the free pages
// and come back.
TEST(ThreadCache, AFreedWorkingSetComesBackWholeWithoutUpstream) {
  for (size_t size : {32, 48, 64, 256, 1024}) {
    CountingResource up;
    pmr_thread_cache_options o = {};
    o.pool.max_free_bytes = size_t{64} << 20;  // no give-back mid-test
    TC t(up.get(), &o);
    const size_t n = (4u << 20) / size;  // 4 MiB worth
    std::vector<void*> v;
    for (size_t i = 0; i < n; ++i) {
      v.push_back(pmr_allocate(t.r(), size, 8));
      ASSERT_NE(v.back(), nullptr);
    }
    std::set<void*> first(v.begin(), v.end());
    ASSERT_EQ(first.size(), n);
    for (void* p : v) pmr_deallocate(t.r(), p, size, 8);
    up.clear_calls();
    v.clear();
    for (size_t i = 0; i < n; ++i) {
      void* p = pmr_allocate(t.r(), size, 8);
      ASSERT_NE(p, nullptr);
      std::memset(p, static_cast<int>(i), size);
      v.push_back(p);
    }
    EXPECT_EQ(up.calls().size(), 0u) << size;
    std::set<void*> again(v.begin(), v.end());
    EXPECT_EQ(again.size(), n) << size;
    size_t reused = 0;
    for (void* p : again) reused += first.count(p);
    // All but at most a page's worth: the pages come back in another
    // order, and the one left partly carved may differ.
    EXPECT_GE(reused, n - 65536 / size) << size;
    for (size_t i = 0; i < n; ++i)
      ASSERT_EQ(static_cast<unsigned char*>(v[i])[size - 1],
                static_cast<unsigned char>(i))
          << size;
    for (void* p : v) pmr_deallocate(t.r(), p, size, 8);
    pmr_thread_cache_trim(&t.tc);
    EXPECT_LT(t.stats().held_bytes, (4u << 20) / 100) << size;
  }
}

// Pages that a class emptied serve another class without new memory.
TEST(ThreadCache, FreedPagesLetOtherClassesGrowWithoutNewMemory) {
  CountingResource up;
  pmr_thread_cache_options o = {};
  o.pool.max_free_bytes = size_t{64} << 20;  // no give-back mid-test
  TC t(up.get(), &o);
  std::vector<void*> v;
  for (int i = 0; i < 40000; ++i) v.push_back(pmr_allocate(t.r(), 64, 8));
  for (void* p : v) pmr_deallocate(t.r(), p, 64, 8);
  const size_t held = t.stats().held_bytes;
  EXPECT_GE(t.stats().free_page_bytes, held - 2 * (64u << 10));
  v.clear();
  for (int i = 0; i < 20000; ++i) v.push_back(pmr_allocate(t.r(), 128, 8));
  // 2.56 MB of 128-byte blocks in the pages 2.56 MB of 64-byte ones left:
  // without reuse, held memory would grow by as much.
  EXPECT_EQ(t.stats().held_bytes, held);
  for (void* p : v) pmr_deallocate(t.r(), p, 128, 8);
}

// Blocks freed one per page last, after the rest of each page: every page
// empties and serves another class without new memory.
TEST(ThreadCache, CachedBlocksLetOtherClassesGrowWithoutNewMemory) {
  CountingResource up;
  pmr_thread_cache_options o = {};
  o.pool.max_free_bytes = size_t{64} << 20;  // no give-back mid-test
  TC t(up.get(), &o);
  std::vector<char*> v;
  for (int i = 0; i < 64 * 63; ++i)
    v.push_back(static_cast<char*>(pmr_allocate(t.r(), 1024, 8)));
  std::sort(v.begin(), v.end());
  // All but the first block of each page first, then one block per page.
  std::vector<char*> last;
  uintptr_t page = 0;
  for (char* p : v) {
    uintptr_t pg = reinterpret_cast<uintptr_t>(p) >> 16;
    if (pg != page) {
      page = pg;
      last.push_back(p);
    } else {
      pmr_deallocate(t.r(), p, 1024, 8);
    }
  }
  for (char* p : last) pmr_deallocate(t.r(), p, 1024, 8);
  ASSERT_GE(last.size(), 60u);
  const size_t segments = up.allocations();
  // Three quarters of the pages are needed: they must come back.
  std::vector<void*> small;
  for (int i = 0; i < 48 * 1000; ++i)
    small.push_back(pmr_allocate(t.r(), 64, 8));
  EXPECT_EQ(up.allocations(), segments)
      << "grew with " << t.stats().free_page_bytes << " bytes of free pages";
  for (void* p : small) pmr_deallocate(t.r(), p, 64, 8);
}

// The fast paths find a class from (bytes - 1) | (alignment - 1) in a table
// of 1024 entries: every small size and alignment must get a block of at
// least its rounded size, aligned, and distinct from the others.
TEST(ThreadCache, EverySmallSizeAndAlignmentGetsABlockOfItsRoundedSize) {
  CountingResource up;
  TC t(up.get());
  for (size_t align = 1; align <= 256; align *= 2) {
    for (size_t bytes = 0; bytes <= 1100; ++bytes) {
      size_t rounded = bytes == 0 ? align : (bytes + align - 1) / align * align;
      void* p[3];
      for (int i = 0; i < 3; ++i) {
        p[i] = pmr_allocate(t.r(), bytes, align);
        ASSERT_NE(p[i], nullptr) << bytes << " " << align;
        ASSERT_EQ(reinterpret_cast<uintptr_t>(p[i]) % align, 0u)
            << bytes << " " << align;
        memset(p[i], 'a' + i, rounded);
      }
      for (int i = 0; i < 3; ++i)
        for (size_t j = 0; j < rounded; ++j)
          ASSERT_EQ(static_cast<char*>(p[i])[j], 'a' + i)
              << bytes << " " << align;
      for (int i = 0; i < 3; ++i) pmr_deallocate(t.r(), p[i], bytes, align);
    }
  }
  EXPECT_EQ(up.mismatches(), 0u);
}

// Above 4 KiB the classes are fitted to a page (multiples of 16): a larger
// alignment takes the next class that is a multiple of it.
TEST(ThreadCache, RequestsAboveFourKiBAreAlignedAtEveryAlignment) {
  CountingResource up;
  TC t(up.get());
  std::vector<std::pair<void*, std::pair<size_t, size_t>>> live;
  for (size_t align = 1; align <= 8192; align *= 2) {
    for (size_t bytes = 4000; bytes <= 8300; bytes += 61) {
      void* p = pmr_allocate(t.r(), bytes, align);
      ASSERT_NE(p, nullptr) << bytes << " " << align;
      ASSERT_EQ(reinterpret_cast<uintptr_t>(p) % align, 0u)
          << bytes << " " << align;
      memset(p, 0x5a, bytes);
      live.push_back({p, {bytes, align}});
    }
  }
  for (auto& b : live)
    pmr_deallocate(t.r(), b.first, b.second.first, b.second.second);
  EXPECT_EQ(up.mismatches(), 0u);
}

// With a largest pooled block below 1024, the sizes above it bypass the
// caches (one upstream call each) and the sizes up to it are cached.
TEST(ThreadCache, SizesAboveTheLargestBlockGoStraightToUpstream) {
  CountingResource up;
  pmr_thread_cache_options o;
  memset(&o, 0, sizeof o);
  o.pool.largest_required_pool_block = 256;
  TC t(up.get(), &o);
  pmr_deallocate(t.r(), pmr_allocate(t.r(), 256, 8), 256, 8);  // warm-up
  size_t before = up.allocations();
  size_t cached = t.stats().thread_page_bytes;
  EXPECT_GT(cached, 0u);
  for (int i = 0; i < 100; ++i)
    pmr_deallocate(t.r(), pmr_allocate(t.r(), 256, 8), 256, 8);
  EXPECT_EQ(up.allocations(), before);
  for (int i = 0; i < 100; ++i)
    pmr_deallocate(t.r(), pmr_allocate(t.r(), 257, 8), 257, 8);
  EXPECT_EQ(up.allocations(), before + 100);
  EXPECT_EQ(up.outstanding_blocks(), before);  // the 257-byte blocks went back
  EXPECT_EQ(t.stats().thread_page_bytes, cached);
}

// Going up and down within a class's current page moves no page and lays
// out no new block while freed ones wait: the blocks handed out are the
// ones carved for the peak, and at most one carve (4 KiB) more.
TEST(ThreadCache, GoingUpAndDownReusesFreedBlocksAndMovesNoPage) {
  TC t(pmr_malloc_resource());
  constexpr size_t kHeld = 32;
  std::vector<void*> out;  // blocks the test holds
  std::set<void*> seen;
  auto take = [&] {
    void* b = pmr_allocate(t.r(), 64, 8);
    ASSERT_NE(b, nullptr);
    out.push_back(b);
    seen.insert(b);
  };
  for (size_t i = 0; i < 2 * kHeld; ++i) take();
  auto give = [&] {
    pmr_deallocate(t.r(), out.back(), 64, 8);
    out.pop_back();
  };
  for (size_t i = 0; i < kHeld; ++i) give();
  const pmr_thread_cache_stats before = t.stats();
  std::mt19937 rng(5);
  size_t peak = 2 * kHeld;
  for (int step = 0; step < 2000; ++step) {
    size_t n = 1 + rng() % 3;
    if (rng() % 2) {
      for (; n > 0 && !out.empty(); --n) give();
    } else {
      for (; n > 0 && out.size() < 2 * kHeld - 1; --n) take();
    }
    peak = std::max(peak, out.size());
  }
  EXPECT_LE(seen.size(), peak + 4096 / 64);
  const pmr_thread_cache_stats after = t.stats();
  EXPECT_EQ(after.pages_taken, before.pages_taken);
  EXPECT_EQ(after.pages_returned, before.pages_returned);
  for (void* b : out) pmr_deallocate(t.r(), b, 64, 8);
}

// try_resize keeps a block in place while the new size stays in its class,
// from any thread; the block then goes back with its new size.
TEST(ThreadCache, TryResizeStaysInTheBlocksClass) {
  CountingResource up;
  pmr_thread_cache_options o;
  memset(&o, 0, sizeof o);
  o.pool.largest_required_pool_block = 256;
  TC t(up.get(), &o);
  void* b = pmr_allocate(t.r(), 100, 8);  // class 112
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(pmr_try_resize(t.r(), b, 100, 112, 8));
  EXPECT_TRUE(pmr_try_resize(t.r(), b, 112, 97, 8));
  EXPECT_FALSE(pmr_try_resize(t.r(), b, 97, 113, 8));  // class 128
  EXPECT_FALSE(pmr_try_resize(t.r(), b, 97, 96, 8));   // class 96
  bool other = false;
  std::thread([&] { other = pmr_try_resize(t.r(), b, 97, 100, 8); }).join();
  EXPECT_TRUE(other);
  EXPECT_EQ(pmr_reallocate(t.r(), b, 100, 111, 8), b);
  memset(b, 1, 111);
  pmr_deallocate(t.r(), b, 111, 8);
  // Back in class 112: its page's list hands it out again, after the
  // blocks the class holds (at most a carve of 4 KiB).
  std::vector<void*> ahead;
  void* again;
  while ((again = pmr_allocate(t.r(), 105, 8)) != b) {
    ASSERT_NE(again, nullptr);
    ahead.push_back(again);
    ASSERT_LT(ahead.size(), 4096u / 112);
  }
  pmr_deallocate(t.r(), b, 105, 8);
  for (void* q : ahead) pmr_deallocate(t.r(), q, 105, 8);
  void* big = pmr_allocate(t.r(), 200, 8);
  EXPECT_FALSE(pmr_try_resize(t.r(), big, 200, 257, 8));  // oversize
  pmr_deallocate(t.r(), big, 200, 8);
  // Oversize, from malloc: in place only within what malloc was asked for
  // (the request rounded to 16 bytes, then the block's trailer).
  void* over = pmr_allocate(t.r(), 300, 8);
  EXPECT_TRUE(pmr_try_resize(t.r(), over, 300, 304, 8));
  EXPECT_FALSE(pmr_try_resize(t.r(), over, 304, 305, 8));
  pmr_deallocate(t.r(), over, 304, 8);
}

// Stats read while threads allocate and free: every snapshot is consistent
// (and TSan sees no race).
TEST(ThreadCache, StatsReadWhileThreadsRunAreConsistent) {
  TC t(nullptr);
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int th = 0; th < 2; ++th)
    threads.emplace_back([&] {
      std::vector<void*> v;
      while (!stop.load(std::memory_order_relaxed)) {
        for (int i = 0; i < 3000; ++i) v.push_back(pmr_allocate(t.r(), 64, 8));
        for (void* p : v) pmr_deallocate(t.r(), p, 64, 8);
        v.clear();
      }
    });
  for (int i = 0; i < 2000; ++i) {
    pmr_thread_cache_stats st = t.stats();
    ASSERT_LE(st.threads, 2u) << "snapshot " << i;
    ASSERT_LE(st.thread_page_bytes, st.held_bytes) << "snapshot " << i;
    ASSERT_LE(st.pages_returned, st.pages_taken) << "snapshot " << i;
  }
  stop = true;
  for (auto& th : threads) th.join();
  EXPECT_EQ(t.stats().threads, 0u);
}

// Frees and allocations that go back and forth across the edge between two
// pages move no page: an empty current page stays, and the full one behind
// it takes frees without leaving its class.
TEST(ThreadCache, GoingBackAndForthAcrossAPageEdgeMovesNoPage) {
  CountingResource up;
  TC t(up.get());
  std::vector<void*> v;
  auto hold = [&](size_t n) {  // allocate or free until n blocks are held
    while (v.size() < n) v.push_back(pmr_allocate(t.r(), 48, 8));
    while (v.size() > n) {
      pmr_deallocate(t.r(), v.back(), 48, 8);
      v.pop_back();
    }
  };
  const size_t per_page = (64u << 10) / 48;
  for (size_t depth = per_page - 40; depth <= per_page + 40; ++depth) {
    hold(depth + 7);  // the first crossing may take a page
    hold(depth);
    pmr_thread_cache_stats before = t.stats();
    for (int i = 0; i < 100; ++i) {  // +-7 around depth
      hold(depth + 7);
      hold(depth - 7);
    }
    hold(depth);
    pmr_thread_cache_stats after = t.stats();
    ASSERT_EQ(after.pages_taken + after.pages_returned,
              before.pages_taken + before.pages_returned)
        << "at depth " << depth;
  }
  for (void* p : v) pmr_deallocate(t.r(), p, 48, 8);
}

// A block freed on another thread goes back to its own page (the freeing
// thread gets no heap for it); the owner takes it back, and trim then
// returns everything.
TEST(ThreadCache, ABlockFreedOnAnotherThreadGoesBackToItsPage) {
  CountingResource up;
  TC t(up.get());
  std::vector<void*> v;
  for (int i = 0; i < 50; ++i) v.push_back(pmr_allocate(t.r(), 128, 16));
  Barrier freed(2), checked(2);
  int other_errno = 0;
  std::thread other([&] {
    errno = 1234;
    for (void* p : v) pmr_deallocate(t.r(), p, 128, 16);
    other_errno = errno;
    freed.Wait();
    checked.Wait();  // keep this thread alive meanwhile
  });
  freed.Wait();
  EXPECT_EQ(t.stats().threads, 1u);  // freeing made no heap
  EXPECT_EQ(other_errno, 1234);
  checked.Wait();
  other.join();
  EXPECT_GT(pmr_thread_cache_trim(&t.tc), 0u);
  EXPECT_EQ(up.outstanding_bytes(), 0u);
  EXPECT_EQ(t.stats().thread_page_bytes, 0u);
  // Allocation starts again from upstream, the same way.
  for (int i = 0; i < 50; ++i)
    pmr_deallocate(t.r(), pmr_allocate(t.r(), 128, 16), 128, 16);
  EXPECT_GT(up.outstanding_bytes(), 0u);
}

// Two threads that allocate side by side carve from pages of their own: no
// two neighbouring blocks of a page (64 bytes apart) belong to different
// threads. (Carving
// both threads' runs from one chunk made them interleave, and each core's
// prefetcher then read into lines the other was writing: workload B2 ran at
// half speed per thread.)
TEST(ThreadCache, ThreadsRefillingSideBySideCarveSeparateChunks) {
  CountingResource up;
  TC t(up.get());
  constexpr int kTurns = 8, kPerTurn = 200;
  std::vector<void*> blocks[2];
  Barrier turn(2);
  auto work = [&](int me) {
    for (int i = 0; i < kTurns; ++i) {
      for (int who = 0; who < 2; ++who) {
        if (who == me)
          for (int j = 0; j < kPerTurn; ++j)
            blocks[me].push_back(pmr_allocate(t.r(), 64, 8));
        turn.Wait();  // strictly alternating turns
      }
    }
  };
  std::thread a(work, 0), b(work, 1);
  a.join();
  b.join();
  std::vector<std::pair<uintptr_t, int>> all;
  for (int me = 0; me < 2; ++me)
    for (void* p : blocks[me]) {
      ASSERT_NE(p, nullptr);
      all.emplace_back(reinterpret_cast<uintptr_t>(p), me);
    }
  std::sort(all.begin(), all.end());
  int neighbours = 0, mixed = 0;
  for (size_t i = 1; i < all.size(); ++i) {
    if (all[i].first - all[i - 1].first != 64 ||
        (all[i].first >> 16) != (all[i - 1].first >> 16))  // one page
      continue;
    ++neighbours;
    mixed += all[i].second != all[i - 1].second;
  }
  EXPECT_GT(neighbours, 2 * kTurns * kPerTurn * 9 / 10);  // mostly carved runs
  EXPECT_EQ(mixed, 0);
  for (int me = 0; me < 2; ++me)
    for (void* p : blocks[me]) pmr_deallocate(t.r(), p, 64, 8);
}

// A thread that exits leaves its heap, with the pages that still hold
// blocks, to the next thread that starts: it allocates from them without
// asking upstream. Page counts of exited threads stay in the statistics.
TEST(ThreadCache, AnExitedThreadsHeapIsAdoptedByTheNextThread) {
  CountingResource up;
  TC t(up.get());
  std::vector<void*> kept;
  std::thread([&] {
    std::vector<void*> v;
    for (int i = 0; i < 3000; ++i) v.push_back(pmr_allocate(t.r(), 64, 8));
    for (size_t i = 0; i < v.size(); ++i) {
      if (i % 3 == 0)
        kept.push_back(v[i]);  // a third stays in use: no page empties
      else
        pmr_deallocate(t.r(), v[i], 64, 8);
    }
  }).join();
  pmr_thread_cache_stats st = t.stats();
  EXPECT_EQ(st.threads, 0u);
  EXPECT_GE(st.thread_page_bytes, 2u * (64u << 10));  // held by the heap
  const size_t taken = st.pages_taken;
  up.clear_calls();
  std::thread([&] {
    std::vector<void*> v;
    for (int i = 0; i < 1900; ++i) v.push_back(pmr_allocate(t.r(), 64, 8));
    EXPECT_EQ(t.stats().threads, 1u);
    for (void* p : v) pmr_deallocate(t.r(), p, 64, 8);
  }).join();
  EXPECT_EQ(up.calls().size(), 0u) << "a segment was asked for";
  EXPECT_EQ(t.stats().pages_taken, taken);  // the adopted pages served
  for (void* p : kept) pmr_deallocate(t.r(), p, 64, 8);
}

// A thread started after another was joined gets, from glibc, the joined
// thread's stack and with it its thread pointer, which the pools' free takes
// for a thread's identity. Freeing the exited thread's blocks, it is still
// another thread: they go to their pages' remote lists and wait there for
// the heap's next owner or a trim; no page of the heap, which no thread
// owns, moves. Over the default upstream (whose free is the pools' fixed
// one) and over another.
TEST(ThreadCache, AThreadGivenAnExitedThreadsIdentityFreesItsBlocksRemotely) {
  for (bool over_default : {true, false}) {
    SCOPED_TRACE(over_default ? "default upstream" : "counting upstream");
    CountingResource up;
    TC t(over_default ? nullptr : up.get());
    std::vector<void*> v;
    uintptr_t first = 0, second = 0;
    std::thread([&] {
      first = (uintptr_t)pthread_self();
      for (int i = 0; i < 4096; ++i) v.push_back(pmr_allocate(t.r(), 64, 8));
    }).join();
    const pmr_thread_cache_stats before = t.stats();
    ASSERT_GE(before.thread_page_bytes, 4u * (64u << 10));
    std::thread([&] {
      second = (uintptr_t)pthread_self();
      for (void* p : v) pmr_deallocate(t.r(), p, 64, 8);
    }).join();
    EXPECT_EQ(second, first) << "glibc reuses the joined thread's stack; "
                                "without that this test shows less";
    const pmr_thread_cache_stats after = t.stats();
    EXPECT_EQ(after.thread_page_bytes, before.thread_page_bytes);
    EXPECT_EQ(after.free_page_bytes, before.free_page_bytes);
    EXPECT_EQ(after.pages_returned, before.pages_returned);
    // The trim collects them: the pages empty and leave the heap.
    pmr_thread_cache_trim(&t.tc);
    EXPECT_LT(t.stats().thread_page_bytes, 64u << 10);
  }
}

TEST(ThreadCache, ThreadsComingAndGoingDoNotGrowMemory) {
  CountingResource up;
  TC t(up.get());
  size_t high = 0;
  for (int i = 0; i < 300; ++i) {
    std::thread([&] {
      std::vector<void*> v;
      for (int j = 0; j < 200; ++j)
        v.push_back(pmr_allocate(t.r(), 24 + j % 200, 8));
      for (int j = 0; j < 200; ++j)
        pmr_deallocate(t.r(), v[j], 24 + j % 200, 8);
    }).join();
    if (i == 10) high = up.outstanding_bytes();
  }
  EXPECT_EQ(up.outstanding_bytes(), high);  // no growth after warm-up
  EXPECT_EQ(t.stats().threads, 0u);
}

TEST(ThreadCache, ManyInstancesAtOnceEachWithItsOwnCaches) {
  CountingResource up;
  const int kInstances = 150;  // more than the 64 directly mapped slots
  std::vector<std::unique_ptr<TC>> tcs;
  for (int i = 0; i < kInstances; ++i) tcs.emplace_back(new TC(up.get()));
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 3; ++round) {
        for (int i = 0; i < kInstances; ++i) {
          std::vector<unsigned char*> v;
          for (int j = 0; j < 20; ++j) {
            auto* p =
                static_cast<unsigned char*>(pmr_allocate(tcs[i]->r(), 48, 8));
            if (p == nullptr) {
              ++bad;
              continue;
            }
            std::memset(p, t * 16 + j, 48);
            v.push_back(p);
          }
          for (size_t j = 0; j < v.size(); ++j) {
            if (v[j][47] != static_cast<unsigned char>(t * 16 + j)) ++bad;
            pmr_deallocate(tcs[i]->r(), v[j], 48, 8);
          }
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
  for (auto& tc : tcs) EXPECT_EQ(tc->stats().threads, 1u - 1u);  // all exited
  tcs.clear();
  EXPECT_EQ(up.outstanding_blocks(), 0u);
}

TEST(ThreadCache, DestroyWhileOtherThreadsHoldCachesThenTheyExit) {
  CountingResource up;
  auto* tc = new pmr_thread_cache;
  ASSERT_TRUE(pmr_thread_cache_init(tc, nullptr, up.get()));
  Barrier parked(5), destroyed(5);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      std::vector<void*> v;
      for (int i = 0; i < 100; ++i)
        v.push_back(pmr_allocate(&tc->base, 100, 8));
      for (void* p : v) pmr_deallocate(&tc->base, p, 100, 8);
      parked.Wait();     // heaps with free blocks
      destroyed.Wait();  // the instance is gone; now exit
    });
  }
  parked.Wait();
  EXPECT_EQ(pmr_thread_cache_get_stats(tc).threads, 5u - 1u);
  pmr_thread_cache_destroy(tc);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  std::memset(tc, 0xdd, sizeof *tc);  // any later use of it would show
  delete tc;
  destroyed.Wait();
  for (auto& th : threads) th.join();  // exit callbacks run after destroy
  EXPECT_EQ(up.outstanding_blocks(), 0u);
}

TEST(ThreadCache, InstancesCreatedAndDestroyedWhileThreadsLive) {
  CountingResource up;
  const int kThreads = 3, kRounds = 200;
  pmr_thread_cache tc;
  Barrier start(kThreads + 1), done(kThreads + 1), checked(kThreads + 1);
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int round = 0; round < kRounds; ++round) {
        start.Wait();
        for (int i = 0; i < 50; ++i) {
          void* p = pmr_allocate(&tc.base, 16 + i * 8, 8);
          if (p == nullptr) ++bad;
          pmr_deallocate(&tc.base, p, 16 + i * 8, 8);
        }
        done.Wait();
        checked.Wait();  // alive (caches kept) until the stats are read
      }
    });
  }
  for (int round = 0; round < kRounds; ++round) {
    ASSERT_TRUE(pmr_thread_cache_init(&tc, nullptr, up.get()));  // slot reused
    start.Wait();
    done.Wait();
    EXPECT_EQ(pmr_thread_cache_get_stats(&tc).threads, size_t{kThreads})
        << "round " << round;
    checked.Wait();
    pmr_thread_cache_destroy(&tc);
    ASSERT_EQ(up.outstanding_blocks(), 0u) << round;
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
}

// One thread allocates, another frees (workload F): the freed blocks go
// back to the allocating thread's pages, which it takes them back from, so
// upstream memory stops growing once the pipeline is full. Not exactly
// flat: when the scheduler stalls the freeing thread, the allocating one
// may take a few more pages; the bound allows that, no more.
TEST(ThreadCache, AProducerAndAConsumerReachASteadyState) {
  CountingResource up;
  TC t(up.get());
  constexpr int kBlocks = 400000, kInFlight = 1000;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<void*> queue;
  size_t at_quarter = 0;
  std::thread producer([&] {
    for (int i = 0; i < kBlocks; ++i) {
      void* p = pmr_allocate(t.r(), 64, 8);
      ASSERT_NE(p, nullptr);
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return queue.size() < kInFlight; });
      queue.push_back(p);
      cv.notify_all();
      if (i == kBlocks / 4) at_quarter = up.outstanding_bytes();
    }
  });
  std::thread consumer([&] {
    for (int i = 0; i < kBlocks; ++i) {
      void* p;
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return !queue.empty(); });
        p = queue.back();
        queue.pop_back();
        cv.notify_all();
      }
      pmr_deallocate(t.r(), p, 64, 8);
    }
  });
  producer.join();
  consumer.join();
  EXPECT_GT(at_quarter, 0u);
  EXPECT_LE(up.outstanding_bytes(), at_quarter + (size_t{192} << 10));
}

// Upstream is called with no lock of the instance held: a thread exiting
// meanwhile (which hands its heap back under the instance's lock) is not
// held up. (Were upstream called under a lock, and upstream itself a
// thread cache whose first use takes the registry mutex that thread exit
// holds, the two threads would deadlock.)
struct ExitDuringUpstream {
  pmr_mem_resource base;
  std::atomic<bool> armed{false};
  std::atomic<bool> ready{false};  // the exiting thread is done allocating
  std::atomic<bool> go{false};
  pthread_t exiting{};
  bool joined = false;
  static void* Allocate(pmr_mem_resource* self, size_t bytes, size_t align) {
    auto* w = reinterpret_cast<ExitDuringUpstream*>(self);
    if (align == (64 << 10) && w->armed.exchange(false)) {  // a new segment
      w->go = true;  // let the other thread exit now, and wait for it
      timespec deadline;
      clock_gettime(CLOCK_REALTIME, &deadline);
      deadline.tv_sec += 3;
      w->joined = pthread_timedjoin_np(w->exiting, nullptr, &deadline) == 0;
    }
    return pmr_allocate(pmr_malloc_resource(), bytes, align);
  }
  static void Deallocate(pmr_mem_resource*, void* p, size_t bytes,
                         size_t align) {
    pmr_deallocate(pmr_malloc_resource(), p, bytes, align);
  }
};

TEST(ThreadCache, AThreadExitsWhileAnotherWaitsForUpstream) {
  static const pmr_mem_resource_ops ops = {ExitDuringUpstream::Allocate,
                                           ExitDuringUpstream::Deallocate,
                                           nullptr,
                                           nullptr,
                                           nullptr,
                                           nullptr,
                                           nullptr};
  ExitDuringUpstream up;
  up.base.ops = &ops;
  TC t(&up.base);
  std::vector<void*> mine;
  mine.push_back(pmr_allocate(t.r(), 64, 8));  // this thread's heap
  for (int i = 0; i < 7; ++i)                  // heaps left for adoption
    std::thread([&] {
      pmr_deallocate(t.r(), pmr_allocate(t.r(), 64, 8), 64, 8);
    }).join();
  auto exiting = [](void* arg) -> void* {  // adopts an exited thread's heap
    auto* u = static_cast<std::pair<ExitDuringUpstream*, TC*>*>(arg);
    pmr_deallocate(u->second->r(), pmr_allocate(u->second->r(), 64, 8), 64, 8);
    u->first->ready = true;  // its allocation may have taken a segment
    while (!u->first->go) std::this_thread::yield();
    return nullptr;  // thread exit: its heap is abandoned
  };
  std::pair<ExitDuringUpstream*, TC*> arg(&up, &t);
  ASSERT_EQ(pthread_create(&up.exiting, nullptr, exiting, &arg), 0);
  while (!up.ready) std::this_thread::yield();  // armed for this thread only
  up.armed = true;
  while (up.armed)
    mine.push_back(pmr_allocate(t.r(), 64, 8));  // until a new segment
  if (!up.joined) pthread_join(up.exiting, nullptr);
  EXPECT_TRUE(up.joined)
      << "the exiting thread waited for a lock held across upstream";
  for (void* p : mine) pmr_deallocate(t.r(), p, 64, 8);
}

// Upstream gives one segment of pages and refuses every other: once the
// pages are used up, every block still comes and goes, one at a time
// through its page, from several threads at once (TSan checks the
// locking), and release gives everything back.
struct OneSegment {
  pmr_mem_resource base;
  std::atomic<long> segments{0}, refused{0};
  static void* Allocate(pmr_mem_resource* self, size_t bytes, size_t align) {
    auto* o = reinterpret_cast<OneSegment*>(self);
    if (align == (64 << 10) && o->segments++ > 0) {
      ++o->refused;
      return nullptr;
    }
    return pmr_allocate(pmr_malloc_resource(), bytes, align);
  }
  static void Deallocate(pmr_mem_resource*, void* p, size_t bytes,
                         size_t align) {
    pmr_deallocate(pmr_malloc_resource(), p, bytes, align);
  }
};

TEST(ThreadCache, WithPagesUsedUpBlocksStillComeAndGo) {
  static const pmr_mem_resource_ops ops = {OneSegment::Allocate,
                                           OneSegment::Deallocate,
                                           nullptr,
                                           nullptr,
                                           nullptr,
                                           nullptr,
                                           nullptr};
  OneSegment one;
  one.base.ops = &ops;
  CountingResource up(&one.base);
  TC t(up.get());
  std::vector<void*> fill;  // use up the segment
  for (void* p; (p = pmr_allocate(t.r(), 32, 8)) != nullptr;) fill.push_back(p);
  EXPECT_GT(one.refused.load(), 0);
  for (size_t i = 0; i < fill.size(); i += 2)
    pmr_deallocate(t.r(), fill[i], 32, 8);
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i)
    threads.emplace_back([&, i] {
      std::vector<unsigned char*> v;
      for (int round = 0; round < 200; ++round) {
        for (int j = 0; j < 50; ++j) {
          auto* p = static_cast<unsigned char*>(pmr_allocate(t.r(), 32, 8));
          if (p == nullptr) continue;  // out of memory is allowed here
          p[0] = static_cast<unsigned char>(i);
          v.push_back(p);
        }
        for (unsigned char* p : v) {
          if (p[0] != i) ++bad;
          pmr_deallocate(t.r(), p, 32, 8);
        }
        v.clear();
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
  for (size_t i = 1; i < fill.size(); i += 2)
    pmr_deallocate(t.r(), fill[i], 32, 8);
  pmr_thread_cache_release(&t.tc);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
}

TEST(ThreadCache, ProducersAndConsumersAcrossSeveralInstances) {
  CountingResource base;
  pmr_synchronized_pool pool;  // a thread-safe upstream
  pmr_synchronized_pool_init(&pool, nullptr, base.get());
  const int kInstances = 3;
  TC a(&pool.base), b(&pool.base), c(&pool.base);
  TC* tcs[kInstances] = {&a, &b, &c};
  struct Item {
    void* p;
    int inst;
    size_t n;
  };
  std::mutex mu;
  std::vector<Item> queue;
  std::atomic<bool> producing{true};
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 30000; ++i) {
        int inst = (i + t) % kInstances;
        size_t n = 8 + (i * 7) % 500;
        auto* p =
            static_cast<unsigned char*>(pmr_allocate(tcs[inst]->r(), n, 8));
        if (p == nullptr) {
          ++bad;
          continue;
        }
        p[0] = static_cast<unsigned char>(n);
        std::lock_guard<std::mutex> lock(mu);
        queue.push_back({p, inst, n});
      }
    });
  }
  std::vector<std::thread> consumers;
  for (int t = 0; t < 3; ++t) {
    consumers.emplace_back([&] {
      for (;;) {
        std::vector<Item> mine;
        {
          std::lock_guard<std::mutex> lock(mu);
          mine.swap(queue);
        }
        if (mine.empty() && !producing) break;
        for (const Item& it : mine) {
          if (static_cast<unsigned char*>(it.p)[0] !=
              static_cast<unsigned char>(it.n))
            ++bad;
          pmr_deallocate(tcs[it.inst]->r(), it.p, it.n, 8);
        }
        if (mine.empty()) std::this_thread::yield();
      }
    });
  }
  for (auto& th : threads) th.join();
  producing = false;
  for (auto& th : consumers) th.join();
  EXPECT_EQ(bad.load(), 0);
  pmr_thread_cache_release(&a.tc);
  pmr_thread_cache_release(&b.tc);
  pmr_thread_cache_release(&c.tc);
  pmr_synchronized_pool_release(&pool);
  EXPECT_EQ(base.outstanding_blocks(), 0u);
  pmr_synchronized_pool_destroy(&pool);
}

TEST(ThreadCache, UpstreamFailingMidRunThenRecovering) {
  CountingResource up;
  TC t(up.get());
  std::vector<void*> v;
  for (int i = 0; i < 1000; ++i) v.push_back(pmr_allocate(t.r(), 64, 8));
  up.fail_always();
  EXPECT_EQ(pmr_allocate(t.r(), 100000, 8), nullptr);  // oversize
  size_t nulls = 0;
  for (int i = 0; i < 100000; ++i) {
    void* p = pmr_allocate(t.r(), 64, 8);
    if (p == nullptr) {
      ++nulls;
      break;
    }
    v.push_back(p);
  }
  EXPECT_EQ(nulls, 1u);  // ran out cleanly
  // Every page in use: a class with no block fails too.
  EXPECT_EQ(pmr_allocate(t.r(), 700, 8), nullptr);
  up.never_fail();
  void* p = pmr_allocate(t.r(), 700, 8);
  EXPECT_NE(p, nullptr);
  pmr_deallocate(t.r(), p, 700, 8);
  for (void* q : v) pmr_deallocate(t.r(), q, 64, 8);
  pmr_thread_cache_release(&t.tc);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  EXPECT_NE(pmr_allocate(t.r(), 64, 8), nullptr);  // usable after release
}

TEST(ThreadCache, ReleaseAndDestroyReturnEverything) {
  CountingResource up;
  {
    TC t(up.get());
    for (int i = 0; i < 5000; ++i)
      pmr_allocate(t.r(), 1 + i % 5000, 8);  // never freed
    std::thread([&] { pmr_allocate(t.r(), 32, 8); }).join();
    pmr_thread_cache_release(&t.tc);
    EXPECT_EQ(up.outstanding_blocks(), 0u);
    EXPECT_EQ(t.stats().threads, 0u);
    pmr_thread_cache_release(&t.tc);  // idempotent
    for (int i = 0; i < 100; ++i) pmr_allocate(t.r(), 64, 8);
  }
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  EXPECT_EQ(up.mismatches(), 0u) << up.last_mismatch();
}

}  // namespace
