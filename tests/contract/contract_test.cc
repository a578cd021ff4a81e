// The contract every resource keeps, beyond the conformance suite: errno is
// untouched by a success (also after a recovered upstream failure) and by
// deallocation; destroy is idempotent (and release after destroy does
// nothing); init over a live instance leaks and breaks nothing; a NULL
// resource is the default in every dispatch function; deallocating on a new
// thread never allocates (std::pmr semantics).
#include <gtest/gtest.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "containers/pmr_hashmap.h"
#include "containers/pmr_string.h"
#include "containers/pmr_vector.h"
#include "mem_resource/pmr_mem_resource.h"
#include "resources/pmr_debug_resource.h"
#include "resources/pmr_monotonic_buffer.h"
#include "resources/pmr_statistics.h"
#include "resources/pmr_synchronized_pool.h"
#include "resources/pmr_thread_cache.h"
#include "resources/pmr_unsynchronized_pool.h"
#include "tests/testkit/counting_resource.h"

namespace {

using pmrtest::CountingResource;

// ---- errno ------------------------------------------------------------------

pmr_debug_resource_options Quiet() {
  pmr_debug_resource_options o{};
  o.no_quarantine = true;
  return o;
}

// A thread cache's refill first asks upstream for a magazine, then for a
// chunk: the magazine fails, the chunk comes, the allocation succeeds.
TEST(Errno, ThreadCacheKeepsErrnoWhenASideAllocationFails) {
  pmr_debug_resource up;
  pmr_debug_resource_options o = Quiet();
  pmr_debug_resource_init(&up, &o, nullptr);
  pmr_thread_cache tc;
  ASSERT_TRUE(pmr_thread_cache_init(&tc, nullptr, &up.base));
  std::thread([&] {
    pmr_debug_resource_fail_nth(&up, 1);
    errno = EDOM;
    void* p = pmr_allocate(&tc.base, 64, 8);
    EXPECT_NE(p, nullptr);
    EXPECT_EQ(errno, EDOM);
    EXPECT_EQ(pmr_debug_resource_get_stats(&up).injected_failures, 1u);
    errno = EDOM;
    pmr_deallocate(&tc.base, p, 64, 8);
    EXPECT_EQ(errno, EDOM);
  }).join();
  pmr_thread_cache_destroy(&tc);
  EXPECT_EQ(pmr_debug_resource_destroy(&up), 0u);
}

// A segment upstream refuses is asked again smaller: the request succeeds
// and errno stays as it was.
TEST(Errno, SynchronizedPoolKeepsErrnoWhenASmallerSegmentServes) {
  pmr_debug_resource up;
  pmr_debug_resource_options o = Quiet();
  pmr_debug_resource_init(&up, &o, nullptr);
  pmr_synchronized_pool pool;
  pmr_synchronized_pool_init(&pool, nullptr, &up.base);
  pmr_debug_resource_fail_nth(&up, 1);
  errno = EDOM;
  void* p = pmr_allocate(&pool.base, 64, 8);
  EXPECT_NE(p, nullptr);
  EXPECT_EQ(errno, EDOM);
  EXPECT_EQ(pmr_debug_resource_get_stats(&up).injected_failures, 1u);
  errno = EDOM;
  pmr_deallocate(&pool.base, p, 64, 8);
  EXPECT_EQ(errno, EDOM);
  pmr_synchronized_pool_destroy(&pool);
  EXPECT_EQ(pmr_debug_resource_destroy(&up), 0u);
}

// Every resource: success and deallocation leave errno alone.
struct Any {
  std::string name;
  pmr_mem_resource* (*init)(void* storage, pmr_mem_resource* up);
  void (*destroy)(void* storage);
  void (*release)(void* storage);  // may be null
};

union Storage {
  pmr_monotonic_buffer mono;
  pmr_unsynchronized_pool unsync;
  pmr_synchronized_pool sync;
  pmr_thread_cache tc;
  pmr_statistics stats;
  pmr_debug_resource debug;
  Storage() {}
};

std::vector<Any> AllResources() {
  return {
      {"monotonic_buffer",
       [](void* s, pmr_mem_resource* up) {
         auto* m = static_cast<pmr_monotonic_buffer*>(s);
         pmr_monotonic_buffer_init(m, up);
         return &m->base;
       },
       [](void* s) {
         pmr_monotonic_buffer_destroy(static_cast<pmr_monotonic_buffer*>(s));
       },
       [](void* s) {
         pmr_monotonic_buffer_release(static_cast<pmr_monotonic_buffer*>(s));
       }},
      {"unsynchronized_pool",
       [](void* s, pmr_mem_resource* up) {
         auto* p = static_cast<pmr_unsynchronized_pool*>(s);
         pmr_unsynchronized_pool_init(p, nullptr, up);
         return &p->base;
       },
       [](void* s) {
         pmr_unsynchronized_pool_destroy(
             static_cast<pmr_unsynchronized_pool*>(s));
       },
       [](void* s) {
         pmr_unsynchronized_pool_release(
             static_cast<pmr_unsynchronized_pool*>(s));
       }},
      {"synchronized_pool",
       [](void* s, pmr_mem_resource* up) {
         auto* p = static_cast<pmr_synchronized_pool*>(s);
         pmr_synchronized_pool_init(p, nullptr, up);
         return &p->base;
       },
       [](void* s) {
         pmr_synchronized_pool_destroy(static_cast<pmr_synchronized_pool*>(s));
       },
       [](void* s) {
         pmr_synchronized_pool_release(static_cast<pmr_synchronized_pool*>(s));
       }},
      {"thread_cache",
       [](void* s, pmr_mem_resource* up) {
         auto* t = static_cast<pmr_thread_cache*>(s);
         pmr_thread_cache_init(t, nullptr, up);
         return &t->base;
       },
       [](void* s) {
         pmr_thread_cache_destroy(static_cast<pmr_thread_cache*>(s));
       },
       [](void* s) {
         pmr_thread_cache_release(static_cast<pmr_thread_cache*>(s));
       }},
      {"statistics",
       [](void* s, pmr_mem_resource* up) {
         auto* t = static_cast<pmr_statistics*>(s);
         pmr_statistics_init(t, up);
         return &t->base;
       },
       [](void* s) { pmr_statistics_destroy(static_cast<pmr_statistics*>(s)); },
       nullptr},
      {"debug_resource",
       [](void* s, pmr_mem_resource* up) {
         auto* t = static_cast<pmr_debug_resource*>(s);
         pmr_debug_resource_options o{};
         o.no_quarantine = true;
         pmr_debug_resource_init(t, &o, up);
         return &t->base;
       },
       [](void* s) {
         pmr_debug_resource_destroy(static_cast<pmr_debug_resource*>(s));
       },
       nullptr},
  };
}

const size_t kSizes[] = {0, 8, 100, 1000, 5000, 100000};

TEST(Errno, SuccessAndDeallocationLeaveErrnoAloneEverywhere) {
  for (const Any& a : AllResources()) {
    CountingResource up;
    Storage st;
    pmr_mem_resource* r = a.init(&st, up.get());
    std::vector<std::pair<void*, size_t>> blocks;
    for (int round = 0; round < 3; ++round)
      for (size_t n : kSizes) {
        errno = EDOM;
        void* p = pmr_allocate(r, n, 16);
        ASSERT_NE(p, nullptr) << a.name;
        EXPECT_EQ(errno, EDOM) << a.name << " allocate " << n;
        blocks.push_back({p, n});
      }
    for (auto& b : blocks) {
      errno = EDOM;
      pmr_deallocate(r, b.first, b.second, 16);
      EXPECT_EQ(errno, EDOM) << a.name << " deallocate " << b.second;
    }
    a.destroy(&st);
    EXPECT_EQ(up.outstanding_blocks(), 0u) << a.name;
  }
}

// ---- destroy twice
// ------------------------------------------------------------

TEST(Destroy, IsIdempotentForEveryResource) {
  for (const Any& a : AllResources()) {
    CountingResource up;
    Storage st;
    pmr_mem_resource* r = a.init(&st, up.get());
    std::vector<std::pair<void*, size_t>> blocks;
    for (size_t n : kSizes) blocks.push_back({pmr_allocate(r, n, 8), n});
    // The wrappers own no memory: their blocks are given back first. The
    // others give everything back at destroy.
    bool wrapper = a.release == nullptr;
    if (wrapper)
      for (auto& b : blocks) pmr_deallocate(r, b.first, b.second, 8);
    a.destroy(&st);
    a.destroy(&st);
    if (a.release != nullptr) a.release(&st);  // release after destroy
    EXPECT_EQ(up.outstanding_blocks(), 0u) << a.name;
    EXPECT_EQ(up.deallocations(), up.allocations()) << a.name;
  }
}

// After destroy the pools and the monotonic buffer fail every allocation
// (NULL, errno EINVAL) without asking upstream, where they used to take
// memory that nothing gave back; a block freed after destroy is ignored;
// init makes them usable again. (Debug builds also report each call:
// //tests:null_rule_debug_test.)
template <typename T>
void UseAfterDestroyFails(const char* name, bool (*init)(T*, CountingResource*),
                          void (*destroy)(T*)) {
  SCOPED_TRACE(name);
  CountingResource up;
  T r;
  ASSERT_TRUE(init(&r, &up));
  pmr_mem_resource* base = reinterpret_cast<pmr_mem_resource*>(&r);
  void* kept = pmr_allocate(base, 64, 8);
  ASSERT_NE(kept, nullptr);
  destroy(&r);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  const size_t calls = up.calls().size();
  for (size_t n : {size_t{0}, size_t{64}, size_t{5000}, size_t{1} << 20}) {
    errno = 0;
    EXPECT_EQ(pmr_allocate(base, n, 8), nullptr) << n;
    EXPECT_EQ(errno, EINVAL) << n;
  }
  pmr_deallocate(base, kept, 64, 8);  // gone with destroy: ignored
  EXPECT_FALSE(pmr_try_resize(base, kept, 64, 48, 8));
  EXPECT_EQ(up.calls().size(), calls);  // upstream never asked
  destroy(&r);                          // still idempotent
  ASSERT_TRUE(init(&r, &up));
  void* p = pmr_allocate(base, 64, 8);
  EXPECT_NE(p, nullptr);
  pmr_deallocate(base, p, 64, 8);
  destroy(&r);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
}

TEST(Destroy, UseAfterDestroyFailsAndReinitWorks) {
  UseAfterDestroyFails<pmr_unsynchronized_pool>(
      "unsynchronized_pool",
      [](pmr_unsynchronized_pool* p, CountingResource* up) {
        return pmr_unsynchronized_pool_init(p, nullptr, up->get());
      },
      pmr_unsynchronized_pool_destroy);
  UseAfterDestroyFails<pmr_synchronized_pool>(
      "synchronized_pool",
      [](pmr_synchronized_pool* p, CountingResource* up) {
        return pmr_synchronized_pool_init(p, nullptr, up->get());
      },
      pmr_synchronized_pool_destroy);
  UseAfterDestroyFails<pmr_thread_cache>(
      "thread_cache",
      [](pmr_thread_cache* t, CountingResource* up) {
        return pmr_thread_cache_init(t, nullptr, up->get());
      },
      pmr_thread_cache_destroy);
  UseAfterDestroyFails<pmr_monotonic_buffer>(
      "monotonic_buffer",
      [](pmr_monotonic_buffer* m, CountingResource* up) {
        return pmr_monotonic_buffer_init(m, up->get());
      },
      pmr_monotonic_buffer_destroy);
}

// The monotonic buffer's inline allocate bypasses the ops: it fails too.
TEST(Destroy, MonotonicInlineAllocateAfterDestroyFails) {
  CountingResource up;
  alignas(16) char buf[256];
  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init_with_buffer(&m, buf, sizeof buf, up.get());
  ASSERT_NE(pmr_monotonic_buffer_allocate(&m, 16, 8), nullptr);
  pmr_monotonic_buffer_destroy(&m);
  errno = 0;
  EXPECT_EQ(pmr_monotonic_buffer_allocate(&m, 16, 8), nullptr);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(pmr_monotonic_buffer_allocate(&m, 4096, 8), nullptr);
  pmr_monotonic_buffer_reset(&m);  // nothing to reset: still destroyed
  pmr_monotonic_buffer_release(&m);
  EXPECT_EQ(pmr_monotonic_buffer_allocate(&m, 16, 8), nullptr);
  EXPECT_EQ(up.calls().size(), 0u);
}

TEST(Destroy, ThreadCacheDestroyTwiceWhileAThreadHoldsACache) {
  CountingResource up;
  pmr_thread_cache tc;
  ASSERT_TRUE(pmr_thread_cache_init(&tc, nullptr, up.get()));
  std::mutex mu;
  std::condition_variable cv;
  int stage = 0;
  std::thread t([&] {
    pmr_deallocate(&tc.base, pmr_allocate(&tc.base, 64, 8), 64, 8);
    std::unique_lock<std::mutex> lock(mu);
    stage = 1;
    cv.notify_all();
    cv.wait(lock, [&] { return stage == 2; });
  });
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return stage == 1; });
  }
  pmr_thread_cache_destroy(&tc);
  pmr_thread_cache_destroy(&tc);
  pmr_thread_cache_release(&tc);
  {
    std::lock_guard<std::mutex> lock(mu);
    stage = 2;
  }
  cv.notify_all();
  t.join();  // its exit finds no cache of the destroyed instance
  EXPECT_EQ(up.outstanding_blocks(), 0u);
}

