// pmr_vector through its C API: every operation, sized deallocation, growth
// in place, failure injection at every allocation point, and random operation
// sequences checked against std::vector.
#include "containers/pmr_vector.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include "tests/testkit/counting_resource.h"
#include "tests/testkit/test_resources.h"

namespace {

using pmrtest::Call;
using pmrtest::CountingResource;

std::vector<uint32_t> Contents(const pmr_vector* v) {
  const uint32_t* p = static_cast<const uint32_t*>(pmr_vector_data(v));
  return std::vector<uint32_t>(p, p + pmr_vector_size(v));
}

// Everything observable about a vector.
struct State {
  std::vector<unsigned char> bytes;
  size_t size, capacity;
  const void* data;
  bool operator==(const State& o) const {
    return bytes == o.bytes && size == o.size && capacity == o.capacity &&
           data == o.data;
  }
};
State Capture(const pmr_vector* v) {
  const unsigned char* p =
      static_cast<const unsigned char*>(pmr_vector_data(v));
  State s;
  s.bytes.assign(p, p + pmr_vector_size(v) * pmr_vector_elem_size(v));
  s.size = pmr_vector_size(v);
  s.capacity = pmr_vector_capacity(v);
  s.data = pmr_vector_data(v);
  return s;
}

void PushAll(pmr_vector* v, std::initializer_list<uint32_t> xs) {
  for (uint32_t x : xs) ASSERT_TRUE(pmr_vector_push_back(v, &x));
}

using pmrtest::BumpResource;
using pmrtest::FriendlyResource;

// ---- Basics -------------------------------------------------------------

TEST(Vector, InitRejectsBadElementTypes) {
  pmr_vector v;
  EXPECT_FALSE(pmr_vector_init(&v, 0, 1, nullptr));
  EXPECT_FALSE(pmr_vector_init(&v, 4, 3, nullptr));
  EXPECT_FALSE(pmr_vector_init(&v, 4, 0, nullptr));
  EXPECT_FALSE(pmr_vector_init(&v, 12, 8, nullptr));
  EXPECT_FALSE(pmr_vector_init(nullptr, 4, 4, nullptr));
  EXPECT_TRUE(pmr_vector_init(&v, 3, 1, nullptr));
  pmr_vector_destroy(&v);
}

TEST(Vector, EmptyVectorAllocatesNothing) {
  CountingResource up;
  pmr_vector v;
  ASSERT_TRUE(PMR_VECTOR_INIT_T(&v, uint32_t, up.get()));
  EXPECT_EQ(pmr_vector_size(&v), 0u);
  EXPECT_EQ(pmr_vector_capacity(&v), 0u);
  EXPECT_TRUE(pmr_vector_empty(&v));
  EXPECT_EQ(pmr_vector_data(&v), nullptr);
  EXPECT_EQ(pmr_vector_at(&v, 0), nullptr);
  EXPECT_EQ(pmr_vector_front(&v), nullptr);
  EXPECT_EQ(pmr_vector_back(&v), nullptr);
  EXPECT_FALSE(pmr_vector_pop_back(&v, nullptr));
  EXPECT_EQ(pmr_vector_resource(&v), up.get());
  EXPECT_EQ(pmr_vector_elem_size(&v), 4u);
  pmr_vector_destroy(&v);
  pmr_vector_destroy(&v);  // twice is fine
  EXPECT_EQ(up.allocations(), 0u);
}

TEST(Vector, NullResourceMeansTheDefaultAtInit) {
  CountingResource up;
  pmr_mem_resource* prev = pmr_set_default_resource(up.get());
  pmr_vector v;
  ASSERT_TRUE(PMR_VECTOR_INIT_T(&v, int, nullptr));
  pmr_set_default_resource(prev);
  EXPECT_EQ(pmr_vector_resource(&v), up.get());
  int x = 5;
  ASSERT_TRUE(pmr_vector_push_back(&v, &x));
  EXPECT_EQ(up.allocations(), 1u);
  pmr_vector_destroy(&v);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
}

TEST(Vector, PushPopAtFrontBack) {
  CountingResource up;
  pmr_vector v;
  ASSERT_TRUE(PMR_VECTOR_INIT_T(&v, uint32_t, up.get()));
  for (uint32_t i = 0; i < 100; ++i) ASSERT_TRUE(pmr_vector_push_back(&v, &i));
  EXPECT_EQ(pmr_vector_size(&v), 100u);
  for (uint32_t i = 0; i < 100; ++i)
    EXPECT_EQ(*PMR_VECTOR_AT_T(&v, uint32_t, i), i);
  EXPECT_EQ(pmr_vector_at(&v, 100), nullptr);
  EXPECT_EQ(pmr_vector_at(&v, SIZE_MAX), nullptr);
  EXPECT_EQ(*PMR_VECTOR_FRONT_T(&v, uint32_t), 0u);
  EXPECT_EQ(*PMR_VECTOR_BACK_T(&v, uint32_t), 99u);
  EXPECT_EQ(PMR_VECTOR_GET_T(&v, uint32_t, 7), 7u);
  uint32_t out = 0;
  ASSERT_TRUE(pmr_vector_pop_back(&v, &out));
  EXPECT_EQ(out, 99u);
  ASSERT_TRUE(pmr_vector_pop_back(&v, nullptr));
  EXPECT_EQ(pmr_vector_size(&v), 98u);
  EXPECT_EQ(*PMR_VECTOR_BACK_T(&v, uint32_t), 97u);
  pmr_vector_destroy(&v);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  EXPECT_EQ(up.mismatches(), 0u);
}

TEST(Vector, EmplaceBackGivesAZeroedSlot) {
  pmr_vector v;
  ASSERT_TRUE(PMR_VECTOR_INIT_T(&v, uint64_t, nullptr));
  for (int i = 0; i < 10; ++i) {
    uint64_t* slot = static_cast<uint64_t*>(pmr_vector_emplace_back(&v));
    ASSERT_NE(slot, nullptr);
    EXPECT_EQ(*slot, 0u);
    *slot = 1000 + i;
  }
  EXPECT_EQ(*PMR_VECTOR_AT_T(&v, uint64_t, 9), 1009u);
  ASSERT_TRUE(PMR_VECTOR_PUSH_T(&v, uint64_t, 77));
  EXPECT_EQ(*PMR_VECTOR_BACK_T(&v, uint64_t), 77u);
  pmr_vector_destroy(&v);
}

TEST(Vector, GrowthFactorIsTwo) {
  CountingResource up;
  pmr_vector v;
  ASSERT_TRUE(PMR_VECTOR_INIT_T(&v, uint32_t, up.get()));
  std::vector<size_t> caps;
  for (uint32_t i = 0; i < 100; ++i) {
    ASSERT_TRUE(pmr_vector_push_back(&v, &i));
    if (caps.empty() || caps.back() != pmr_vector_capacity(&v))
      caps.push_back(pmr_vector_capacity(&v));
  }
  EXPECT_EQ(caps, (std::vector<size_t>{4, 8, 16, 32, 64, 128}));
  pmr_vector_destroy(&v);
}

TEST(Vector, StorageUsesTheElementAlignmentAndExactSizes) {
  struct alignas(64) Big {
    unsigned char b[128];
  };
  CountingResource up;
  pmr_vector v;
  ASSERT_TRUE(PMR_VECTOR_INIT_T(&v, Big, up.get()));
  Big x;
  std::memset(&x, 0xab, sizeof x);
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(pmr_vector_push_back(&v, &x));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(pmr_vector_data(&v)) % 64, 0u);
  }
  ASSERT_TRUE(pmr_vector_shrink_to_fit(&v));
  pmr_vector_destroy(&v);
  for (const Call& c : up.calls()) {
    EXPECT_EQ(c.alignment, 64u);
    EXPECT_EQ(c.bytes % sizeof(Big), 0u);
  }
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  EXPECT_EQ(up.mismatches(), 0u);
}

