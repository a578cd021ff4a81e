// The abstract struct, the dispatch functions, and the malloc, null and
// default resources.
#include "mem_resource/pmr_mem_resource.h"
#include "resources/pmr_debug_resource.h"
#include "resources/pmr_monotonic_buffer.h"
#include "resources/pmr_statistics.h"
#include "resources/pmr_synchronized_pool.h"
#include "resources/pmr_thread_cache.h"
#include "resources/pmr_unsynchronized_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/testkit/counting_resource.h"

namespace {

// A resource that records the calls made to its hooks.
struct Spy {
  pmr_mem_resource base;
  int allocates = 0, deallocates = 0, is_equals = 0;
  size_t last_bytes = 0, last_alignment = 0;
  void* last_p = nullptr;
  const pmr_mem_resource* last_other = nullptr;
  bool equal_answer = false;
  alignas(64) unsigned char storage[256];
};

void* SpyAllocate(pmr_mem_resource* self, size_t bytes, size_t alignment) {
  Spy* s = reinterpret_cast<Spy*>(self);
  ++s->allocates;
  s->last_bytes = bytes;
  s->last_alignment = alignment;
  return s->storage;
}
void SpyDeallocate(pmr_mem_resource* self, void* p, size_t bytes,
                   size_t alignment) {
  Spy* s = reinterpret_cast<Spy*>(self);
  ++s->deallocates;
  s->last_p = p;
  s->last_bytes = bytes;
  s->last_alignment = alignment;
}
bool SpyIsEqual(const pmr_mem_resource* self, const pmr_mem_resource* other) {
  Spy* s = const_cast<Spy*>(reinterpret_cast<const Spy*>(self));
  ++s->is_equals;
  s->last_other = other;
  return s->equal_answer;
}
int resize_calls = 0;
size_t resize_args[3];
bool SpyTryResize(pmr_mem_resource*, void*, size_t old_bytes, size_t new_bytes,
                  size_t alignment) {
  ++resize_calls;
  resize_args[0] = old_bytes;
  resize_args[1] = new_bytes;
  resize_args[2] = alignment;
  return new_bytes <= 256;
}
const pmr_mem_resource_ops kSpyOps = {SpyAllocate,  SpyDeallocate, SpyIsEqual,
                                      SpyTryResize, nullptr,       nullptr,
                                      nullptr};
const pmr_mem_resource_ops kSpyOpsNoEqual = {
    SpyAllocate, SpyDeallocate, nullptr, nullptr, nullptr, nullptr, nullptr};

Spy MakeSpy(const pmr_mem_resource_ops* ops = &kSpyOps) {
  Spy s;
  s.base.ops = ops;
  return s;
}

TEST(Dispatch, AllocateCallsTheHookOnceWithIdenticalArguments) {
  Spy s = MakeSpy();
  void* p = pmr_allocate(&s.base, 123, 32);
  EXPECT_EQ(p, s.storage);
  EXPECT_EQ(s.allocates, 1);
  EXPECT_EQ(s.deallocates, 0);
  EXPECT_EQ(s.is_equals, 0);
  EXPECT_EQ(s.last_bytes, 123u);
  EXPECT_EQ(s.last_alignment, 32u);
}

TEST(Dispatch, DeallocateCallsTheHookOnceWithIdenticalArguments) {
  Spy s = MakeSpy();
  pmr_deallocate(&s.base, s.storage + 8, 77, 8);
  EXPECT_EQ(s.deallocates, 1);
  EXPECT_EQ(s.allocates, 0);
  EXPECT_EQ(s.last_p, s.storage + 8);
  EXPECT_EQ(s.last_bytes, 77u);
  EXPECT_EQ(s.last_alignment, 8u);
}

TEST(Dispatch, DeallocateNullNeverReachesTheHook) {
  Spy s = MakeSpy();
  pmr_deallocate(&s.base, nullptr, 64, 16);
  EXPECT_EQ(s.deallocates, 0);
}

TEST(Dispatch, BadArgumentsNeverReachTheHook) {
  Spy s = MakeSpy();
  errno = 0;
  EXPECT_EQ(pmr_allocate(&s.base, 8, 0), nullptr);
  EXPECT_EQ(errno, EINVAL);
  errno = 0;
  EXPECT_EQ(pmr_allocate(&s.base, 8, 48), nullptr);
  EXPECT_EQ(errno, EINVAL);
  errno = 0;
  EXPECT_EQ(pmr_allocate(&s.base, SIZE_MAX, 1), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(pmr_allocate(&s.base, SIZE_MAX - 63, 128), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_EQ(s.allocates, 0);
  // The largest size that does not overflow reaches the hook.
  EXPECT_NE(pmr_allocate(&s.base, SIZE_MAX - 128, 128), nullptr);
  EXPECT_EQ(s.allocates, 1);
  EXPECT_EQ(s.last_bytes, SIZE_MAX - 128);
}

TEST(Dispatch, SuccessLeavesErrnoAlone) {
  Spy s = MakeSpy();
  errno = 1234;
  EXPECT_NE(pmr_allocate(&s.base, 8, 8), nullptr);
  EXPECT_EQ(errno, 1234);
}

TEST(Dispatch, IsEqualOnIdentityCallsNoHook) {
  Spy a = MakeSpy();
  a.equal_answer = false;  // would say "not equal" if asked
  EXPECT_TRUE(pmr_is_equal(&a.base, &a.base));
  EXPECT_EQ(a.is_equals, 0);
}

TEST(Dispatch, IsEqualCallsOnlyTheLeftHook) {
  Spy a = MakeSpy(), b = MakeSpy();
  a.equal_answer = true;
  b.equal_answer = false;
  EXPECT_TRUE(pmr_is_equal(&a.base, &b.base));
  EXPECT_EQ(a.is_equals, 1);
  EXPECT_EQ(a.last_other, &b.base);
  EXPECT_EQ(b.is_equals, 0);
  EXPECT_FALSE(pmr_is_equal(&b.base, &a.base));
  EXPECT_EQ(b.is_equals, 1);
  EXPECT_EQ(a.is_equals, 1);
}

TEST(Dispatch, MissingIsEqualHookMeansIdentityOnly) {
  Spy a = MakeSpy(&kSpyOpsNoEqual), b = MakeSpy(&kSpyOpsNoEqual);
  EXPECT_TRUE(pmr_is_equal(&a.base, &a.base));
  EXPECT_FALSE(pmr_is_equal(&a.base, &b.base));
}

TEST(Dispatch, MallocAndFreeUseMaxAlign) {
  Spy s = MakeSpy();
  pmr_malloc(&s.base, 10);
  EXPECT_EQ(s.last_alignment, alignof(max_align_t));
  pmr_free(&s.base, s.storage, 10);
  EXPECT_EQ(s.last_alignment, alignof(max_align_t));
  EXPECT_EQ(s.last_bytes, 10u);
}

TEST(Dispatch, TryResizeCallsTheOptionalHook) {
  Spy s = MakeSpy();
  resize_calls = 0;
  EXPECT_TRUE(pmr_try_resize(&s.base, s.storage, 10, 200, 8));
  EXPECT_EQ(resize_calls, 1);
  EXPECT_EQ(resize_args[0], 10u);
  EXPECT_EQ(resize_args[1], 200u);
  EXPECT_EQ(resize_args[2], 8u);
  EXPECT_FALSE(pmr_try_resize(&s.base, s.storage, 200, 300, 8));
  EXPECT_EQ(resize_calls, 2);
  // NULL block and overflowing sizes never reach the hook.
  EXPECT_FALSE(pmr_try_resize(&s.base, nullptr, 0, 10, 8));
  EXPECT_FALSE(pmr_try_resize(&s.base, s.storage, 10, SIZE_MAX - 3, 8));
  EXPECT_EQ(resize_calls, 2);
}

TEST(Dispatch, TryResizeWithoutHookIsFalse) {
  Spy s = MakeSpy(&kSpyOpsNoEqual);
  EXPECT_FALSE(pmr_try_resize(&s.base, s.storage, 10, 20, 8));
  int x = 0;
  EXPECT_FALSE(pmr_try_resize(pmr_malloc_resource(), &x, 4, 8, 4));
}

void Capture(const char* message, void* context) {
  static_cast<std::vector<std::string>*>(context)->push_back(message);
}

TEST(Misuse, ReportsGoToTheInstalledHandlerWithItsContext) {
  std::vector<std::string> messages;
  pmr_misuse_handler prev = pmr_set_misuse_handler(Capture, &messages);
  pmr_report_misuse("double free of %p in %s (%zu bytes)", (void*)0x1000,
                    "pool", size_t{64});
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0], "double free of 0x1000 in pool (64 bytes)");
  EXPECT_EQ(pmr_set_misuse_handler(prev, nullptr), &Capture);
}

TEST(Misuse, GetTellsTheDefaultFromAUsersHandler) {
  EXPECT_EQ(pmr_get_misuse_handler(nullptr), nullptr);  // the default
  int ctx = 0;
  pmr_set_misuse_handler(Capture, &ctx);
  void* got = nullptr;
  EXPECT_EQ(pmr_get_misuse_handler(&got), &Capture);
  EXPECT_EQ(got, &ctx);
  pmr_set_misuse_handler(nullptr, nullptr);
  EXPECT_EQ(pmr_get_misuse_handler(nullptr), nullptr);
}

TEST(Misuse, DefaultHandlerWritesToStderr) {
  pmr_set_misuse_handler(nullptr, nullptr);
  ::testing::internal::CaptureStderr();
  pmr_report_misuse("wrong size %d", 7);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "pmr: wrong size 7\n");
}

