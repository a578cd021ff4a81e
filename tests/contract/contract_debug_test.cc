// Debug builds (PMR_DEBUG) report the caller errors of the library's rules
// through pmr_report_misuse: init over a live resource, and the
// NULLs that are not "the default" nor "empty" (a NULL element, NULL bytes
// with a length above 0, a NULL key pointer); the call then fails and
// changes nothing.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <string>
#include <vector>

#include "containers/pmr_hashmap.h"
#include "containers/pmr_string.h"
#include "containers/pmr_vector.h"
#include "resources/pmr_monotonic_buffer.h"
#include "resources/pmr_statistics.h"
#include "resources/pmr_synchronized_pool.h"
#include "resources/pmr_thread_cache.h"
#include "resources/pmr_unsynchronized_pool.h"
#include "tests/testkit/counting_resource.h"

#ifndef PMR_DEBUG
// Built outside the debug configuration the library has no checks: say how
// to run this test instead of failing each expectation.
TEST(ContractDebug, NeedsTheDebugConfiguration) {
  FAIL() << "run with --config=debug (the //:debug build setting)";
}
#else
namespace {

void Capture(const char* message, void* context) {
  static_cast<std::vector<std::string>*>(context)->push_back(message);
}

class ContractDebug : public ::testing::Test {
 protected:
  void SetUp() override { prev_ = pmr_set_misuse_handler(Capture, &got_); }
  void TearDown() override { pmr_set_misuse_handler(prev_, nullptr); }
  // The one message reported since the last call, or "" (and a failure).
  std::string One() {
    EXPECT_EQ(got_.size(), 1u);
    std::string m = got_.empty() ? "" : got_.back();
    got_.clear();
    return m;
  }
  std::vector<std::string> got_;
  pmr_misuse_handler prev_ = nullptr;
};

TEST_F(ContractDebug, InitOverALiveThreadCacheIsReported) {
  pmrtest::CountingResource up;
  pmr_thread_cache tc;
  ASSERT_TRUE(pmr_thread_cache_init(&tc, nullptr, up.get()));
  ASSERT_NE(pmr_allocate(&tc.base, 64, 8), nullptr);
  EXPECT_TRUE(got_.empty());
  ASSERT_TRUE(pmr_thread_cache_init(&tc, nullptr, up.get()));
  EXPECT_NE(One().find("thread_cache"), std::string::npos);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  pmr_thread_cache_destroy(&tc);
  ASSERT_TRUE(pmr_thread_cache_init(&tc, nullptr, up.get()));  // not live
  EXPECT_TRUE(got_.empty());
  pmr_thread_cache_destroy(&tc);
}

TEST_F(ContractDebug, InitOverALiveSynchronizedPoolIsReported) {
  pmrtest::CountingResource up;
  pmr_synchronized_pool p;
  pmr_synchronized_pool_init(&p, nullptr, up.get());
  void* x = pmr_allocate(&p.base, 64, 8);
  ASSERT_NE(x, nullptr);
  pmr_synchronized_pool_init(&p, nullptr, up.get());
  EXPECT_NE(One().find("initialised again"), std::string::npos);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  pmr_synchronized_pool_destroy(&p);
  pmr_synchronized_pool_destroy(&p);
  EXPECT_TRUE(got_.empty());
}

TEST_F(ContractDebug, InitOverALiveUnsynchronizedPoolIsReported) {
  pmrtest::CountingResource up;
  pmr_unsynchronized_pool p;
  pmr_unsynchronized_pool_init(&p, nullptr, up.get());
  ASSERT_NE(pmr_allocate(&p.base, 64, 8), nullptr);
  pmr_unsynchronized_pool_init(&p, nullptr, up.get());
  EXPECT_NE(One().find("unsynchronized_pool"), std::string::npos);
  EXPECT_EQ(up.outstanding_blocks(), 0u);  // the live one was destroyed
  pmr_unsynchronized_pool_destroy(&p);
  pmr_unsynchronized_pool_init(&p, nullptr, up.get());  // not live
  EXPECT_TRUE(got_.empty());
  pmr_unsynchronized_pool_destroy(&p);
}

TEST_F(ContractDebug, InitOverALiveMonotonicBufferIsReported) {
  pmrtest::CountingResource up;
  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init(&m, up.get());
  ASSERT_NE(pmr_allocate(&m.base, 5000, 8), nullptr);
  pmr_monotonic_buffer_init_with_size(&m, 100, up.get());
  EXPECT_NE(One().find("monotonic_buffer"), std::string::npos);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  pmr_monotonic_buffer_destroy(&m);
  pmr_monotonic_buffer_init(&m, up.get());
  EXPECT_TRUE(got_.empty());
  pmr_monotonic_buffer_destroy(&m);
}

TEST_F(ContractDebug, InitOverALiveStatisticsIsReported) {
  pmr_statistics st;
  pmr_statistics_init(&st, nullptr);
  pmr_statistics_init(&st, nullptr);
  EXPECT_NE(One().find("statistics"), std::string::npos);
  pmr_statistics_destroy(&st);
  pmr_statistics_init(&st, nullptr);
  EXPECT_TRUE(got_.empty());
  pmr_statistics_destroy(&st);
}

TEST_F(ContractDebug, NullElementsAreReportedAndIgnored) {
  pmr_vector v;
  ASSERT_TRUE(pmr_vector_init(&v, sizeof(int), alignof(int), nullptr));
  int one = 1;
  ASSERT_TRUE(pmr_vector_push_back(&v, &one));
  EXPECT_FALSE(pmr_vector_push_back(&v, nullptr));
  EXPECT_NE(One().find("push_back with a NULL element"), std::string::npos);
  EXPECT_FALSE(pmr_vector_insert(&v, 0, nullptr));
  EXPECT_NE(One().find("insert"), std::string::npos);
  EXPECT_FALSE(pmr_vector_insert_range(&v, 0, nullptr, 2));
  EXPECT_NE(One().find("insert_range"), std::string::npos);
  EXPECT_TRUE(pmr_vector_insert_range(&v, 0, nullptr, 0));  // empty: fine
  EXPECT_TRUE(got_.empty());
  EXPECT_EQ(pmr_vector_size(&v), 1u);
  pmr_vector_destroy(&v);
}

TEST_F(ContractDebug, NullBytesWithALengthAreReported) {
  pmr_string s;
  ASSERT_TRUE(pmr_string_init_cstr(&s, "hello", nullptr));
  EXPECT_EQ(pmr_string_find(&s, nullptr, 3, 0), PMR_STRING_NPOS);
  EXPECT_NE(One().find("find with NULL and length 3"), std::string::npos);
  EXPECT_EQ(pmr_string_rfind(&s, nullptr, 2, PMR_STRING_NPOS), PMR_STRING_NPOS);
  EXPECT_NE(One().find("rfind"), std::string::npos);
  EXPECT_GT(pmr_string_compare_bytes(&s, nullptr, 4), 0);  // vs ""
  EXPECT_NE(One().find("compare_bytes"), std::string::npos);
  EXPECT_EQ(pmr_string_find(&s, nullptr, 0, 2), 2u);  // empty: fine
  EXPECT_TRUE(got_.empty());
  pmr_string_destroy(&s);
}

TEST_F(ContractDebug, NullKeyPointersAreReportedAndIgnored) {
  pmr_hashmap m;
  ASSERT_TRUE(pmr_hashmap_init(&m, sizeof(uint64_t), alignof(uint64_t),
                               sizeof(int), alignof(int), nullptr));
  uint64_t k = 7;
  int val = 3;
  ASSERT_EQ(pmr_hashmap_insert(&m, &k, &val, nullptr), PMR_HASHMAP_INSERTED);
  EXPECT_EQ(pmr_hashmap_find(&m, nullptr), nullptr);
  EXPECT_NE(One().find("find with a NULL key"), std::string::npos);
  EXPECT_FALSE(pmr_hashmap_contains(&m, nullptr));
  EXPECT_NE(One().find("find"), std::string::npos);
  EXPECT_EQ(pmr_hashmap_find_key(&m, nullptr), nullptr);
  EXPECT_NE(One().find("find_key"), std::string::npos);
  void* out = &k;
  EXPECT_EQ(pmr_hashmap_insert(&m, nullptr, &val, &out), PMR_HASHMAP_BADARG);
  EXPECT_EQ(out, nullptr);
  EXPECT_NE(One().find("insert"), std::string::npos);
  EXPECT_EQ(pmr_hashmap_insert_or_assign(&m, nullptr, &val),
            PMR_HASHMAP_BADARG);
  EXPECT_NE(One().find("insert_or_assign"), std::string::npos);
  bool inserted = true;
  EXPECT_EQ(pmr_hashmap_emplace(&m, nullptr, &inserted), nullptr);
  EXPECT_FALSE(inserted);
  EXPECT_NE(One().find("emplace"), std::string::npos);
  EXPECT_FALSE(pmr_hashmap_erase(&m, nullptr, nullptr));
  EXPECT_NE(One().find("erase"), std::string::npos);
  EXPECT_EQ(pmr_hashmap_size(&m), 1u);
  pmr_hashmap_destroy(&m);
}

TEST_F(ContractDebug, AKeyOfTheWrongKindIsReportedAndIsNotOutOfMemory) {
  pmr_hashmap m;
  ASSERT_TRUE(pmr_hashmap_init(&m, sizeof(uint64_t), alignof(uint64_t),
                               sizeof(int), alignof(int), nullptr));
  int val = 3;
  errno = 0;
  EXPECT_EQ(pmr_hashmap_insert_str(&m, "abc", 3, &val, nullptr),
            PMR_HASHMAP_BADARG);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_NE(One().find("insert_str with a text key on a map"),
            std::string::npos);
  EXPECT_EQ(pmr_hashmap_insert_or_assign_str(&m, "abc", 3, &val),
            PMR_HASHMAP_BADARG);
  EXPECT_NE(One().find("insert_or_assign_str"), std::string::npos);
  errno = 0;
  EXPECT_EQ(pmr_hashmap_emplace_str(&m, "abc", 3, nullptr), nullptr);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_NE(One().find("emplace_str"), std::string::npos);
  EXPECT_EQ(pmr_hashmap_find_str(&m, "abc", 3), nullptr);
  EXPECT_NE(One().find("find_str"), std::string::npos);
  EXPECT_FALSE(pmr_hashmap_erase_str(&m, "abc", 3, nullptr));
  EXPECT_NE(One().find("erase_str"), std::string::npos);
  pmr_hashmap_destroy(&m);

  // 8-byte keys by value on a map of 4-byte keys.
  ASSERT_TRUE(pmr_hashmap_init(&m, 4, 4, 0, 1, nullptr));
  EXPECT_EQ(pmr_hashmap_insert_u64(&m, 1, nullptr, nullptr),
            PMR_HASHMAP_BADARG);
  EXPECT_NE(One().find("insert_u64 with an 8-byte key"), std::string::npos);
  EXPECT_EQ(pmr_hashmap_find_u64(&m, 1), nullptr);
  EXPECT_NE(One().find("find_u64"), std::string::npos);
  EXPECT_FALSE(pmr_hashmap_erase_u64(&m, 1));
  EXPECT_NE(One().find("erase_u64"), std::string::npos);
  pmr_hashmap_destroy(&m);

  // A cstr map: a text that is not a C string of its length.
  ASSERT_TRUE(pmr_hashmap_init_cstr(&m, 0, 1, nullptr));
  EXPECT_EQ(pmr_hashmap_insert_str(&m, "abcd", 3, nullptr, nullptr),
            PMR_HASHMAP_BADARG);
  EXPECT_NE(One().find("not a C string"), std::string::npos);
  EXPECT_EQ(pmr_hashmap_size(&m), 0u);
  pmr_hashmap_destroy(&m);
}

}  // namespace
#endif  // PMR_DEBUG
