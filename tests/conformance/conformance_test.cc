// The resource contract (mem_resource.h), checked against every resource in
// AllConformanceCases().
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include "tests/testkit/conformance.h"
#include "tests/testkit/counting_resource.h"

namespace pmrtest {
namespace {

class Conformance : public ::testing::TestWithParam<ConformanceCase> {
 protected:
  void SetUp() override {
    r_ = GetParam().make(upstream_.get());
    if (GetParam().calls_upstream_at_init) upstream_.clear_calls();
  }
  void TearDown() override {
    r_.reset();
    // Destroying the resource gives back everything it took, exactly as taken.
    EXPECT_EQ(upstream_.outstanding_blocks(), 0u) << GetParam().name;
    EXPECT_EQ(upstream_.mismatches(), 0u) << upstream_.last_mismatch();
  }
  pmr_mem_resource* r() { return r_->get(); }

  CountingResource upstream_;
  std::unique_ptr<ResourceUnderTest> r_;
};

struct Live {
  unsigned char* p;
  size_t bytes, alignment;
  unsigned char fill;
};

TEST_P(Conformance, EverySizeAndAlignmentIsHonouredWithoutOverlap) {
  const size_t sizes[] = {
      0,  1,  2,  7,   8,   15,  16,  17,  24,   31,   32,   40,   48,   63,
      64, 65, 96, 100, 128, 255, 256, 500, 1000, 1024, 4095, 4096, 5000, 70000};
  std::vector<Live> live;
  unsigned char fill = 1;
  for (size_t a = 1; a <= 4096; a *= 2) {
    for (size_t s : sizes) {
      void* p = pmr_allocate(r(), s, a);
      if (!GetParam().can_allocate) {
        EXPECT_EQ(p, nullptr);
        continue;
      }
      ASSERT_NE(p, nullptr) << "size " << s << " align " << a;
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % a, 0u)
          << "size " << s << " align " << a;
      std::memset(p, fill, s);
      live.push_back({static_cast<unsigned char*>(p), s, a, fill});
      fill = static_cast<unsigned char>(fill % 250 + 1);
    }
  }
  // Every block still holds its own pattern: no two live blocks overlap.
  for (const Live& b : live)
    for (size_t i = 0; i < b.bytes; ++i)
      ASSERT_EQ(b.p[i], b.fill) << "block of " << b.bytes << " overwritten";
  for (const Live& b : live) pmr_deallocate(r(), b.p, b.bytes, b.alignment);
}

TEST_P(Conformance, ZeroBytesGivesDistinctPointers) {
  std::set<void*> seen;
  std::vector<void*> ps;
  for (int i = 0; i < 100; ++i) {
    void* p = pmr_allocate(r(), 0, 8);
    if (!GetParam().can_allocate) {
      EXPECT_EQ(p, nullptr);
      continue;
    }
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(seen.insert(p).second)
        << "allocate(0) returned " << p << " twice";
    ps.push_back(p);
  }
  for (void* p : ps) pmr_deallocate(r(), p, 0, 8);
}

TEST_P(Conformance, BadAlignmentFailsWithEinvalAndNoUpstreamCall) {
  const size_t bad[] = {0,  3,   5,    6,        12,
                        24, 100, 4097, SIZE_MAX, (SIZE_MAX >> 1) + 2};
  for (size_t a : bad) {
    errno = 0;
    EXPECT_EQ(pmr_allocate(r(), 16, a), nullptr) << "alignment " << a;
    EXPECT_EQ(errno, EINVAL) << "alignment " << a;
  }
  EXPECT_EQ(upstream_.calls().size(), 0u);
}

TEST_P(Conformance, OverflowingSizeFailsWithEnomemAndNoUpstreamCall) {
  struct {
    size_t bytes, alignment;
  } bad[] = {{SIZE_MAX, 1},           {SIZE_MAX, 8},
             {SIZE_MAX - 1, 2},       {SIZE_MAX - 7, 16},
             {SIZE_MAX - 4095, 4096}, {SIZE_MAX - 15, 4096}};
  for (auto b : bad) {
    errno = 0;
    EXPECT_EQ(pmr_allocate(r(), b.bytes, b.alignment), nullptr) << b.bytes;
    EXPECT_EQ(errno, ENOMEM) << b.bytes;
  }
  EXPECT_EQ(upstream_.calls().size(), 0u);
}

TEST_P(Conformance, HugeRequestFailsCleanly) {
  // Does not overflow bytes + alignment, so it reaches the resource, which
  // must fail rather than return a block that is too small.
  const size_t huge[] = {SIZE_MAX - 16, SIZE_MAX / 2, SIZE_MAX / 4 + 1};
  for (size_t s : huge) {
    errno = 0;
    EXPECT_EQ(pmr_allocate(r(), s, 16), nullptr) << s;
    EXPECT_EQ(errno, ENOMEM) << s;
  }
  // Still usable afterwards.
  void* p = pmr_allocate(r(), 64, 16);
  EXPECT_EQ(p != nullptr, GetParam().can_allocate);
  pmr_deallocate(r(), p, 64, 16);
}

TEST_P(Conformance, DeallocateNullDoesNothing) {
  pmr_deallocate(r(), nullptr, 0, 1);
  pmr_deallocate(r(), nullptr, 64, 16);
  pmr_deallocate(r(), nullptr, 1 << 20, 4096);
  EXPECT_EQ(upstream_.calls().size(), 0u);
}

TEST_P(Conformance, EqualToItselfNotToOthers) {
  EXPECT_TRUE(pmr_is_equal(r(), r()));
  CountingResource other;
  EXPECT_FALSE(pmr_is_equal(r(), other.get()));
}

TEST_P(Conformance, UpstreamFailureIsNullAndResourceRecovers) {
  if (!GetParam().uses_upstream) GTEST_SKIP() << "no upstream";
  upstream_.fail_always();
  // Ask for more than any resource keeps spare, so upstream must be asked.
  errno = 0;
  EXPECT_EQ(pmr_allocate(r(), 1 << 24, 16), nullptr);
  upstream_.never_fail();
  void* p = pmr_allocate(r(), 1 << 24, 16);
  ASSERT_NE(p, nullptr);
  std::memset(p, 0xab, 1 << 24);
  pmr_deallocate(r(), p, 1 << 24, 16);
}

TEST_P(Conformance, ManyBlocksReusedAcrossRounds) {
  if (!GetParam().can_allocate) GTEST_SKIP() << "never allocates";
  for (int round = 0; round < 3; ++round) {
    std::vector<Live> live;
    for (int i = 0; i < 5000; ++i) {
      size_t s = 1 + (i * 37) % 700;
      auto* p = static_cast<unsigned char*>(pmr_allocate(r(), s, 8));
      ASSERT_NE(p, nullptr);
      std::memset(p, i & 0xff, s);
      live.push_back({p, s, 8, static_cast<unsigned char>(i & 0xff)});
    }
    for (size_t i = 0; i < live.size(); i += 2)
      pmr_deallocate(r(), live[i].p, live[i].bytes, live[i].alignment);
    for (size_t i = 1; i < live.size(); i += 2) {
      ASSERT_EQ(live[i].p[0], live[i].fill);
      ASSERT_EQ(live[i].p[live[i].bytes - 1], live[i].fill);
      pmr_deallocate(r(), live[i].p, live[i].bytes, live[i].alignment);
    }
  }
}

TEST_P(Conformance, ThreadSafeResourcesServeEightThreads) {
  if (!GetParam().thread_safe) GTEST_SKIP() << "single-threaded resource";
  if (!GetParam().can_allocate) GTEST_SKIP() << "never allocates";
  std::vector<std::thread> threads;
  std::atomic<int> errors{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([this, t, &errors] {
      std::vector<std::pair<unsigned char*, size_t>> live;
      for (int i = 0; i < 20000; ++i) {
        size_t s = 8 + (i * 13 + t) % 300;
        auto* p = static_cast<unsigned char*>(pmr_allocate(r(), s, 8));
        if (p == nullptr) {
          ++errors;
          continue;
        }
        std::memset(p, t, s);
        live.emplace_back(p, s);
        if (live.size() > 64) {
          auto b = live.front();
          live.erase(live.begin());
          if (b.first[0] != t || b.first[b.second - 1] != t) ++errors;
          pmr_deallocate(r(), b.first, b.second, 8);
        }
      }
      for (auto& b : live) pmr_deallocate(r(), b.first, b.second, 8);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
}

// Out of memory everywhere: the same script of allocations and frees runs
// with upstream failing from its k-th allocation on, for every k until a run
// needs no failure. A failed allocation is NULL and nothing else: every live
// block keeps its contents, and destroying the resource gives every byte
// back to upstream.
TEST_P(Conformance, UpstreamFailingAtEveryPointLosesNothing) {
  if (!GetParam().uses_upstream) GTEST_SKIP() << "no upstream";
  size_t runs = 0, nulls_seen = 0;
  for (size_t k = 0;; ++k) {
    CountingResource up;
    size_t nulls = 0;
    {
      std::unique_ptr<ResourceUnderTest> res = GetParam().make(up.get());
      pmr_mem_resource* r = res->get();
      up.fail_after(k);
      std::vector<Live> live;
      for (int i = 0; i < 400; ++i) {
        size_t n =
            i % 10 == 9 ? 5000 + i : 1 + (i * 53) % 700;  // some oversize
        size_t a = size_t{1} << (i % 7);
        auto* p = static_cast<unsigned char*>(pmr_allocate(r, n, a));
        if (p == nullptr) {
          ++nulls;
          continue;
        }
        ASSERT_EQ(reinterpret_cast<uintptr_t>(p) % a, 0u);
        unsigned char fill = static_cast<unsigned char>(i);
        std::memset(p, fill, n);
        live.push_back({p, n, a, fill});
        if (i % 3 == 2) {  // free an older block
          Live b = live[live.size() / 2];
          live.erase(live.begin() + static_cast<long>(live.size() / 2));
          for (size_t j = 0; j < b.bytes; ++j) ASSERT_EQ(b.p[j], b.fill);
          pmr_deallocate(r, b.p, b.bytes, b.alignment);
        }
      }
      for (const Live& b : live) {
        for (size_t j = 0; j < b.bytes; ++j)
          ASSERT_EQ(b.p[j], b.fill) << "k=" << k;
        pmr_deallocate(r, b.p, b.bytes, b.alignment);
      }
      up.never_fail();
    }
    EXPECT_EQ(up.outstanding_blocks(), 0u) << "k=" << k;
    EXPECT_EQ(up.mismatches(), 0u) << up.last_mismatch();
    // NULL only ever comes from a failed upstream call.
    if (up.failed_allocations() == 0) {
      EXPECT_EQ(nulls, 0u);
      break;
    }
    nulls_seen += nulls;
    ++runs;
    ASSERT_LT(k, 5000u);
  }
  EXPECT_GT(runs, 0u);
  EXPECT_GT(nulls_seen, 0u);
  printf("out-of-memory sweep %s: %zu runs, %zu failed allocations survived\n",
         GetParam().name.c_str(), runs, nulls_seen);
}

INSTANTIATE_TEST_SUITE_P(
    AllResources, Conformance, ::testing::ValuesIn(AllConformanceCases()),
    [](const ::testing::TestParamInfo<ConformanceCase>& info) {
      return info.param.name;
    });

}  // namespace
}  // namespace pmrtest