TEST(MallocResource, IsASingleton) {
  EXPECT_EQ(pmr_malloc_resource(), pmr_malloc_resource());
  EXPECT_NE(pmr_malloc_resource(), pmr_null_resource());
  EXPECT_FALSE(pmr_is_equal(pmr_malloc_resource(), pmr_null_resource()));
}

TEST(MallocResource, HonoursEveryAlignmentUpToOneMiBIncludingSmallSizes) {
  pmr_mem_resource* m = pmr_malloc_resource();
  for (size_t a = 1; a <= (size_t{1} << 20); a *= 2) {
    const size_t sizes[] = {0, 1, a / 2, a - 1 + (a == 1), a, a + 1, 3 * a};
    for (size_t s : sizes) {
      void* p = pmr_allocate(m, s, a);
      ASSERT_NE(p, nullptr) << s << " / " << a;
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % a, 0u) << s << " / " << a;
      std::memset(p, 0x5a, s);
      pmr_deallocate(m, p, s, a);
    }
  }
}

TEST(MallocResource, ZeroBytesGivesDistinctValidPointers) {
  pmr_mem_resource* m = pmr_malloc_resource();
  std::set<void*> seen;
  std::vector<void*> ps;
  for (int i = 0; i < 1000; ++i) {
    void* p = pmr_allocate(m, 0, 1);
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(seen.insert(p).second);
    ps.push_back(p);
  }
  for (void* p : ps) pmr_deallocate(m, p, 0, 1);
}

