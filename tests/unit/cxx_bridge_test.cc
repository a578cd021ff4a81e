// cxx/pmr_cxx.hpp: pmr-c resources as std::pmr::memory_resource and back,
// the RAII owners, the default bridges.
#include "cxx/pmr_cxx.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <list>
#include <memory_resource>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "containers/pmr_hashmap.h"
#include "containers/pmr_string.h"
#include "containers/pmr_vector.h"
#include "resources/pmr_debug_resource.h"
#include "tests/testkit/conformance.h"
#include "tests/testkit/counting_resource.h"
#include "tests/testkit/test_resources.h"

namespace {

bool Aligned(const void* p, size_t a) {
  return reinterpret_cast<uintptr_t>(p) % a == 0;
}

// A std resource that counts, over new_delete; optionally throws a
// non-bad_alloc exception or sets errno on success.
class CountingStd : public std::pmr::memory_resource {
 public:
  std::atomic<long> allocations{0}, outstanding{0};
  bool throw_runtime_error = false;
  bool clobber_errno = false;

 private:
  void* do_allocate(size_t bytes, size_t alignment) override {
    if (throw_runtime_error) throw std::runtime_error("refused");
    void* p = std::pmr::new_delete_resource()->allocate(bytes, alignment);
    if (clobber_errno) errno = EIO;
    ++allocations;
    ++outstanding;
    return p;
  }
  void do_deallocate(void* p, size_t bytes, size_t alignment) override {
    --outstanding;
    std::pmr::new_delete_resource()->deallocate(p, bytes, alignment);
  }
  bool do_is_equal(const memory_resource& o) const noexcept override {
    return this == &o;
  }
};

// std::pmr containers over mr: vector, string, unordered_map, list, and
// direct allocations at every alignment up to 4096. Checks every value.
void UseStdContainers(std::pmr::memory_resource* mr) {
  std::pmr::vector<int> v{mr};
  for (int i = 0; i < 2000; ++i) v.push_back(i);
  long sum = 0;
  for (int x : v) sum += x;
  EXPECT_EQ(sum, 1999L * 2000 / 2);

  std::pmr::string s{mr};
  for (int i = 0; i < 300; ++i) s.push_back(static_cast<char>('a' + i % 26));
  EXPECT_EQ(s.size(), 300u);
  EXPECT_EQ(s[27], 'b');

  std::pmr::unordered_map<int, std::pmr::string> m{mr};
  for (int i = 0; i < 500; ++i)
    m.emplace(i, std::pmr::string(std::to_string(i) + " is a long-ish value"));
  EXPECT_EQ(m.size(), 500u);
  EXPECT_EQ(m.at(321), "321 is a long-ish value");
  EXPECT_EQ(m.at(321).get_allocator().resource(), mr);

  std::pmr::list<long> l{mr};
  for (long i = 0; i < 300; ++i) l.push_front(i);
  EXPECT_EQ(l.front(), 299);
  EXPECT_EQ(l.size(), 300u);

  for (size_t a = 1; a <= 4096; a *= 2) {
    for (size_t n : {size_t{1}, size_t{24}, size_t{100}, size_t{5000}}) {
      void* p = mr->allocate(n, a);
      EXPECT_TRUE(Aligned(p, a)) << "size " << n << " alignment " << a;
      std::memset(p, 0x5a, n);
      mr->deallocate(p, n, a);
    }
  }
}

// ---- C resources as std resources ------------------------------------------

// Every pmr-c resource of the conformance suite, through as_std; a
// statistics resource on top shows the allocations went through it and
// every block came back.
TEST(CxxBridge, StdContainersOverEveryPmrResourceThroughAsStd) {
  for (const pmrtest::ConformanceCase& c : pmrtest::AllConformanceCases()) {
    if (!c.can_allocate) continue;
    SCOPED_TRACE(c.name);
    std::unique_ptr<pmrtest::ResourceUnderTest> r =
        c.make(pmr_malloc_resource());
    pmr_statistics stats;
    ASSERT_TRUE(pmr_statistics_init(&stats, r->get()));
    {
      pmrc::std_resource mr = pmrc::as_std(&stats.base);
      EXPECT_EQ(mr.get(), &mr);  // not a round trip: the adapter itself
      EXPECT_EQ(mr.c_resource(), &stats.base);
      UseStdContainers(mr.get());
    }
    pmr_statistics_stats st = pmr_statistics_get_stats(&stats);
    EXPECT_GT(st.allocations, 1000u);
    EXPECT_EQ(st.blocks_in_use, 0u);
    pmr_statistics_destroy(&stats);
  }
}

TEST(CxxBridge, NullMeansThePmrDefaultAtConstruction) {
  pmrc::std_resource mr(nullptr);
  EXPECT_EQ(mr.c_resource(), pmr_get_default_resource());
}

// ---- The RAII owners
// ---------------------------------------------------------

TEST(CxxBridge, OwnersServeStdContainers) {
  pmrtest::CountingResource up;
  {
    pmrc::synchronized_pool pool({}, up.get());
    UseStdContainers(&pool);
    EXPECT_GT(pool.stats().held_bytes, 0u);
    EXPECT_EQ(pool.upstream_resource(), up.get());
    EXPECT_EQ(pool.c_resource(), &pool.c_struct()->base);
    EXPECT_GT(pool.options().largest_required_pool_block, 0u);
    pool.release();
    EXPECT_EQ(pool.stats().held_bytes, 0u);
  }
  {
    pmr_pool_options o = {16, 256, 0};
    pmrc::unsynchronized_pool pool(o, up.get());
    UseStdContainers(&pool);
    EXPECT_EQ(pool.options().largest_required_pool_block, 256u);
    pool.trim();
  }
  {
    pmrc::thread_cache tc(up.get());
    UseStdContainers(&tc);
    EXPECT_GT(tc.stats().held_bytes, 0u);
  }
  {
    pmrc::monotonic_buffer mono(up.get());
    UseStdContainers(&mono);
    EXPECT_GT(mono.bytes_used(), 0u);
    pmrc::monotonic_buffer::marker mk = mono.mark();
    size_t used = mono.bytes_used();
    EXPECT_NE(mono.allocate(100, 8), nullptr);
    EXPECT_TRUE(mono.rewind(mk));
    EXPECT_EQ(mono.bytes_used(), used);
    mono.release();
    EXPECT_EQ(mono.bytes_used(), 0u);
  }
  {
    alignas(64) static unsigned char buffer[4096];
    pmrc::monotonic_buffer mono(buffer, sizeof buffer, pmr_null_resource());
    void* p = mono.allocate(64, 64);
    EXPECT_EQ(p, buffer);
    EXPECT_THROW((void)mono.allocate(8192, 8), std::bad_alloc);
  }
  {
    pmrc::statistics stats(up.get());
    UseStdContainers(&stats);
    EXPECT_GT(stats.stats().allocations, 1000u);
    EXPECT_EQ(stats.stats().blocks_in_use, 0u);
  }
  // Each owner gave everything back to its upstream.
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  EXPECT_EQ(up.mismatches(), 0u) << up.last_mismatch();
}

TEST(CxxBridge, OwnersOverAStdUpstream) {
  CountingStd up;
  {
    pmrc::synchronized_pool pool(&up);
    UseStdContainers(&pool);
    EXPECT_GT(up.allocations.load(), 0);
    // The upstream is an adapter inside the owner, over &up.
    EXPECT_EQ(pmrc::unwrap(pool.upstream_resource()), &up);
  }
  EXPECT_EQ(up.outstanding.load(), 0);
  {
    // A std upstream that is itself an adapter: unwrapped, no layer added.
    pmrc::statistics stats;
    pmrc::monotonic_buffer mono(
        static_cast<std::pmr::memory_resource*>(&stats));
    EXPECT_EQ(mono.upstream_resource(), stats.c_resource());
    UseStdContainers(&mono);
    EXPECT_GT(stats.stats().allocations, 0u);
  }
}

TEST(CxxBridge, DefaultUpstreamIsThePmrDefault) {
  pmrc::unsynchronized_pool pool;
  EXPECT_EQ(pool.upstream_resource(), pmr_get_default_resource());
}

// ---- std resources as C resources ----------------------------------------

// The C containers over std's resources, through from_std.
void UseCContainers(pmr_mem_resource* r) {
  pmr_vector v;
  ASSERT_TRUE(pmr_vector_init(&v, sizeof(int), alignof(int), r));
  for (int i = 0; i < 5000; ++i) ASSERT_TRUE(pmr_vector_push_back(&v, &i));
  EXPECT_EQ(*static_cast<int*>(pmr_vector_at(&v, 4321)), 4321);
  EXPECT_EQ(pmr_vector_resource(&v), r);
  pmr_vector_destroy(&v);

  pmr_string s;
  pmr_string_init(&s, r);
  for (int i = 0; i < 100; ++i)
    ASSERT_TRUE(pmr_string_append_cstr(&s, "twelve bytes"));
  EXPECT_EQ(pmr_string_length(&s), 1200u);
  EXPECT_EQ(std::strncmp(pmr_string_c_str(&s) + 12, "twelve", 6), 0);
  pmr_string_destroy(&s);

  pmr_hashmap m;
  ASSERT_TRUE(pmr_hashmap_init(&m, sizeof(uint64_t), alignof(uint64_t),
                               sizeof(uint64_t), alignof(uint64_t), r));
  for (uint64_t k = 0; k < 3000; ++k) {
    uint64_t val = k * 3;
    ASSERT_EQ(pmr_hashmap_insert(&m, &k, &val, nullptr), PMR_HASHMAP_INSERTED);
  }
  uint64_t key = 2999;
  auto* found = static_cast<uint64_t*>(pmr_hashmap_find(&m, &key));
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(*found, 2999u * 3);
  EXPECT_EQ(pmr_hashmap_size(&m), 3000u);
  pmr_hashmap_destroy(&m);

  for (size_t a = 1; a <= 4096; a *= 2) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{24}, size_t{5000}}) {
      void* p = pmr_allocate(r, n, a);
      ASSERT_NE(p, nullptr);
      EXPECT_TRUE(Aligned(p, a)) << "size " << n << " alignment " << a;
      std::memset(p, 0xa5, n);
      pmr_deallocate(r, p, n, a);
    }
  }
}

