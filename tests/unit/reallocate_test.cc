// pmr_reallocate: in place through try_resize where the resource can, else
// allocate + copy + deallocate; failure leaves the old block intact.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "mem_resource/pmr_mem_resource.h"
#include "resources/pmr_monotonic_buffer.h"
#include "tests/testkit/counting_resource.h"
#include "tests/testkit/test_resources.h"

namespace {

void Fill(void* p, size_t n, unsigned char seed) {
  auto* b = static_cast<unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<unsigned char>(seed + i);
}

bool Holds(const void* p, size_t n, unsigned char seed) {
  auto* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i)
    if (b[i] != static_cast<unsigned char>(seed + i)) return false;
  return true;
}

TEST(ReallocateTest, NullPointerAllocatesNewBytes) {
  pmrtest::CountingResource up;
  void* p = pmr_reallocate(up.get(), nullptr, 12345, 40, 8);
  ASSERT_NE(p, nullptr);
  ASSERT_EQ(up.calls().size(), 1u);
  EXPECT_EQ(up.calls()[0].bytes, 40u);
  EXPECT_EQ(up.calls()[0].alignment, 8u);
  pmr_deallocate(up.get(), p, 40, 8);
  EXPECT_EQ(up.mismatches(), 0u) << up.last_mismatch();
}

TEST(ReallocateTest, GrowMovesCopiesAndGivesBackTheOldBlock) {
  pmrtest::CountingResource up;
  void* p = pmr_allocate(up.get(), 100, 16);
  Fill(p, 100, 7);
  void* q = pmr_reallocate(up.get(), p, 100, 1000, 16);
  ASSERT_NE(q, nullptr);
  EXPECT_NE(q, p);
  EXPECT_TRUE(Holds(q, 100, 7));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(q) % 16, 0u);
  EXPECT_EQ(up.outstanding_blocks(), 1u);
  EXPECT_EQ(up.outstanding_bytes(), 1000u);
  pmr_deallocate(up.get(), q, 1000, 16);
  EXPECT_EQ(up.mismatches(), 0u) << up.last_mismatch();
  EXPECT_EQ(up.outstanding_blocks(), 0u);
}

TEST(ReallocateTest, ShrinkKeepsThePrefix) {
  pmrtest::CountingResource up;
  void* p = pmr_allocate(up.get(), 500, 8);
  Fill(p, 500, 3);
  void* q = pmr_reallocate(up.get(), p, 500, 20, 8);
  ASSERT_NE(q, nullptr);
  EXPECT_TRUE(Holds(q, 20, 3));
  EXPECT_EQ(up.outstanding_bytes(), 20u);
  pmr_deallocate(up.get(), q, 20, 8);
  EXPECT_EQ(up.mismatches(), 0u) << up.last_mismatch();
}

TEST(ReallocateTest, SameSizeReturnsPWithoutAnyCall) {
  pmrtest::CountingResource up;
  void* p = pmr_allocate(up.get(), 64, 8);
  up.clear_calls();
  EXPECT_EQ(pmr_reallocate(up.get(), p, 64, 64, 8), p);
  EXPECT_TRUE(up.calls().empty());
  pmr_deallocate(up.get(), p, 64, 8);
}

TEST(ReallocateTest, InPlaceWhenTheResourceCanResize) {
  pmrtest::BumpResource bump;
  void* p = pmr_allocate(&bump.base, 100, 8);
  Fill(p, 100, 1);
  EXPECT_EQ(pmr_reallocate(&bump.base, p, 100, 3000, 8), p);
  EXPECT_EQ(bump.resize_successes, 1);
  EXPECT_EQ(bump.allocates, 1);
  EXPECT_EQ(bump.deallocates, 0);
  EXPECT_TRUE(Holds(p, 100, 1));
  // Not the latest block any more: try_resize refuses, the block moves.
  void* other = pmr_allocate(&bump.base, 10, 8);
  ASSERT_NE(other, nullptr);
  void* q = pmr_reallocate(&bump.base, p, 3000, 4000, 8);
  ASSERT_NE(q, nullptr);
  EXPECT_NE(q, p);
  EXPECT_TRUE(Holds(q, 100, 1));
  EXPECT_EQ(bump.allocates, 3);
  EXPECT_EQ(bump.deallocates, 1);
}