TEST(MallocResource, ImpossibleSizeFailsWithEnomem) {
  errno = 0;
  EXPECT_EQ(pmr_allocate(pmr_malloc_resource(), SIZE_MAX / 2, 8), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(pmr_allocate(pmr_malloc_resource(), SIZE_MAX / 2, 4096), nullptr);
  EXPECT_EQ(errno, ENOMEM);
}

TEST(NullResource, EveryAllocationFailsWithoutTouchingTheHeap) {
  // A default resource that counts: the null resource must not use it, nor
  // anything else: it has no upstream at all.
  pmrtest::CountingResource counting;
  pmr_mem_resource* prev = pmr_set_default_resource(counting.get());
  pmr_mem_resource* n = pmr_null_resource();
  for (size_t s : {size_t{0}, size_t{1}, size_t{64}, size_t{1} << 30}) {
    errno = 0;
    EXPECT_EQ(pmr_allocate(n, s, 8), nullptr);
    EXPECT_EQ(errno, ENOMEM);
  }
  pmr_set_default_resource(prev);
  EXPECT_EQ(counting.calls().size(), 0u);
}

TEST(NullResource, DeallocateDoesNothing) {
  int x = 42;
  pmr_deallocate(pmr_null_resource(), &x, sizeof x, alignof(int));
  EXPECT_EQ(x, 42);
  EXPECT_EQ(pmr_null_resource(), pmr_null_resource());
}

TEST(DefaultResource, StartsAsMalloc) {
  EXPECT_EQ(pmr_get_default_resource(), pmr_malloc_resource());
}

TEST(DefaultResource, SetReturnsThePreviousAndNullRestoresMalloc) {
  pmrtest::CountingResource counting;
  EXPECT_EQ(pmr_set_default_resource(counting.get()), pmr_malloc_resource());
  EXPECT_EQ(pmr_get_default_resource(), counting.get());
  EXPECT_EQ(pmr_resource_or_default(nullptr), counting.get());
  EXPECT_EQ(pmr_resource_or_default(pmr_null_resource()), pmr_null_resource());
  EXPECT_EQ(pmr_set_default_resource(nullptr), counting.get());
  EXPECT_EQ(pmr_get_default_resource(), pmr_malloc_resource());
}

TEST(DefaultResource, GetAndSetFromEightThreadsAtOnce) {
  pmrtest::CountingResource a, b;
  std::atomic<bool> go{false};
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      while (!go.load()) {
      }
      for (int i = 0; i < 20000; ++i) {
        if (t % 2 == 0) {
          pmr_mem_resource* prev =
              pmr_set_default_resource(i % 2 ? a.get() : b.get());
          if (prev != a.get() && prev != b.get() &&
              prev != pmr_malloc_resource())
            ++bad;
        } else {
          pmr_mem_resource* r = pmr_get_default_resource();
          if (r != a.get() && r != b.get() && r != pmr_malloc_resource())
            ++bad;
          else
            pmr_deallocate(r, pmr_allocate(r, 16, 8), 16, 8);
        }
      }
    });
  }
  go = true;
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
  pmr_set_default_resource(nullptr);
  EXPECT_EQ(a.outstanding_blocks() + b.outstanding_blocks(), 0u);
  EXPECT_EQ(a.mismatches() + b.mismatches(), 0u);
}

}  // namespace