// ---- init over a live instance
// ------------------------------------------------

// A thread holds a cache of the instance; the instance is initialised again
// (misuse), used, destroyed; then the thread exits.
TEST(InitOverLive, ThreadCacheBreaksNothingAndLeaksNothing) {
  CountingResource up;
  pmr_thread_cache tc;
  ASSERT_TRUE(pmr_thread_cache_init(&tc, nullptr, up.get()));
  std::mutex mu;
  std::condition_variable cv;
  int stage = 0;
  std::thread t([&] {
    void* p = pmr_allocate(&tc.base, 64, 8);
    pmr_deallocate(&tc.base, p, 64, 8);
    std::unique_lock<std::mutex> lock(mu);
    stage = 1;
    cv.notify_all();
    cv.wait(lock, [&] { return stage == 2; });
  });
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return stage == 1; });
  }
  pmr_misuse_handler old =
      pmr_set_misuse_handler([](const char*, void*) {}, nullptr);
  ASSERT_TRUE(pmr_thread_cache_init(&tc, nullptr, up.get()));
  pmr_set_misuse_handler(old, nullptr);
  EXPECT_EQ(up.outstanding_blocks(), 0u);  // the old instance was destroyed
  void* q = pmr_allocate(&tc.base, 64, 8);
  ASSERT_NE(q, nullptr);
  pmr_deallocate(&tc.base, q, 64, 8);
  pmr_thread_cache_destroy(&tc);
  {
    std::lock_guard<std::mutex> lock(mu);
    stage = 2;
  }
  cv.notify_all();
  t.join();
  EXPECT_EQ(up.outstanding_blocks(), 0u);
}