TEST(ReallocateTest, MonotonicBufferGrowsItsLatestBlockInPlace) {
  pmr_monotonic_buffer m;
  ASSERT_TRUE(pmr_monotonic_buffer_init_with_size(&m, 1 << 16, nullptr));
  void* p = pmr_allocate(&m.base, 64, 16);
  Fill(p, 64, 9);
  void* q = pmr_reallocate(&m.base, p, 64, 4096, 16);
  EXPECT_EQ(q, p);
  EXPECT_TRUE(Holds(q, 64, 9));
  pmr_monotonic_buffer_destroy(&m);
}

TEST(ReallocateTest, FailureLeavesTheOldBlockIntact) {
  pmrtest::CountingResource up;
  void* p = pmr_allocate(up.get(), 100, 8);
  Fill(p, 100, 5);
  up.fail_always();
  errno = 0;
  EXPECT_EQ(pmr_reallocate(up.get(), p, 100, 200, 8), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_TRUE(Holds(p, 100, 5));
  EXPECT_EQ(up.outstanding_blocks(), 1u);
  EXPECT_EQ(up.outstanding_bytes(), 100u);
  up.never_fail();
  pmr_deallocate(up.get(), p, 100, 8);
  EXPECT_EQ(up.mismatches(), 0u) << up.last_mismatch();
}

TEST(ReallocateTest, TooLargeFailsWithENOMEMAndKeepsTheBlock) {
  pmrtest::CountingResource up;
  void* p = pmr_allocate(up.get(), 10, 8);
  Fill(p, 10, 2);
  errno = 0;
  EXPECT_EQ(pmr_reallocate(up.get(), p, 10, SIZE_MAX, 8), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_TRUE(Holds(p, 10, 2));
  EXPECT_EQ(up.outstanding_blocks(), 1u);
  pmr_deallocate(up.get(), p, 10, 8);
}

TEST(ReallocateTest, BadAlignmentFailsWithEINVALAndKeepsTheBlock) {
  pmrtest::CountingResource up;
  void* p = pmr_allocate(up.get(), 10, 8);
  up.clear_calls();
  errno = 0;
  EXPECT_EQ(pmr_reallocate(up.get(), p, 10, 20, 12), nullptr);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(pmr_reallocate(up.get(), nullptr, 0, 20, 0), nullptr);
  EXPECT_TRUE(up.calls().empty());
  pmr_deallocate(up.get(), p, 10, 8);
}

TEST(ReallocateTest, ZeroNewBytesGivesAZeroByteBlockNotAFree) {
  pmrtest::CountingResource up;
  void* p = pmr_allocate(up.get(), 48, 8);
  void* q = pmr_reallocate(up.get(), p, 48, 0, 8);
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(up.outstanding_blocks(), 1u);
  EXPECT_EQ(up.outstanding_bytes(), 0u);
  pmr_deallocate(up.get(), q, 0, 8);
  EXPECT_EQ(up.mismatches(), 0u) << up.last_mismatch();
  EXPECT_EQ(up.outstanding_blocks(), 0u);
}

TEST(ReallocateTest, SuccessLeavesErrnoAlone) {
  pmrtest::CountingResource up;
  errno = 1234;
  void* p = pmr_reallocate(up.get(), nullptr, 0, 10, 8);
  p = pmr_reallocate(up.get(), p, 10, 100, 8);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(errno, 1234);
  pmr_deallocate(up.get(), p, 100, 8);
}

TEST(ReallocateTest, NullResourceIsTheDefault) {
  pmrtest::CountingResource up;
  pmr_mem_resource* prev = pmr_set_default_resource(up.get());
  void* p = pmr_reallocate(nullptr, nullptr, 0, 10, 8);
  ASSERT_NE(p, nullptr);
  p = pmr_reallocate(nullptr, p, 10, 300, 8);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(up.outstanding_blocks(), 1u);
  EXPECT_EQ(up.outstanding_bytes(), 300u);
  pmr_deallocate(up.get(), p, 300, 8);
  pmr_set_default_resource(prev);
  EXPECT_EQ(up.mismatches(), 0u) << up.last_mismatch();
}

}  // namespace