TEST(Vector, InsertAndEraseAtPositionsAndRanges) {
  pmr_vector v;
  ASSERT_TRUE(PMR_VECTOR_INIT_T(&v, uint32_t, nullptr));
  PushAll(&v, {1, 2, 3});
  uint32_t x = 9;
  ASSERT_TRUE(pmr_vector_insert(&v, 0, &x));
  ASSERT_TRUE(pmr_vector_insert(&v, 2, &x));
  ASSERT_TRUE(pmr_vector_insert(&v, 5, &x));  // at the end
  EXPECT_EQ(Contents(&v), (std::vector<uint32_t>{9, 1, 9, 2, 3, 9}));
  EXPECT_FALSE(pmr_vector_insert(&v, 7, &x));
  EXPECT_FALSE(pmr_vector_insert(&v, 0, nullptr));
  uint32_t r[] = {7, 8};
  ASSERT_TRUE(pmr_vector_insert_range(&v, 1, r, 2));
  EXPECT_EQ(Contents(&v), (std::vector<uint32_t>{9, 7, 8, 1, 9, 2, 3, 9}));
  ASSERT_TRUE(pmr_vector_insert_range(&v, 3, r, 0));
  ASSERT_TRUE(pmr_vector_insert_range(&v, 3, nullptr, 0));
  EXPECT_FALSE(pmr_vector_insert_range(&v, 3, nullptr, 1));
  EXPECT_FALSE(pmr_vector_insert_range(&v, 9, r, 1));
  ASSERT_TRUE(pmr_vector_erase(&v, 0));
  EXPECT_EQ(Contents(&v), (std::vector<uint32_t>{7, 8, 1, 9, 2, 3, 9}));
  EXPECT_FALSE(pmr_vector_erase(&v, 7));
  ASSERT_TRUE(pmr_vector_erase_range(&v, 1, 4));
  EXPECT_EQ(Contents(&v), (std::vector<uint32_t>{7, 2, 3, 9}));
  ASSERT_TRUE(pmr_vector_erase_range(&v, 2, 2));
  EXPECT_FALSE(pmr_vector_erase_range(&v, 3, 2));
  EXPECT_FALSE(pmr_vector_erase_range(&v, 2, 5));
  ASSERT_TRUE(pmr_vector_erase_range(&v, 0, 4));
  EXPECT_TRUE(pmr_vector_empty(&v));
  pmr_vector_destroy(&v);
}

