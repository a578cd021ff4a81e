// AddressSanitizer sees misuse of memory that a resource still owns: a block
// freed into a pool, memory of a monotonic buffer that was rewound, reset or
// released, and chunk space not handed out yet. Run with
// `bazel test --config=asan //tests:mem_check_test`; in other builds these
// tests skip (Valgrind's counterpart is //tests:valgrind_check_test).
#include <gtest/gtest.h>

#include <cstring>

#include "resources/pmr_monotonic_buffer.h"
#include "resources/pmr_synchronized_pool.h"
#include "resources/pmr_thread_cache.h"
#include "resources/pmr_unsynchronized_pool.h"

#if defined(__SANITIZE_ADDRESS__)
#define PMR_TEST_ASAN 1
#endif

namespace {

volatile char sink;

void Touch(char* p) { p[0] = 1; }
void Read(char* p) { sink = p[0]; }

class MemCheck : public ::testing::Test {
 protected:
  void SetUp() override {
#ifndef PMR_TEST_ASAN
    GTEST_SKIP() << "needs --config=asan";
#endif
    ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  }
};

TEST_F(MemCheck, CorrectUseIsNotReported) {
  pmr_unsynchronized_pool pool;
  pmr_unsynchronized_pool_init(&pool, nullptr, nullptr);
  for (int i = 0; i < 100; ++i) {
    char* p = static_cast<char*>(pmr_allocate(&pool.base, 64, 8));
    std::memset(p, i, 64);  // the whole block is usable
    pmr_deallocate(&pool.base, p, 64, 8);
  }
  pmr_unsynchronized_pool_destroy(&pool);
  alignas(16) char buf[256];
  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init_with_buffer(&m, buf, sizeof buf, nullptr);
  std::memset(pmr_allocate(&m.base, 300, 8), 1, 300);
  pmr_monotonic_buffer_destroy(&m);
  std::memset(buf, 0, sizeof buf);  // the caller's buffer is usable again
}

// Found by the monotonic fuzz target: rewinding to a marker in the initial
// buffer poisoned the blocks allocated before the marker too.
TEST_F(MemCheck, RewindKeepsBlocksBeforeTheMarkerUsable) {
  alignas(16) char buf[1024];
  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init_with_buffer(&m, buf + 1, sizeof buf - 1, nullptr);
  char* before = static_cast<char*>(pmr_allocate(&m.base, 37, 1));
  pmr_monotonic_marker mk = pmr_monotonic_buffer_mark(&m);
  pmr_allocate(&m.base, 100, 8);
  pmr_allocate(&m.base, 2000, 8);  // into a chunk
  ASSERT_TRUE(pmr_monotonic_buffer_rewind(&m, mk));
  std::memset(before, 1, 37);  // must not be reported
  pmr_monotonic_buffer_destroy(&m);
}

TEST_F(MemCheck, UseAfterFreeInAnUnsynchronizedPool) {
  EXPECT_DEATH(
      {
        pmr_unsynchronized_pool pool;
        pmr_unsynchronized_pool_init(&pool, nullptr, nullptr);
        char* p = static_cast<char*>(pmr_allocate(&pool.base, 64, 8));
        pmr_deallocate(&pool.base, p, 64, 8);
        Touch(p + 32);
      },
      "use-after-poison");
}

TEST_F(MemCheck, UseAfterFreeInASynchronizedPool) {
  EXPECT_DEATH(
      {
        pmr_synchronized_pool pool;
        pmr_synchronized_pool_init(&pool, nullptr, nullptr);
        char* p = static_cast<char*>(pmr_allocate(&pool.base, 100, 16));
        pmr_deallocate(&pool.base, p, 100, 16);
        Read(p);
      },
      "use-after-poison");
}

TEST_F(MemCheck, UseAfterFreeInAThreadCache) {
  EXPECT_DEATH(
      {
        pmr_thread_cache tc;
        pmr_thread_cache_init(&tc, nullptr, nullptr);
        char* p = static_cast<char*>(pmr_allocate(&tc.base, 48, 8));
        pmr_deallocate(&tc.base, p, 48, 8);
        Touch(p + 40);
      },
      "use-after-poison");
}

TEST_F(MemCheck, RewoundMonotonicMemory) {
  EXPECT_DEATH(
      {
        pmr_monotonic_buffer m;
        pmr_monotonic_buffer_init(&m, nullptr);
        pmr_monotonic_marker mk = pmr_monotonic_buffer_mark(&m);
        char* p = static_cast<char*>(pmr_allocate(&m.base, 100, 8));
        pmr_monotonic_buffer_rewind(&m, mk);
        Touch(p + 50);
      },
      "use-after-poison");
}

TEST_F(MemCheck, ResetMonotonicMemory) {
  EXPECT_DEATH(
      {
        alignas(16) char buf[512];
        pmr_monotonic_buffer m;
        pmr_monotonic_buffer_init_with_buffer(&m, buf, sizeof buf, nullptr);
        char* p = static_cast<char*>(pmr_allocate(&m.base, 100, 8));
        pmr_monotonic_buffer_reset(&m);
        Read(p);
      },
      "use-after-poison");
}

TEST_F(MemCheck, PastTheEndOfAnArenaBlock) {
  EXPECT_DEATH(
      {
        pmr_monotonic_buffer m;
        pmr_monotonic_buffer_init(&m, nullptr);
        char* p = static_cast<char*>(pmr_allocate(&m.base, 64, 8));
        Touch(p + 64);  // one past: space not handed out yet
      },
      "use-after-poison");
}

}  // namespace