TEST(CxxBridge, CContainersOverStdResourcesThroughFromStd) {
  CountingStd counting;
  {
    std::pmr::monotonic_buffer_resource mono(&counting);
    pmrc::c_resource a = pmrc::from_std(&mono);
    EXPECT_EQ(a.get(), &a.base);
    UseCContainers(a.get());
  }
  {
    std::pmr::unsynchronized_pool_resource pool(&counting);
    pmrc::c_resource a = pmrc::from_std(&pool);
    UseCContainers(a.get());
  }
  {
    std::pmr::synchronized_pool_resource pool(&counting);
    pmrc::c_resource a = pmrc::from_std(&pool);
    UseCContainers(a.get());
  }
  {
    pmrc::c_resource a = pmrc::from_std(&counting);
    long before = counting.allocations.load();
    UseCContainers(a.get());
    EXPECT_GT(counting.allocations.load(), before + 10);
  }
  EXPECT_GT(counting.allocations.load(), 0);
  EXPECT_EQ(counting.outstanding.load(), 0);
}

TEST(CxxBridge, ZeroBytesAreDistinctBlocks) {
  std::pmr::monotonic_buffer_resource mono;
  pmrc::c_resource a = pmrc::from_std(&mono);
  void* p = pmr_allocate(a.get(), 0, 8);
  void* q = pmr_allocate(a.get(), 0, 8);
  ASSERT_NE(p, nullptr);
  EXPECT_NE(p, q);
  pmr_deallocate(a.get(), q, 0, 8);
  pmr_deallocate(a.get(), p, 0, 8);
}

