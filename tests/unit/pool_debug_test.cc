// Debug builds of the pools and the thread cache (PMR_DEBUG) name misuse that
// C cannot prevent, and ignore the bad operation so the resource stays
// consistent.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "resources/pmr_monotonic_buffer.h"
#include "resources/pmr_synchronized_pool.h"
#include "resources/pmr_thread_cache.h"
#include "resources/pmr_unsynchronized_pool.h"
#include "tests/testkit/counting_resource.h"

#ifndef PMR_DEBUG
// Built outside the debug configuration the pools have no checks: say how to
// run this test instead of failing each expectation.
TEST(PoolDebugTest, NeedsTheDebugConfiguration) {
  FAIL() << "run with --config=debug (the //:debug build setting)";
}
#else
namespace {

void Capture(const char* message, void* context) {
  static_cast<std::vector<std::string>*>(context)->push_back(message);
}

enum class Kind { kUnsynchronized, kSynchronized, kThreadCache };
// What each reports itself as, by Kind.
const char* const kNames[] = {"unsynchronized_pool", "synchronized_pool",
                              "thread_cache"};

class PoolDebugTest : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    prev_ = pmr_set_misuse_handler(Capture, &messages_);
    switch (GetParam()) {
      case Kind::kUnsynchronized:
        pmr_unsynchronized_pool_init(&unsync_, nullptr, up_.get());
        break;
      case Kind::kSynchronized:
        pmr_synchronized_pool_init(&sync_, nullptr, up_.get());
        break;
      case Kind::kThreadCache:
        ASSERT_TRUE(pmr_thread_cache_init(&tc_, nullptr, up_.get()));
        break;
    }
  }
  void TearDown() override {
    switch (GetParam()) {
      case Kind::kUnsynchronized:
        pmr_unsynchronized_pool_destroy(&unsync_);
        break;
      case Kind::kSynchronized:
        pmr_synchronized_pool_destroy(&sync_);
        break;
      case Kind::kThreadCache:
        pmr_thread_cache_destroy(&tc_);
        break;
    }
    pmr_set_misuse_handler(prev_, nullptr);
    EXPECT_EQ(up_.outstanding_blocks(), 0u);
    EXPECT_EQ(up_.mismatches(), 0u) << up_.last_mismatch();
  }
  pmr_mem_resource* r() {
    pmr_mem_resource* all[] = {&unsync_.base, &sync_.base, &tc_.base};
    return all[static_cast<int>(GetParam())];
  }
  std::string Name() const { return kNames[static_cast<int>(GetParam())]; }
  static std::string Ptr(const void* p) {
    char buf[32];
    snprintf(buf, sizeof buf, "%p", p);
    return buf;
  }

  pmrtest::CountingResource up_;
  pmr_unsynchronized_pool unsync_;
  pmr_synchronized_pool sync_;
  pmr_thread_cache tc_;
  std::vector<std::string> messages_;
  pmr_misuse_handler prev_;
};

TEST_P(PoolDebugTest, CorrectUseReportsNothing) {
  std::vector<void*> v;
  for (int i = 0; i < 1000; ++i)
    v.push_back(pmr_allocate(r(), 1 + i % 9000, 8));
  for (int i = 0; i < 1000; ++i) pmr_deallocate(r(), v[i], 1 + i % 9000, 8);
  EXPECT_TRUE(messages_.empty());
}

TEST_P(PoolDebugTest, DoubleFreeIsNamedAndIgnored) {
  void* p = pmr_allocate(r(), 64, 8);
  pmr_deallocate(r(), p, 64, 8);
  pmr_deallocate(r(), p, 64, 8);
  ASSERT_EQ(messages_.size(), 1u);
  const std::string& m = messages_[0];
  EXPECT_NE(m.find("double free"), std::string::npos) << m;
  EXPECT_NE(m.find(Name()), std::string::npos) << m;
  EXPECT_NE(m.find(Ptr(p)), std::string::npos) << m;
  EXPECT_NE(m.find("64 bytes"), std::string::npos) << m;
  // The block was not pushed twice: two allocations get two blocks.
  void* a = pmr_allocate(r(), 64, 8);
  void* b = pmr_allocate(r(), 64, 8);
  EXPECT_NE(a, b);
  pmr_deallocate(r(), a, 64, 8);
  pmr_deallocate(r(), b, 64, 8);
  EXPECT_EQ(messages_.size(), 1u);
}