TEST(InitOverLive, SynchronizedPoolAndDebugResourceLeakNothing) {
  CountingResource up;
  pmr_synchronized_pool pool;
  pmr_synchronized_pool_init(&pool, nullptr, up.get());
  ASSERT_NE(pmr_allocate(&pool.base, 64, 8), nullptr);
  pmr_misuse_handler old =
      pmr_set_misuse_handler([](const char*, void*) {}, nullptr);
  pmr_synchronized_pool_init(&pool, nullptr, up.get());
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  ASSERT_NE(pmr_allocate(&pool.base, 64, 8), nullptr);
  pmr_synchronized_pool_destroy(&pool);
  EXPECT_EQ(up.outstanding_blocks(), 0u);

  pmr_debug_resource d;
  pmr_debug_resource_options o{};
  o.continue_on_misuse = true;
  pmr_debug_resource_init(&d, &o, up.get());
  ASSERT_NE(pmr_allocate(&d.base, 64, 8), nullptr);
  pmr_debug_resource_init(&d, &o, up.get());
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  EXPECT_EQ(pmr_debug_resource_destroy(&d), 0u);
  pmr_set_misuse_handler(old, nullptr);
}

// ---- NULL is the default
// ------------------------------------------------------

TEST(NullResource, DispatchUsesTheDefaultResource) {
  CountingResource up;
  pmr_mem_resource* old = pmr_set_default_resource(up.get());
  void* p = pmr_allocate(nullptr, 100, 16);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(up.allocations(), 1u);
  EXPECT_FALSE(pmr_try_resize(nullptr, p, 100, 200, 16));  // no hook
  EXPECT_TRUE(pmr_is_equal(nullptr, up.get()));
  EXPECT_TRUE(pmr_is_equal(up.get(), nullptr));
  EXPECT_TRUE(pmr_is_equal(nullptr, nullptr));
  EXPECT_FALSE(pmr_is_equal(nullptr, pmr_malloc_resource()));
  pmr_deallocate(nullptr, p, 100, 16);
  EXPECT_EQ(up.deallocations(), 1u);
  void* q = pmr_malloc(nullptr, 10);
  pmr_free(nullptr, q, 10);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  pmr_set_default_resource(old);
  // Bad arguments are still rejected first.
  errno = 0;
  EXPECT_EQ(pmr_allocate(nullptr, 8, 3), nullptr);
  EXPECT_EQ(errno, EINVAL);
}