// ---- Failure on each side ------------------------------------------------

TEST(CxxBridge, CFailureThrowsBadAllocInCxx) {
  pmrc::std_resource mr = pmrc::as_std(pmr_null_resource());
  EXPECT_THROW((void)mr.allocate(16, 8), std::bad_alloc);
  std::pmr::vector<int> v{mr.get()};
  EXPECT_THROW(v.push_back(1), std::bad_alloc);
  EXPECT_TRUE(v.empty());
  // A bad alignment is a failure of pmr_allocate too.
  pmrc::std_resource heap = pmrc::as_std(pmr_malloc_resource());
  volatile size_t bad_alignment = 24;  // not a constant: clang rejects one
  EXPECT_THROW((void)heap.allocate(16, bad_alignment), std::bad_alloc);
}

TEST(CxxBridge, CxxExceptionsBecomeNullAndEnomemInC) {
  pmrc::c_resource a = pmrc::from_std(std::pmr::null_memory_resource());
  errno = 0;
  EXPECT_EQ(pmr_allocate(a.get(), 16, 8), nullptr);
  EXPECT_EQ(errno, ENOMEM);

  pmr_vector v;
  ASSERT_TRUE(pmr_vector_init(&v, sizeof(int), alignof(int), a.get()));
  int one = 1;
  errno = 0;
  EXPECT_FALSE(pmr_vector_push_back(&v, &one));
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_EQ(pmr_vector_size(&v), 0u);
  pmr_vector_destroy(&v);

  CountingStd throwing;
  throwing.throw_runtime_error = true;
  pmrc::c_resource b = pmrc::from_std(&throwing);
  errno = 0;
  EXPECT_EQ(pmr_allocate(b.get(), 16, 8), nullptr);
  EXPECT_EQ(errno, ENOMEM);

  // Sizes no object can have are refused before the std resource.
  CountingStd counting;
  pmrc::c_resource c = pmrc::from_std(&counting);
  errno = 0;
  EXPECT_EQ(pmr_allocate(c.get(), SIZE_MAX - 16, 16), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_EQ(counting.allocations.load(), 0);
  errno = 0;
  EXPECT_EQ(pmr_allocate(c.get(), 16, 3), nullptr);
  EXPECT_EQ(errno, EINVAL);
}

TEST(CxxBridge, ErrnoUntouchedOnSuccess) {
  CountingStd clobbering;
  clobbering.clobber_errno = true;
  pmrc::c_resource a = pmrc::from_std(&clobbering);
  errno = 1234;
  void* p = pmr_allocate(a.get(), 100, 16);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(errno, 1234);
  pmr_deallocate(a.get(), p, 100, 16);
  EXPECT_EQ(errno, 1234);

  pmrc::synchronized_pool pool;
  errno = 4321;
  p = pool.allocate(100, 16);
  EXPECT_EQ(errno, 4321);
  pool.deallocate(p, 100, 16);
}

// ---- Round trips and equality --------------------------------------------

TEST(CxxBridge, RoundTripsReturnTheOriginal) {
  pmr_mem_resource* c = pmr_malloc_resource();
  pmrc::std_resource s = pmrc::as_std(c);
  pmrc::c_resource back = pmrc::from_std(&s);
  EXPECT_EQ(back.get(), c);
  EXPECT_EQ(pmrc::unwrap(static_cast<std::pmr::memory_resource*>(&s)), c);

  std::pmr::monotonic_buffer_resource mono;
  pmrc::c_resource a = pmrc::from_std(&mono);
  pmrc::std_resource there = pmrc::as_std(&a.base);
  EXPECT_EQ(there.get(), &mono);
  EXPECT_EQ(pmrc::unwrap(&a.base), &mono);

  pmrc::thread_cache tc;
  pmrc::c_resource t = pmrc::from_std(&tc);
  EXPECT_EQ(t.get(), tc.c_resource());

  // Not adapters: nothing to unwrap.
  EXPECT_EQ(pmrc::unwrap(pmr_malloc_resource()), nullptr);
  EXPECT_EQ(pmrc::unwrap(std::pmr::new_delete_resource()), nullptr);
}

TEST(CxxBridge, EqualityFollowsTheCResources) {
  pmrc::synchronized_pool p1, p2;
  pmrc::std_resource a1 = pmrc::as_std(p1.c_resource());
  pmrc::std_resource a2 = pmrc::as_std(p1.c_resource());
  pmrc::std_resource b = pmrc::as_std(p2.c_resource());
  // Two adapters over one resource: equal both ways, and to the owner.
  EXPECT_TRUE(a1 == a2);
  EXPECT_TRUE(a2 == a1);
  EXPECT_TRUE(a1 == p1);
  EXPECT_TRUE(p1 == a1);
  EXPECT_FALSE(a1 == b);
  EXPECT_FALSE(b == a1);
  EXPECT_FALSE(p1 == p2);
  // Memory from one adapter goes back through the other.
  void* p = a1.allocate(48, 16);
  a2.deallocate(p, 48, 16);

  // A C hook that says more than identity is asked, in both directions.
  pmrtest::CountingResource up;
  pmrtest::FriendlyResource f1(&up), f2(&up);
  pmrc::std_resource fa = pmrc::as_std(&f1.base);
  pmrc::std_resource fb = pmrc::as_std(&f2.base);
  EXPECT_TRUE(fa == fb);
  EXPECT_TRUE(fb == fa);
  EXPECT_FALSE(fa == a1);

  // C side: adapters over one std resource are equal both ways; a std
  // resource's own rule (identity) decides between different ones.
  std::pmr::unsynchronized_pool_resource sp1, sp2;
  pmrc::c_resource c1 = pmrc::from_std(&sp1), c2 = pmrc::from_std(&sp1);
  pmrc::c_resource c3 = pmrc::from_std(&sp2);
  EXPECT_TRUE(pmr_is_equal(&c1.base, &c2.base));
  EXPECT_TRUE(pmr_is_equal(&c2.base, &c1.base));
  EXPECT_FALSE(pmr_is_equal(&c1.base, &c3.base));
  EXPECT_FALSE(pmr_is_equal(&c1.base, pmr_malloc_resource()));
  // An adapter over a std_resource compares as the C resource it wraps.
  pmrc::c_resource cf(&fa);
  EXPECT_TRUE(pmr_is_equal(&cf.base, &f2.base));
  EXPECT_FALSE(pmr_is_equal(&cf.base, p1.c_resource()));

  // An adapter over a c_resource is the original std resource, seen from
  // the adapter's side (std's own resources compare by identity).
  pmrc::std_resource over_c(&c1.base);
  EXPECT_TRUE(over_c.is_equal(sp1));
  EXPECT_FALSE(over_c.is_equal(sp2));
}

// ---- Threads (TSan in CI) ------------------------------------------------

template <class Owner>
void ManyThreads(Owner& owner) {
  constexpr int kThreads = 4;
  // Each thread builds containers; the next thread destroys them (frees
  // from a thread other than the allocating one).
  std::vector<std::pmr::vector<std::pmr::string>> made(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&owner, &made, t] {
      std::pmr::vector<std::pmr::string> v{&owner};
      for (int i = 0; i < 2000; ++i) {
        v.emplace_back(std::to_string(t * 100000 + i) +
                       " a string too long to be small");
        std::pmr::list<int> l{&owner};
        for (int k = 0; k < 8; ++k) l.push_back(k);
        if (l.back() != 7) std::abort();
      }
      made[t] = std::move(v);
    });
  }
  for (auto& th : threads) th.join();
  threads.clear();
  std::atomic<long> checked{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&made, &checked, t] {
      auto v = std::move(made[(t + 1) % kThreads]);
      int base = ((t + 1) % kThreads) * 100000;
      for (int i = 0; i < 2000; ++i)
        if (v[i].compare(0, std::to_string(base + i).size(),
                         std::to_string(base + i)) == 0)
          ++checked;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(checked.load(), long{kThreads} * 2000);
}