TEST_P(PoolDebugTest, WrongSizeOrAlignmentIsNamedWithBothSizes) {
  void* p = pmr_allocate(r(), 100, 16);
  pmr_deallocate(r(), p, 200, 16);
  pmr_deallocate(r(), p, 100, 32);
  ASSERT_EQ(messages_.size(), 2u);
  EXPECT_NE(messages_[0].find("allocated with 100 bytes, alignment 16"),
            std::string::npos)
      << messages_[0];
  EXPECT_NE(messages_[0].find("deallocated with 200 bytes, alignment 16"),
            std::string::npos)
      << messages_[0];
  EXPECT_NE(messages_[1].find("alignment 32"), std::string::npos)
      << messages_[1];
  pmr_deallocate(r(), p, 100, 16);  // the right one still works
  EXPECT_EQ(messages_.size(), 2u);
}

// pmr_deallocate_unsized: any recorded size goes, the alignment is still
// checked, and a second free is named.
TEST_P(PoolDebugTest, AnUnsizedFreeIsCheckedByItsAlignment) {
  std::vector<void*> v;
  for (int i = 0; i < 500; ++i)
    v.push_back(pmr_allocate(r(), 1 + (size_t)i * 31 % 16000, 16));
  for (int i = 0; i < 500; ++i)
    EXPECT_EQ(pmr_deallocate_unsized(r(), v[i], 16),
              pmr_good_size(r(), 1 + (size_t)i * 31 % 16000, 16));
  EXPECT_TRUE(messages_.empty()) << messages_[0];
  void* p = pmr_allocate(r(), 100, 16);
  void* keep = pmr_allocate(r(), 100, 16);
  pmr_deallocate_unsized(r(), p, 32);
  ASSERT_EQ(messages_.size(), 1u);
  EXPECT_NE(messages_[0].find("allocated with 100 bytes, alignment 16"),
            std::string::npos)
      << messages_[0];
  EXPECT_EQ(pmr_deallocate_unsized(r(), p, 16), 112u);
  EXPECT_EQ(messages_.size(), 1u);
  pmr_deallocate_unsized(r(), p, 16);
  ASSERT_EQ(messages_.size(), 2u);
  EXPECT_NE(messages_[1].find("double free"), std::string::npos)
      << messages_[1];
  pmr_deallocate(r(), keep, 100, 16);
}

// A block resized in place is tracked with its new size: freeing it with
// the new size is silent, with the old one a misuse; a resize given the
// wrong old size is a misuse and changes nothing.
TEST_P(PoolDebugTest, TryResizeKeepsTheTrackedSize) {
  void* p = pmr_allocate(r(), 100, 8);
  ASSERT_TRUE(pmr_try_resize(r(), p, 100, 110, 8));
  EXPECT_TRUE(messages_.empty());
  EXPECT_FALSE(pmr_try_resize(r(), p, 100, 105, 8));  // it has 110 now
  ASSERT_EQ(messages_.size(), 1u);
  EXPECT_NE(messages_[0].find("allocated with 110 bytes"), std::string::npos)
      << messages_[0];
  pmr_deallocate(r(), p, 100, 8);
  ASSERT_EQ(messages_.size(), 2u);
  pmr_deallocate(r(), p, 110, 8);
  EXPECT_EQ(messages_.size(), 2u);
}

// An oversize block that cannot grow in place (upstream's block has no
// room) keeps its tracked size: freeing it with that size is silent.
TEST_P(PoolDebugTest, ARefusedOversizeResizeKeepsTheTrackedSize) {
  void* p = pmr_allocate(r(), 100000, 8);
  ASSERT_NE(p, nullptr);
  EXPECT_FALSE(pmr_try_resize(r(), p, 100000, 150000, 8));
  EXPECT_TRUE(messages_.empty());
  EXPECT_FALSE(pmr_try_resize(r(), p, 150000, 160000, 8));  // wrong size
  EXPECT_EQ(messages_.size(), 1u);
  pmr_deallocate(r(), p, 100000, 8);
  EXPECT_EQ(messages_.size(), 1u);
}