// pmr_try_resize rejects an alignment that is not a power of two before
// any hook runs, as pmr_allocate does: nothing changes, the block stays.
TEST(TryResize, ABadAlignmentIsRefusedBeforeTheHook) {
  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init(&m, nullptr);
  pmr_thread_cache tc;
  ASSERT_TRUE(pmr_thread_cache_init(&tc, nullptr, nullptr));
  pmr_synchronized_pool sp;
  pmr_synchronized_pool_init(&sp, nullptr, nullptr);
  for (pmr_mem_resource* r : {&m.base, &tc.base, &sp.base}) {
    void* p = pmr_allocate(r, 100, 8);
    ASSERT_NE(p, nullptr);
    EXPECT_FALSE(pmr_try_resize(r, p, 100, 101, 0));
    EXPECT_FALSE(pmr_try_resize(r, p, 100, 101, 3));
    EXPECT_FALSE(pmr_try_resize(r, p, 100, 101, 24));
    EXPECT_TRUE(pmr_try_resize(r, p, 100, 101, 8));
    pmr_deallocate(r, p, 101, 8);
  }
  pmr_synchronized_pool_destroy(&sp);
  pmr_thread_cache_destroy(&tc);
  pmr_monotonic_buffer_destroy(&m);
}

TEST(NullResource, TryResizeThroughNullReachesTheDefaultsHook) {
  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init(&m, nullptr);
  pmr_mem_resource* old = pmr_set_default_resource(&m.base);
  void* p = pmr_allocate(nullptr, 100, 8);
  EXPECT_TRUE(pmr_try_resize(nullptr, p, 100, 200, 8));
  pmr_set_default_resource(old);
  pmr_monotonic_buffer_destroy(&m);
}