TEST(CxxBridge, SynchronizedPoolFromManyThreads) {
  pmrtest::CountingResource up;
  {
    pmrc::synchronized_pool pool(up.get());
    ManyThreads(pool);
  }
  EXPECT_EQ(up.outstanding_blocks(), 0u);
}

TEST(CxxBridge, ThreadCacheFromManyThreads) {
  pmrtest::CountingResource up;
  {
    pmrc::thread_cache tc(up.get());
    ManyThreads(tc);
  }
  EXPECT_EQ(up.outstanding_blocks(), 0u);
}

// ---- The default bridges -------------------------------------------------

TEST(CxxBridge, StdDefaultServedByThePmrDefault) {
  pmr_statistics stats;
  ASSERT_TRUE(pmr_statistics_init(&stats, pmr_malloc_resource()));
  pmr_mem_resource* old_c = pmr_set_default_resource(&stats.base);
  std::pmr::memory_resource* old_std = pmrc::set_std_default_to_pmr_default();
  std::pmr::memory_resource* bridged = std::pmr::get_default_resource();
  EXPECT_EQ(pmrc::unwrap(bridged), &stats.base);
  {
    std::pmr::vector<int> v;  // the default resource
    for (int i = 0; i < 100; ++i) v.push_back(i);
    EXPECT_EQ(v[99], 99);
  }
  EXPECT_GT(pmr_statistics_get_stats(&stats).allocations, 0u);
  EXPECT_EQ(pmr_statistics_get_stats(&stats).blocks_in_use, 0u);
  // Bridging the same resource again reuses its adapter.
  pmrc::set_std_default_to_pmr_default();
  EXPECT_EQ(std::pmr::get_default_resource(), bridged);
  // Bridging back does not loop: pmr-c's default stays what it is.
  EXPECT_EQ(pmrc::set_pmr_default_to_std_default(), &stats.base);
  EXPECT_EQ(pmr_get_default_resource(), &stats.base);

  std::pmr::set_default_resource(old_std);
  pmr_set_default_resource(old_c);
  pmr_statistics_destroy(&stats);
}

TEST(CxxBridge, PmrDefaultServedByTheStdDefault) {
  CountingStd counting;
  std::pmr::memory_resource* old_std =
      std::pmr::set_default_resource(&counting);
  pmr_mem_resource* old_c = pmrc::set_pmr_default_to_std_default();
  EXPECT_EQ(pmrc::unwrap(pmr_get_default_resource()), &counting);
  void* p = pmr_allocate(nullptr, 64, 16);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(counting.outstanding.load(), 1);
  pmr_deallocate(nullptr, p, 64, 16);
  EXPECT_EQ(counting.outstanding.load(), 0);
  // Bridging std's default back gives std the original, not an adapter.
  EXPECT_EQ(pmrc::set_std_default_to_pmr_default(), &counting);
  EXPECT_EQ(std::pmr::get_default_resource(), &counting);

  pmr_set_default_resource(old_c);
  std::pmr::set_default_resource(old_std);
}

}  // namespace