TEST_P(PoolDebugTest, ForeignPointerIsNamed) {
  alignas(16) char local[64];
  pmr_deallocate(r(), local, 64, 16);
  void* big = pmr_allocate(pmr_malloc_resource(), 10000, 16);
  pmr_deallocate(r(), big, 10000, 16);  // oversize path: never forwarded
  pmr_deallocate(pmr_malloc_resource(), big, 10000, 16);
  ASSERT_EQ(messages_.size(), 2u);
  EXPECT_NE(messages_[0].find("never gave out"), std::string::npos)
      << messages_[0];
  EXPECT_NE(messages_[0].find(Ptr(local)), std::string::npos) << messages_[0];
  EXPECT_NE(messages_[1].find("10000 bytes"), std::string::npos)
      << messages_[1];
}

// A block freed by one thread and again by another (a thread cache parks
// the first free in that thread's cache) is still one double free.
TEST_P(PoolDebugTest, DoubleFreeAcrossThreadsIsNamed) {
  void* p = pmr_allocate(r(), 48, 16);
  std::thread([&] { pmr_deallocate(r(), p, 48, 16); }).join();
  pmr_deallocate(r(), p, 48, 16);
  ASSERT_EQ(messages_.size(), 1u);
  EXPECT_NE(messages_[0].find("double free"), std::string::npos)
      << messages_[0];
  EXPECT_NE(messages_[0].find(Ptr(p)), std::string::npos) << messages_[0];
}

TEST_P(PoolDebugTest, DefaultHandlerPrintsToStderr) {
  pmr_set_misuse_handler(nullptr, nullptr);
  void* p = pmr_allocate(r(), 32, 8);
  pmr_deallocate(r(), p, 32, 8);
  ::testing::internal::CaptureStderr();
  pmr_deallocate(r(), p, 32, 8);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("pmr: " + Name()), std::string::npos) << err;
  EXPECT_NE(err.find("double free"), std::string::npos) << err;
}

// A thread-safe pool over an upstream that declares itself not thread-safe
// is named at init; over one that says nothing, or is thread-safe, nothing.
TEST(ThreadSafeOverUnsafe, IsNamedAtInit) {
  std::vector<std::string> messages;
  pmr_misuse_handler prev = pmr_set_misuse_handler(Capture, &messages);
  pmr_unsynchronized_pool unsafe;
  pmr_unsynchronized_pool_init(&unsafe, nullptr, nullptr);
  pmr_monotonic_buffer mono;
  pmr_monotonic_buffer_init(&mono, nullptr);
  pmrtest::CountingResource silent;  // declares no traits
  for (pmr_mem_resource* up :
       {&unsafe.base, &mono.base, silent.get(), pmr_malloc_resource()}) {
    const bool bad = up == &unsafe.base || up == &mono.base;
    pmr_thread_cache tc;
    ASSERT_TRUE(pmr_thread_cache_init(&tc, nullptr, up));
    pmr_synchronized_pool sp;
    ASSERT_TRUE(pmr_synchronized_pool_init(&sp, nullptr, up));
    ASSERT_EQ(messages.size(), bad ? 2u : 0u);
    if (bad) {
      EXPECT_NE(messages[0].find("thread_cache"), std::string::npos);
      EXPECT_NE(messages[0].find("not thread-safe"), std::string::npos)
          << messages[0];
      EXPECT_NE(messages[1].find("synchronized_pool"), std::string::npos);
    }
    messages.clear();
    pmr_synchronized_pool_destroy(&sp);
    pmr_thread_cache_destroy(&tc);
  }
  pmr_monotonic_buffer_destroy(&mono);
  pmr_unsynchronized_pool_destroy(&unsafe);
  pmr_set_misuse_handler(prev, nullptr);
}

INSTANTIATE_TEST_SUITE_P(Pools, PoolDebugTest,
                         ::testing::Values(Kind::kUnsynchronized,
                                           Kind::kSynchronized,
                                           Kind::kThreadCache),
                         [](const ::testing::TestParamInfo<Kind>& info) {
                           return std::string(
                               kNames[static_cast<int>(info.param)]);
                         });

}  // namespace
#endif  // PMR_DEBUG