// NULL data with length 0 is an empty input.
TEST(NullData, WithLengthZeroIsEmpty) {
  pmr_vector v;
  pmr_vector_init(&v, sizeof(int), alignof(int), nullptr);
  EXPECT_TRUE(pmr_vector_insert_range(&v, 0, nullptr, 0));
  EXPECT_EQ(pmr_vector_size(&v), 0u);
  pmr_vector_destroy(&v);

  pmr_string s;
  pmr_string_init(&s, nullptr);
  ASSERT_TRUE(pmr_string_assign_cstr(&s, "abc"));
  EXPECT_EQ(pmr_string_find(&s, nullptr, 0, 1), 1u);
  EXPECT_EQ(pmr_string_rfind(&s, nullptr, 0, PMR_STRING_NPOS), 3u);
  EXPECT_GT(pmr_string_compare_bytes(&s, nullptr, 0), 0);
  EXPECT_TRUE(pmr_string_append_bytes(&s, nullptr, 0));
  EXPECT_EQ(pmr_string_length(&s), 3u);
  pmr_string_destroy(&s);
}

// ---- deallocation on a new thread never allocates
// -----------------------------

// Records the allocations that reach it from threads marked as watched
// (thread ids are reused, so a thread is marked rather than named).
// Thread-safe.
thread_local bool t_watched = false;