TEST(Vector, InsertFromItselfWithAndWithoutGrowth) {
  for (size_t reserve : {0, 64}) {
    for (size_t pos = 0; pos <= 6; ++pos) {
      for (size_t from = 0; from <= 6; ++from) {
        for (size_t n = 0; from + n <= 6; ++n) {
          pmr_vector v;
          ASSERT_TRUE(PMR_VECTOR_INIT_T(&v, uint32_t, nullptr));
          PushAll(&v, {10, 11, 12, 13, 14, 15});
          if (reserve != 0) {
            ASSERT_TRUE(pmr_vector_reserve(&v, reserve));
          } else {
            ASSERT_TRUE(pmr_vector_shrink_to_fit(&v));
          }
          std::vector<uint32_t> want = Contents(&v);
          std::vector<uint32_t> src(want.begin() + from,
                                    want.begin() + from + n);
          want.insert(want.begin() + pos, src.begin(), src.end());
          ASSERT_TRUE(
              pmr_vector_insert_range(&v, pos, pmr_vector_at(&v, from), n));
          EXPECT_EQ(Contents(&v), want)
              << "reserve " << reserve << " pos " << pos << " from " << from
              << " n " << n;
          pmr_vector_destroy(&v);
        }
      }
    }
  }
}

TEST(Vector, InsertRangeReachingPastTheElementsIsRejected) {
  pmr_vector v;
  ASSERT_TRUE(PMR_VECTOR_INIT_T(&v, uint32_t, nullptr));
  PushAll(&v, {1, 2, 3});
  State before = Capture(&v);
  EXPECT_FALSE(pmr_vector_insert_range(&v, 0, pmr_vector_at(&v, 1), 3));
  EXPECT_TRUE(Capture(&v) == before);
  pmr_vector_destroy(&v);
}

TEST(Vector, PushBackOfItsOwnElementWhileGrowing) {
  pmr_vector v;
  ASSERT_TRUE(PMR_VECTOR_INIT_T(&v, uint32_t, nullptr));
  PushAll(&v, {5, 6, 7, 8});
  ASSERT_EQ(pmr_vector_size(&v), pmr_vector_capacity(&v));
  ASSERT_TRUE(pmr_vector_push_back(&v, pmr_vector_at(&v, 0)));
  ASSERT_TRUE(pmr_vector_insert(&v, 0, pmr_vector_back(&v)));
  EXPECT_EQ(Contents(&v), (std::vector<uint32_t>{5, 5, 6, 7, 8, 5}));
  pmr_vector_destroy(&v);
}