namespace {

// What each resource says of itself (PMR_TRAIT_*), and that a resource
// declaring nothing says 0.
TEST(Traits, EachResourceSaysWhatItIs) {
  const unsigned kAll =
      PMR_TRAIT_THREAD_SAFE | PMR_TRAIT_KEEPS_FREED | PMR_TRAIT_MAPS_LARGE;
  EXPECT_EQ(pmr_resource_traits(pmr_malloc_resource()),
            PMR_TRAIT_THREAD_SAFE | PMR_TRAIT_SYSTEM_MEMORY);
  EXPECT_EQ(pmr_resource_traits(pmr_null_resource()), PMR_TRAIT_THREAD_SAFE);
  EXPECT_EQ(pmr_resource_traits(nullptr),
            pmr_resource_traits(pmr_get_default_resource()));
  Spy spy = MakeSpy();
  EXPECT_EQ(pmr_resource_traits(&spy.base), 0u);

  pmr_unsynchronized_pool unsync;
  pmr_unsynchronized_pool_init(&unsync, nullptr, pmr_malloc_resource());
  EXPECT_EQ(pmr_resource_traits(&unsync.base),
            PMR_TRAIT_KEEPS_FREED | PMR_TRAIT_MAPS_LARGE);
  pmr_synchronized_pool sync;
  pmr_synchronized_pool_init(&sync, nullptr, pmr_malloc_resource());
  EXPECT_EQ(pmr_resource_traits(&sync.base), kAll);
  pmr_thread_cache tc;
  pmr_thread_cache_init(&tc, nullptr, &sync.base);  // maps through sync
  EXPECT_EQ(pmr_resource_traits(&tc.base), kAll);
  pmr_unsynchronized_pool over_spy;
  pmr_unsynchronized_pool_init(&over_spy, nullptr, &spy.base);
  EXPECT_EQ(pmr_resource_traits(&over_spy.base), PMR_TRAIT_KEEPS_FREED);
  pmr_monotonic_buffer mono;
  pmr_monotonic_buffer_init(&mono, nullptr);
  EXPECT_EQ(pmr_resource_traits(&mono.base), 0u);
  pmr_statistics st;
  pmr_statistics_init(&st, &sync.base);
  EXPECT_EQ(pmr_resource_traits(&st.base), kAll);  // passes sync's through
  pmr_debug_resource dbg;
  pmr_debug_resource_init(&dbg, nullptr, &sync.base);
  EXPECT_EQ(pmr_resource_traits(&dbg.base), PMR_TRAIT_THREAD_SAFE);

  pmr_debug_resource_destroy(&dbg);
  pmr_statistics_destroy(&st);
  pmr_monotonic_buffer_destroy(&mono);
  pmr_unsynchronized_pool_destroy(&over_spy);
  pmr_thread_cache_destroy(&tc);
  pmr_synchronized_pool_destroy(&sync);
  pmr_unsynchronized_pool_destroy(&unsync);
}

// A third-party upstream that says it keeps freed blocks: a pool over it
// keeps no freed oversize block of its own (the one under keeps it).
struct Keeper {
  pmr_mem_resource base;
  static void* Allocate(pmr_mem_resource*, size_t bytes, size_t alignment) {
    return pmr_allocate(pmr_malloc_resource(), bytes, alignment);
  }
  static void Deallocate(pmr_mem_resource*, void* p, size_t bytes,
                         size_t alignment) {
    pmr_deallocate(pmr_malloc_resource(), p, bytes, alignment);
  }
  static unsigned Traits(const pmr_mem_resource*) {
    return PMR_TRAIT_THREAD_SAFE | PMR_TRAIT_KEEPS_FREED;
  }
};

TEST(Traits, AnUpstreamThatKeepsFreedBlocksIsNotDoubledByAPoolOverIt) {
  static const pmr_mem_resource_ops ops = {Keeper::Allocate, Keeper::Deallocate,
                                           nullptr,          nullptr,
                                           Keeper::Traits,   nullptr,
                                           nullptr};
  static const pmr_mem_resource_ops plain = {
      Keeper::Allocate, Keeper::Deallocate, nullptr, nullptr, nullptr, nullptr,
      nullptr};
  for (const pmr_mem_resource_ops* o : {&ops, &plain}) {
    Keeper k{{o}};
    pmr_unsynchronized_pool pool;
    pmr_unsynchronized_pool_init(&pool, nullptr, &k.base);
    void* big = pmr_allocate(&pool.base, 50000, 16);
    ASSERT_NE(big, nullptr);
    pmr_deallocate(&pool.base, big, 50000, 16);
    EXPECT_EQ(pmr_unsynchronized_pool_get_stats(&pool).free_oversize_bytes > 0,
              o == &plain);
    pmr_unsynchronized_pool_destroy(&pool);
  }
}

// A third-party upstream handing out the system allocator's memory: when it
// says PMR_TRAIT_SYSTEM_MEMORY, a pool over it maps its memory itself, as
// over the malloc resource (upstream sees no call, and the pool says it maps
// its large blocks); when it does not, the pool asks it for everything.
struct SystemMemory {
  pmr_mem_resource base;
  static std::atomic<int> calls;
  static void* Allocate(pmr_mem_resource*, size_t bytes, size_t alignment) {
    ++calls;
    return pmr_allocate(pmr_malloc_resource(), bytes, alignment);
  }
  static void Deallocate(pmr_mem_resource*, void* p, size_t bytes,
                         size_t alignment) {
    ++calls;
    pmr_deallocate(pmr_malloc_resource(), p, bytes, alignment);
  }
  static unsigned Traits(const pmr_mem_resource*) {
    return PMR_TRAIT_THREAD_SAFE | PMR_TRAIT_SYSTEM_MEMORY;
  }
  static unsigned ThreadSafe(const pmr_mem_resource*) {
    return PMR_TRAIT_THREAD_SAFE;
  }
};
std::atomic<int> SystemMemory::calls{0};

TEST(Traits, AThirdPartyUpstreamOfSystemMemoryIsMappedAroundLikeMalloc) {
  static const pmr_mem_resource_ops says = {SystemMemory::Allocate,
                                            SystemMemory::Deallocate,
                                            nullptr,
                                            nullptr,
                                            SystemMemory::Traits,
                                            nullptr,
                                            nullptr};
  static const pmr_mem_resource_ops silent = {SystemMemory::Allocate,
                                              SystemMemory::Deallocate,
                                              nullptr,
                                              nullptr,
                                              SystemMemory::ThreadSafe,
                                              nullptr,
                                              nullptr};
  for (const pmr_mem_resource_ops* o : {&says, &silent}) {
    SCOPED_TRACE(o == &says ? "says it" : "does not say it");
    SystemMemory up{{o}};
    SystemMemory::calls = 0;
    pmr_unsynchronized_pool unsync;
    pmr_unsynchronized_pool_init(&unsync, nullptr, &up.base);
    pmr_synchronized_pool sync;
    pmr_synchronized_pool_init(&sync, nullptr, &up.base);
    for (pmr_mem_resource* r : {&unsync.base, &sync.base}) {
      std::vector<void*> v;
      for (int i = 0; i < 2000; ++i) v.push_back(pmr_allocate(r, 64, 8));
      void* big = pmr_allocate(r, size_t{2} << 20, 16);
      ASSERT_NE(big, nullptr);
      memset(big, 1, size_t{2} << 20);
      pmr_deallocate(r, big, size_t{2} << 20, 16);
      for (void* p : v) {
        ASSERT_NE(p, nullptr);
        pmr_deallocate(r, p, 64, 8);
      }
      EXPECT_EQ((pmr_resource_traits(r) & PMR_TRAIT_MAPS_LARGE) != 0,
                o == &says);
    }
    pmr_synchronized_pool_destroy(&sync);
    pmr_unsynchronized_pool_destroy(&unsync);
    if (o == &says)
      EXPECT_EQ(SystemMemory::calls.load(), 0);
    else
      EXPECT_GT(SystemMemory::calls.load(), 0);
  }
}

}  // namespace