class ThreadRecorder {
 public:
  ThreadRecorder() {
    static const pmr_mem_resource_ops ops = {
        Allocate, Deallocate, nullptr, nullptr, nullptr, nullptr, nullptr};
    hook_.base.ops = &ops;
    hook_.self = this;
  }
  pmr_mem_resource* get() { return &hook_.base; }
  size_t watched_allocations() {
    std::lock_guard<std::mutex> lock(mu_);
    return watched_;
  }

 private:
  struct Hook {
    pmr_mem_resource base;
    ThreadRecorder* self;
  };
  static void* Allocate(pmr_mem_resource* r, size_t bytes, size_t align) {
    ThreadRecorder* t = reinterpret_cast<Hook*>(r)->self;
    {
      std::lock_guard<std::mutex> lock(t->mu_);
      if (t_watched) ++t->watched_;
    }
    return pmr_allocate(pmr_malloc_resource(), bytes, align);
  }
  static void Deallocate(pmr_mem_resource*, void* p, size_t bytes,
                         size_t align) {
    pmr_deallocate(pmr_malloc_resource(), p, bytes, align);
  }
  Hook hook_;
  std::mutex mu_;
  size_t watched_ = 0;
};

// Thread A allocates blocks of every pooled size and oversize; then a new
// thread B frees them all: upstream must see no allocation from B.
void DeallocateOnANewThread(const char* name) {
  for (const Any& a : AllResources()) {
    if (a.name != name) continue;
    ThreadRecorder up;
    Storage st;
    pmr_mem_resource* r = a.init(&st, up.get());
    std::vector<std::pair<void*, size_t>> blocks;
    std::thread([&] {
      for (int i = 0; i < 600; ++i)
        for (size_t n : {8, 64, 200, 1000, 3000, 9000}) {
          void* p = pmr_allocate(r, n, 8);
          ASSERT_NE(p, nullptr);
          blocks.push_back({p, n});
        }
    }).join();
    std::thread([&] {
      t_watched = true;
      for (auto& x : blocks) pmr_deallocate(r, x.first, x.second, 8);
    }).join();
    EXPECT_EQ(up.watched_allocations(), 0u) << name;
    a.destroy(&st);
    return;
  }
  FAIL() << "no resource " << name;
}

TEST(DeallocateOnANewThread, UnsynchronizedPoolNeverAllocates) {
  DeallocateOnANewThread("unsynchronized_pool");
}
TEST(DeallocateOnANewThread, MonotonicBufferNeverAllocates) {
  DeallocateOnANewThread("monotonic_buffer");
}
// A block goes back to its own page (under the owning shard's lock or onto
// the page's remote list): the freeing thread needs no shard of its own.
TEST(DeallocateOnANewThread, SynchronizedPoolNeverAllocates) {
  DeallocateOnANewThread("synchronized_pool");
}
// A freeing thread's magazines are made from pages the pool holds, never
// from upstream; without one, a block goes back to its page.
TEST(DeallocateOnANewThread, ThreadCacheNeverAllocates) {
  DeallocateOnANewThread("thread_cache");
}

}  // namespace