TEST(Vector, ReserveResizeShrinkClear) {
  CountingResource up;
  pmr_vector v;
  ASSERT_TRUE(PMR_VECTOR_INIT_T(&v, uint16_t, up.get()));
  ASSERT_TRUE(pmr_vector_reserve(&v, 10));
  EXPECT_EQ(pmr_vector_capacity(&v), 10u);
  ASSERT_TRUE(pmr_vector_reserve(&v, 5));  // never shrinks
  EXPECT_EQ(pmr_vector_capacity(&v), 10u);
  uint16_t x = 0xffff;
  ASSERT_TRUE(pmr_vector_push_back(&v, &x));
  ASSERT_TRUE(pmr_vector_resize(&v, 30));  // zero-filled
  EXPECT_EQ(pmr_vector_size(&v), 30u);
  EXPECT_EQ(pmr_vector_capacity(&v), 30u);
  EXPECT_EQ(*PMR_VECTOR_AT_T(&v, uint16_t, 0), 0xffff);
  for (size_t i = 1; i < 30; ++i)
    EXPECT_EQ(*PMR_VECTOR_AT_T(&v, uint16_t, i), 0);
  ASSERT_TRUE(pmr_vector_resize(&v, 3));
  EXPECT_EQ(pmr_vector_capacity(&v), 30u);
  // Elements dropped by resize come back zeroed.
  *PMR_VECTOR_AT_T(&v, uint16_t, 2) = 5;
  ASSERT_TRUE(pmr_vector_resize(&v, 2));
  ASSERT_TRUE(pmr_vector_resize(&v, 3));
  EXPECT_EQ(*PMR_VECTOR_AT_T(&v, uint16_t, 2), 0);
  ASSERT_TRUE(pmr_vector_shrink_to_fit(&v));
  EXPECT_EQ(pmr_vector_capacity(&v), 3u);
  EXPECT_EQ(*PMR_VECTOR_AT_T(&v, uint16_t, 0), 0xffff);
  pmr_vector_clear(&v);
  EXPECT_EQ(pmr_vector_size(&v), 0u);
  EXPECT_EQ(pmr_vector_capacity(&v), 3u);
  ASSERT_TRUE(pmr_vector_shrink_to_fit(&v));  // empty: gives storage back
  EXPECT_EQ(pmr_vector_capacity(&v), 0u);
  EXPECT_EQ(pmr_vector_data(&v), nullptr);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  pmr_vector_destroy(&v);
  EXPECT_EQ(up.mismatches(), 0u);
}

TEST(Vector, OversizedRequestsFailBeforeReachingTheResource) {
  CountingResource up;
  pmr_vector v;
  ASSERT_TRUE(pmr_vector_init(&v, 16, 8, up.get()));
  EXPECT_EQ(pmr_vector_max_size(&v), (size_t)PTRDIFF_MAX / 16);
  EXPECT_FALSE(pmr_vector_reserve(&v, SIZE_MAX));
  EXPECT_FALSE(pmr_vector_reserve(&v, SIZE_MAX / 16 + 1));  // n * 16 overflows
  EXPECT_FALSE(pmr_vector_resize(&v, SIZE_MAX / 8));
  EXPECT_FALSE(pmr_vector_reserve(&v, pmr_vector_max_size(&v) + 1));
  EXPECT_EQ(up.calls().size(), 0u);
  unsigned char e[16] = {1};
  ASSERT_TRUE(pmr_vector_push_back(&v, e));
  EXPECT_FALSE(pmr_vector_insert_range(&v, 0, e, SIZE_MAX));
  EXPECT_EQ(up.calls().size(), 1u);
  EXPECT_EQ(pmr_vector_size(&v), 1u);
  pmr_vector_destroy(&v);
}

TEST(Vector, GrowsInPlaceWhenTheResourceCan) {
  BumpResource bump;
  pmr_vector v;
  ASSERT_TRUE(PMR_VECTOR_INIT_T(&v, uint32_t, &bump.base));
  uint32_t x = 1;
  ASSERT_TRUE(pmr_vector_push_back(&v, &x));
  void* first = pmr_vector_data(&v);
  for (uint32_t i = 0; i < 1000; ++i) ASSERT_TRUE(pmr_vector_push_back(&v, &i));
  EXPECT_EQ(pmr_vector_data(&v), first);
  EXPECT_EQ(bump.allocates, 1);
  EXPECT_EQ(bump.deallocates, 0);
  EXPECT_GT(bump.resize_successes, 5);
  EXPECT_EQ(*PMR_VECTOR_AT_T(&v, uint32_t, 1000), 999u);
  // Shrinking tries in place too.
  ASSERT_TRUE(pmr_vector_shrink_to_fit(&v));
  EXPECT_EQ(pmr_vector_data(&v), first);
  EXPECT_EQ(bump.last_bytes, 1001 * sizeof(uint32_t));
  // When in place fails (another block came after), it falls back to copying.
  void* other = pmr_allocate(&bump.base, 8, 8);
  ASSERT_NE(other, nullptr);
  ASSERT_TRUE(pmr_vector_push_back(&v, &x));
  EXPECT_NE(pmr_vector_data(&v), first);
  EXPECT_EQ(bump.deallocates, 1);
  EXPECT_EQ(*PMR_VECTOR_AT_T(&v, uint32_t, 1000), 999u);
  EXPECT_EQ(*PMR_VECTOR_AT_T(&v, uint32_t, 1001), 1u);
  pmr_vector_destroy(&v);
}

TEST(Vector, SwapIsConstantTimeAndTakesTheResources) {
  CountingResource a_up, b_up;
  pmr_vector a, b;
  ASSERT_TRUE(PMR_VECTOR_INIT_T(&a, uint32_t, a_up.get()));
  ASSERT_TRUE(PMR_VECTOR_INIT_T(&b, uint32_t, b_up.get()));
  PushAll(&a, {1, 2, 3});
  PushAll(&b, {4});
  size_t calls = a_up.calls().size() + b_up.calls().size();
  pmr_vector_swap(&a, &b);
  EXPECT_EQ(a_up.calls().size() + b_up.calls().size(), calls);
  EXPECT_EQ(Contents(&a), (std::vector<uint32_t>{4}));
  EXPECT_EQ(Contents(&b), (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_EQ(pmr_vector_resource(&a), b_up.get());
  EXPECT_EQ(pmr_vector_resource(&b), a_up.get());
  pmr_vector_destroy(&a);
  pmr_vector_destroy(&b);
  EXPECT_EQ(a_up.outstanding_blocks() + b_up.outstanding_blocks(), 0u);
  EXPECT_EQ(a_up.mismatches() + b_up.mismatches(), 0u);
}

TEST(Vector, CopyTakesTheGivenResource) {
  CountingResource a_up, b_up;
  pmr_vector a, b;
  ASSERT_TRUE(PMR_VECTOR_INIT_T(&a, uint32_t, a_up.get()));
  PushAll(&a, {1, 2, 3, 4, 5});
  ASSERT_TRUE(pmr_vector_init_copy(&b, &a, b_up.get()));
  EXPECT_EQ(pmr_vector_resource(&b), b_up.get());
  EXPECT_EQ(Contents(&b), Contents(&a));
  EXPECT_EQ(pmr_vector_capacity(&b), 5u);
  EXPECT_EQ(b_up.allocations(), 1u);
  pmr_vector e, f;  // copying an empty vector allocates nothing
  ASSERT_TRUE(PMR_VECTOR_INIT_T(&e, uint32_t, a_up.get()));
  ASSERT_TRUE(pmr_vector_init_copy(&f, &e, nullptr));
  EXPECT_EQ(pmr_vector_resource(&f), pmr_get_default_resource());
  EXPECT_EQ(pmr_vector_capacity(&f), 0u);
  EXPECT_EQ(b_up.allocations(), 1u);
  pmr_vector_destroy(&a);
  pmr_vector_destroy(&b);
  EXPECT_EQ(a_up.outstanding_blocks() + b_up.outstanding_blocks(), 0u);
}

TEST(Vector, MoveKeepsTheSourceResource) {
  CountingResource up;
  pmr_vector a, b;
  ASSERT_TRUE(PMR_VECTOR_INIT_T(&a, uint32_t, up.get()));
  PushAll(&a, {1, 2, 3});
  void* data = pmr_vector_data(&a);
  size_t allocs = up.allocations();
  pmr_vector_init_move(&b, &a);
  EXPECT_EQ(up.allocations(), allocs);
  EXPECT_EQ(pmr_vector_data(&b), data);
  EXPECT_EQ(pmr_vector_resource(&b), up.get());
  EXPECT_EQ(Contents(&b), (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_TRUE(pmr_vector_empty(&a));
  EXPECT_EQ(pmr_vector_capacity(&a), 0u);
  PushAll(&a, {9});  // the source is still usable
  pmr_vector_destroy(&a);
  pmr_vector_destroy(&b);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
}

TEST(Vector, CopyAssignReusesStorageAndKeepsTheResource) {
  CountingResource a_up, b_up;
  pmr_vector a, b, c;
  ASSERT_TRUE(PMR_VECTOR_INIT_T(&a, uint32_t, a_up.get()));
  ASSERT_TRUE(PMR_VECTOR_INIT_T(&b, uint32_t, b_up.get()));
  ASSERT_TRUE(PMR_VECTOR_INIT_T(&c, uint16_t, b_up.get()));
  PushAll(&a, {1, 2, 3});
  ASSERT_TRUE(pmr_vector_reserve(&b, 10));
  ASSERT_TRUE(pmr_vector_copy_assign(&b, &a));
  EXPECT_EQ(b_up.allocations(), 1u);  // reused
  EXPECT_EQ(Contents(&b), Contents(&a));
  EXPECT_EQ(pmr_vector_resource(&b), b_up.get());
  EXPECT_TRUE(pmr_vector_copy_assign(&b, &b));
  EXPECT_FALSE(pmr_vector_copy_assign(&c, &a));  // different element types
  ASSERT_TRUE(pmr_vector_shrink_to_fit(&b));
  PushAll(&a, {4, 5, 6, 7, 8});
  ASSERT_TRUE(pmr_vector_copy_assign(&b, &a));  // grows exactly
  EXPECT_EQ(pmr_vector_capacity(&b), 8u);
  EXPECT_EQ(Contents(&b), Contents(&a));
  pmr_vector_destroy(&a);
  pmr_vector_destroy(&b);
  pmr_vector_destroy(&c);
  EXPECT_EQ(a_up.outstanding_blocks() + b_up.outstanding_blocks(), 0u);
  EXPECT_EQ(a_up.mismatches() + b_up.mismatches(), 0u);
}

TEST(Vector, MoveAssignTakesStorageOnlyFromAnEqualResource) {
  CountingResource up1, up2;
  // Identical resources: storage moves, no allocation.
  {
    pmr_vector a, b;
    ASSERT_TRUE(PMR_VECTOR_INIT_T(&a, uint32_t, up1.get()));
    ASSERT_TRUE(PMR_VECTOR_INIT_T(&b, uint32_t, up1.get()));
    PushAll(&a, {1, 2});
    PushAll(&b, {3});
    void* data = pmr_vector_data(&a);
    size_t allocs = up1.allocations();
    ASSERT_TRUE(pmr_vector_move_assign(&b, &a));
    EXPECT_EQ(up1.allocations(), allocs);
    EXPECT_EQ(pmr_vector_data(&b), data);
    EXPECT_EQ(Contents(&b), (std::vector<uint32_t>{1, 2}));
    EXPECT_TRUE(pmr_vector_empty(&a));
    pmr_vector_destroy(&a);
    pmr_vector_destroy(&b);
  }
  // Equal but distinct resources (is_equal says yes): storage moves.
  {
    FriendlyResource f1(&up1), f2(&up1);
    pmr_vector a, b;
    ASSERT_TRUE(PMR_VECTOR_INIT_T(&a, uint32_t, &f1.base));
    ASSERT_TRUE(PMR_VECTOR_INIT_T(&b, uint32_t, &f2.base));
    PushAll(&a, {1, 2});
    void* data = pmr_vector_data(&a);
    ASSERT_TRUE(pmr_vector_move_assign(&b, &a));
    EXPECT_EQ(pmr_vector_data(&b), data);
    EXPECT_EQ(pmr_vector_resource(&b), &f2.base);
    pmr_vector_destroy(&a);
    pmr_vector_destroy(&b);
  }
  // Unequal resources: copies into the destination's resource.
  {
    pmr_vector a, b;
    ASSERT_TRUE(PMR_VECTOR_INIT_T(&a, uint32_t, up1.get()));
    ASSERT_TRUE(PMR_VECTOR_INIT_T(&b, uint32_t, up2.get()));
    PushAll(&a, {1, 2, 3});
    size_t allocs2 = up2.allocations();
    ASSERT_TRUE(pmr_vector_move_assign(&b, &a));
    EXPECT_EQ(up2.allocations(), allocs2 + 1);
    EXPECT_EQ(pmr_vector_resource(&b), up2.get());
    EXPECT_EQ(Contents(&b), (std::vector<uint32_t>{1, 2, 3}));
    EXPECT_TRUE(pmr_vector_empty(&a));
    EXPECT_EQ(pmr_vector_capacity(&a), 0u);
    pmr_vector c;
    ASSERT_TRUE(PMR_VECTOR_INIT_T(&c, uint8_t, up2.get()));
    EXPECT_FALSE(pmr_vector_move_assign(&c, &b));
    EXPECT_TRUE(pmr_vector_move_assign(&b, &b));
    pmr_vector_destroy(&a);
    pmr_vector_destroy(&b);
    pmr_vector_destroy(&c);
  }
  EXPECT_EQ(up1.outstanding_blocks() + up2.outstanding_blocks(), 0u);
  EXPECT_EQ(up1.mismatches() + up2.mismatches(), 0u);
}

// ---- Failure injection --------------------------------------------------

// For k = 0, 1, 2, ...: builds a vector with `setup` (never failing), lets
// the upstream succeed k times, runs `op`. A failed op must leave the vector
// exactly as it was; a successful one must pass `check`. Stops at the first
// success during which no allocation failed. Every round ends with every
// block given back with matching sizes.
void InjectFailures(const std::function<void(pmr_vector*)>& setup,
                    const std::function<bool(pmr_vector*)>& op,
                    const std::function<void(const pmr_vector*)>& check) {
  for (size_t k = 0;; ++k) {
    ASSERT_LT(k, 20u) << "never succeeded";
    CountingResource up;
    pmr_vector v;
    ASSERT_TRUE(PMR_VECTOR_INIT_T(&v, uint32_t, up.get()));
    setup(&v);
    State before = Capture(&v);
    size_t failed_before = up.failed_allocations();
    up.fail_after(k);
    bool ok = op(&v);
    up.never_fail();
    bool injected = up.failed_allocations() != failed_before;
    if (ok) {
      check(&v);
    } else {
      EXPECT_TRUE(injected) << "failed with no allocation failure, k=" << k;
      EXPECT_TRUE(Capture(&v) == before) << "changed by a failed op, k=" << k;
    }
    pmr_vector_destroy(&v);
    EXPECT_EQ(up.outstanding_blocks(), 0u);
    EXPECT_EQ(up.mismatches(), 0u);
    if (ok && !injected) return;
  }
}

void Fill(pmr_vector* v) { PushAll(v, {1, 2, 3, 4}); }  // size == capacity

TEST(VectorFailures, EveryAllocatingOperation) {
  std::vector<uint32_t> base = {1, 2, 3, 4};
  auto with = [&](std::vector<uint32_t> w) {
    return [w](const pmr_vector* v) { EXPECT_EQ(Contents(v), w); };
  };
  uint32_t x = 42;
  InjectFailures(
      Fill, [&](pmr_vector* v) { return pmr_vector_push_back(v, &x); },
      with({1, 2, 3, 4, 42}));
  InjectFailures(
      Fill,
      [&](pmr_vector* v) {
        return pmr_vector_push_back(v, pmr_vector_at(v, 1));
      },
      with({1, 2, 3, 4, 2}));
  InjectFailures(
      Fill,
      [&](pmr_vector* v) { return pmr_vector_emplace_back(v) != nullptr; },
      with({1, 2, 3, 4, 0}));
  InjectFailures(
      Fill, [&](pmr_vector* v) { return pmr_vector_insert(v, 1, &x); },
      with({1, 42, 2, 3, 4}));
  uint32_t r[] = {7, 8, 9};
  InjectFailures(
      Fill, [&](pmr_vector* v) { return pmr_vector_insert_range(v, 2, r, 3); },
      with({1, 2, 7, 8, 9, 3, 4}));
  InjectFailures(
      Fill,
      [&](pmr_vector* v) {
        return pmr_vector_insert_range(v, 0, pmr_vector_at(v, 2), 2);
      },
      with({3, 4, 1, 2, 3, 4}));
  InjectFailures(
      Fill, [&](pmr_vector* v) { return pmr_vector_reserve(v, 100); },
      [&](const pmr_vector* v) {
        EXPECT_EQ(Contents(v), base);
        EXPECT_EQ(pmr_vector_capacity(v), 100u);
      });
  InjectFailures(
      Fill, [&](pmr_vector* v) { return pmr_vector_resize(v, 6); },
      with({1, 2, 3, 4, 0, 0}));
  InjectFailures(
      [](pmr_vector* v) {
        Fill(v);
        ASSERT_TRUE(pmr_vector_reserve(v, 50));
      },
      [&](pmr_vector* v) { return pmr_vector_shrink_to_fit(v); },
      [&](const pmr_vector* v) {
        EXPECT_EQ(Contents(v), base);
        EXPECT_EQ(pmr_vector_capacity(v), 4u);
      });
  // Copy-assign and move-assign between resources into a full destination.
  InjectFailures(
      Fill,
      [&](pmr_vector* v) {
        pmr_vector src;
        PMR_VECTOR_INIT_T(&src, uint32_t, pmr_malloc_resource());
        PushAll(&src, {5, 6, 7, 8, 9, 10});
        bool ok = pmr_vector_copy_assign(v, &src);
        pmr_vector_destroy(&src);
        return ok;
      },
      with({5, 6, 7, 8, 9, 10}));
  InjectFailures(
      Fill,
      [&](pmr_vector* v) {
        pmr_vector src;
        PMR_VECTOR_INIT_T(&src, uint32_t, pmr_malloc_resource());
        PushAll(&src, {5, 6, 7, 8, 9, 10});
        bool ok = pmr_vector_move_assign(v, &src);
        EXPECT_EQ(pmr_vector_size(&src), ok ? 0u : 6u);
        pmr_vector_destroy(&src);
        return ok;
      },
      with({5, 6, 7, 8, 9, 10}));
}

TEST(VectorFailures, InitCopyLeavesAValidEmptyVector) {
  for (size_t k = 0;; ++k) {
    CountingResource up;
    pmr_vector a, b;
    ASSERT_TRUE(PMR_VECTOR_INIT_T(&a, uint32_t, nullptr));
    PushAll(&a, {1, 2, 3});
    up.fail_after(k);
    bool ok = pmr_vector_init_copy(&b, &a, up.get());
    up.never_fail();
    if (!ok) {
      EXPECT_TRUE(pmr_vector_empty(&b));
      EXPECT_EQ(pmr_vector_resource(&b), up.get());
    } else {
      EXPECT_EQ(Contents(&b), Contents(&a));
    }
    pmr_vector_destroy(&a);
    pmr_vector_destroy(&b);
    EXPECT_EQ(up.outstanding_blocks(), 0u);
    if (ok) break;
  }
}

// ---- Random operations against std::vector ------------------------------

TEST(VectorRandom, MatchesStdVectorUnderRandomFailures) {
  std::mt19937 rng(12345);
  CountingResource up;
  pmr_vector v, w;
  ASSERT_TRUE(PMR_VECTOR_INIT_T(&v, uint32_t, up.get()));
  ASSERT_TRUE(PMR_VECTOR_INIT_T(&w, uint32_t, up.get()));
  std::vector<uint32_t> oracle, oracle_w;
  size_t failures = 0;
  for (int step = 0; step < 5000; ++step) {
    bool arm = rng() % 5 == 0;
    if (arm) up.fail_after(rng() % 2);
    State before = Capture(&v);
    std::vector<uint32_t> want = oracle;
    uint32_t x = rng();
    size_t n = pmr_vector_size(&v);
    bool ok = true;
    switch (rng() % 14) {
      case 0:
      case 1:
        ok = pmr_vector_push_back(&v, &x);
        want.push_back(x);
        break;
      case 2:
        if (void* p = pmr_vector_emplace_back(&v)) {
          std::memcpy(p, &x, 4);
        } else {
          ok = false;
        }
        want.push_back(x);
        break;
      case 3:
        ok = pmr_vector_pop_back(&v, nullptr) == (n != 0);
        if (n != 0) want.pop_back();
        break;
      case 4: {
        size_t pos = rng() % (n + 1);
        ok = pmr_vector_insert(&v, pos, &x);
        want.insert(want.begin() + pos, x);
        break;
      }
      case 5: {
        size_t pos = rng() % (n + 1), k = rng() % 5;
        std::vector<uint32_t> src(k);
        for (auto& e : src) e = rng();
        ok = pmr_vector_insert_range(&v, pos, src.data(), k);
        want.insert(want.begin() + pos, src.begin(), src.end());
        break;
      }
      case 6: {
        if (n == 0) break;
        size_t pos = rng() % (n + 1), from = rng() % n;
        size_t k = rng() % (n - from + 1);
        ok = pmr_vector_insert_range(&v, pos, pmr_vector_at(&v, from), k);
        std::vector<uint32_t> src(want.begin() + from, want.begin() + from + k);
        want.insert(want.begin() + pos, src.begin(), src.end());
        break;
      }
      case 7:
        if (n != 0) {
          size_t pos = rng() % n;
          ok = pmr_vector_erase(&v, pos);
          want.erase(want.begin() + pos);
        }
        break;
      case 8: {
        size_t a = rng() % (n + 1), b = rng() % (n + 1);
        if (a > b) std::swap(a, b);
        ok = pmr_vector_erase_range(&v, a, b);
        want.erase(want.begin() + a, want.begin() + b);
        break;
      }
      case 9: {
        size_t k = rng() % 40;
        ok = pmr_vector_resize(&v, k);
        want.resize(k, 0);
        break;
      }
      case 10:
        ok = pmr_vector_reserve(&v, rng() % 60);
        break;
      case 11:
        ok = pmr_vector_shrink_to_fit(&v);
        break;
      case 12:
        if (rng() % 4 == 0) {
          pmr_vector_clear(&v);
          want.clear();
        } else {
          pmr_vector_swap(&v, &w);
          std::swap(want, oracle_w);
          before = Capture(&v);
        }
        break;
      case 13:
        ok = pmr_vector_copy_assign(&v, &w);
        want = oracle_w;
        break;
    }
    up.never_fail();
    if (ok) {
      oracle = want;
    } else {
      ASSERT_TRUE(arm) << "step " << step;
      ++failures;
      ASSERT_TRUE(Capture(&v) == before) << "step " << step;
    }
    ASSERT_EQ(Contents(&v), oracle) << "step " << step;
    ASSERT_LE(pmr_vector_size(&v), pmr_vector_capacity(&v));
  }
  EXPECT_GT(failures, 50u);
  pmr_vector_destroy(&v);
  pmr_vector_destroy(&w);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  EXPECT_EQ(up.mismatches(), 0u);
}

}  // namespace
