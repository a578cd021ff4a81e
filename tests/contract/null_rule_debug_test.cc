// The NULL rule (mem_resource/pmr_mem_resource.h), function by function: in
// debug builds a NULL container or resource given to any public function of
// the containers, the pools, the monotonic buffer, statistics and the debug
// resource (inline functions included) is reported through
// pmr_report_misuse, naming the function, and the call fails, changing
// nothing. Also: a use after destroy of the pools and the monotonic buffer
// is reported. Runs in the debug configuration
// (`bazel test --config=debug //tests:null_rule_debug_test`).
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "containers/pmr_hashmap.h"
#include "containers/pmr_string.h"
#include "containers/pmr_vector.h"
#include "resources/pmr_debug_resource.h"
#include "resources/pmr_monotonic_buffer.h"
#include "resources/pmr_statistics.h"
#include "resources/pmr_synchronized_pool.h"
#include "resources/pmr_thread_cache.h"
#include "resources/pmr_unsynchronized_pool.h"
#include "tests/testkit/counting_resource.h"

#ifndef PMR_DEBUG
TEST(NullRuleDebug, NeedsTheDebugConfiguration) {
  FAIL() << "run with --config=debug (the //:debug build setting)";
}
#else
namespace {

std::vector<std::string>* g_got = nullptr;

void Capture(const char* message, void* context) {
  static_cast<std::vector<std::string>*>(context)->push_back(message);
}

class NullRuleDebug : public ::testing::Test {
 protected:
  void SetUp() override {
    prev_ = pmr_set_misuse_handler(Capture, &got_);
    g_got = &got_;
  }
  void TearDown() override {
    pmr_set_misuse_handler(prev_, nullptr);
    g_got = nullptr;
  }
  std::vector<std::string> got_;
  pmr_misuse_handler prev_ = nullptr;
};

// Exactly one report since the last check, naming fn and the NULL object.
void ExpectOneReport(const char* fn, const char* what, int line) {
  SCOPED_TRACE(testing::Message() << "line " << line << ": " << fn);
  ASSERT_EQ(g_got->size(), 1u);
  const std::string& m = g_got->front();
  EXPECT_NE(m.find(fn), std::string::npos) << m;
  EXPECT_NE(m.find(std::string("NULL ") + what), std::string::npos) << m;
  g_got->clear();
}

// `call` with a NULL object returns `want`, and one report names `fn`.
#define NULL_CALL(fn, what, want, call)   \
  do {                                    \
    EXPECT_EQ((call), (want)) << #call;   \
    ExpectOneReport(#fn, what, __LINE__); \
  } while (0)
// The same for a void function.
#define NULL_VOID(fn, what, call)         \
  do {                                    \
    call;                                 \
    ExpectOneReport(#fn, what, __LINE__); \
  } while (0)

TEST_F(NullRuleDebug, EveryVectorFunction) {
  pmr_vector* n = nullptr;
  pmr_vector v;
  ASSERT_TRUE(pmr_vector_init(&v, sizeof(int), alignof(int), nullptr));
  int one = 1;
  ASSERT_TRUE(pmr_vector_push_back(&v, &one));
  const char* w = "vector";
  NULL_CALL(pmr_vector_init, w, false, pmr_vector_init(n, 4, 4, nullptr));
  NULL_VOID(pmr_vector_destroy, w, pmr_vector_destroy(n));
  NULL_CALL(pmr_vector_resource, w, nullptr, pmr_vector_resource(n));
  NULL_CALL(pmr_vector_max_size, w, 0u, pmr_vector_max_size(n));
  NULL_CALL(pmr_vector_size, w, 0u, pmr_vector_size(n));
  NULL_CALL(pmr_vector_capacity, w, 0u, pmr_vector_capacity(n));
  NULL_CALL(pmr_vector_empty, w, true, pmr_vector_empty(n));
  NULL_CALL(pmr_vector_elem_size, w, 0u, pmr_vector_elem_size(n));
  NULL_CALL(pmr_vector_data, w, nullptr, pmr_vector_data(n));
  NULL_CALL(pmr_vector_at, w, nullptr, pmr_vector_at(n, 0));
  NULL_CALL(pmr_vector_front, w, nullptr, pmr_vector_front(n));
  NULL_CALL(pmr_vector_back, w, nullptr, pmr_vector_back(n));
  NULL_CALL(pmr_vector_reserve, w, false, pmr_vector_reserve(n, 10));
  NULL_CALL(pmr_vector_resize, w, false, pmr_vector_resize(n, 10));
  NULL_CALL(pmr_vector_shrink_to_fit, w, false, pmr_vector_shrink_to_fit(n));
  NULL_VOID(pmr_vector_clear, w, pmr_vector_clear(n));
  NULL_CALL(pmr_vector_push_back, w, false, pmr_vector_push_back(n, &one));
  NULL_CALL(pmr_vector_emplace_back, w, nullptr, pmr_vector_emplace_back(n));
  NULL_CALL(pmr_vector_pop_back, w, false, pmr_vector_pop_back(n, nullptr));
  NULL_CALL(pmr_vector_insert, w, false, pmr_vector_insert(n, 0, &one));
  NULL_CALL(pmr_vector_insert_range, w, false,
            pmr_vector_insert_range(n, 0, &one, 1));
  NULL_CALL(pmr_vector_erase, w, false, pmr_vector_erase(n, 0));
  NULL_CALL(pmr_vector_erase_range, w, false, pmr_vector_erase_range(n, 0, 1));
  NULL_VOID(pmr_vector_swap, w, pmr_vector_swap(&v, n));
  NULL_VOID(pmr_vector_swap, w, pmr_vector_swap(n, &v));
  NULL_CALL(pmr_vector_init_copy, w, false,
            pmr_vector_init_copy(n, &v, nullptr));
  pmr_vector c;
  NULL_CALL(pmr_vector_init_copy, w, false,
            pmr_vector_init_copy(&c, n, nullptr));
  NULL_VOID(pmr_vector_init_move, w, pmr_vector_init_move(n, &v));
  NULL_VOID(pmr_vector_init_move, w, pmr_vector_init_move(&c, n));
  NULL_CALL(pmr_vector_copy_assign, w, false, pmr_vector_copy_assign(n, &v));
  NULL_CALL(pmr_vector_copy_assign, w, false, pmr_vector_copy_assign(&v, n));
  NULL_CALL(pmr_vector_move_assign, w, false, pmr_vector_move_assign(n, &v));
  NULL_CALL(pmr_vector_move_assign, w, false, pmr_vector_move_assign(&v, n));
  // Nothing changed.
  EXPECT_EQ(pmr_vector_size(&v), 1u);
  EXPECT_EQ(*static_cast<int*>(pmr_vector_at(&v, 0)), 1);
  EXPECT_TRUE(got_.empty());
  pmr_vector_destroy(&v);
}

TEST_F(NullRuleDebug, EveryStringFunction) {
  pmr_string* n = nullptr;
  pmr_string s;
  ASSERT_TRUE(pmr_string_init_cstr(&s, "hello", nullptr));
  const pmr_string* cs = &s;
  const char* w = "string";
  NULL_VOID(pmr_string_init, w, pmr_string_init(n, nullptr));
  NULL_CALL(pmr_string_init_bytes, w, false,
            pmr_string_init_bytes(n, "a", 1, nullptr));
  NULL_CALL(pmr_string_init_cstr, w, false,
            pmr_string_init_cstr(n, "a", nullptr));
  NULL_VOID(pmr_string_destroy, w, pmr_string_destroy(n));
  NULL_CALL(pmr_string_resource, w, nullptr, pmr_string_resource(n));
  NULL_CALL(pmr_string_c_str, w, nullptr, pmr_string_c_str(n));
  NULL_CALL(pmr_string_data, w, nullptr, pmr_string_data(n));
  NULL_CALL(pmr_string_length, w, 0u, pmr_string_length(n));
  NULL_CALL(pmr_string_empty, w, true, pmr_string_empty(n));
  NULL_CALL(pmr_string_capacity, w, 0u, pmr_string_capacity(n));
  NULL_CALL(pmr_string_reserve, w, false, pmr_string_reserve(n, 100));
  NULL_CALL(pmr_string_shrink_to_fit, w, false, pmr_string_shrink_to_fit(n));
  NULL_VOID(pmr_string_clear, w, pmr_string_clear(n));
  NULL_CALL(pmr_string_resize, w, false, pmr_string_resize(n, 3, 'x'));
  NULL_CALL(pmr_string_assign_bytes, w, false,
            pmr_string_assign_bytes(n, "a", 1));
  NULL_CALL(pmr_string_assign_cstr, w, false, pmr_string_assign_cstr(n, "a"));
  NULL_CALL(pmr_string_copy_assign, w, false, pmr_string_copy_assign(n, cs));
  NULL_CALL(pmr_string_copy_assign, w, false,
            pmr_string_copy_assign(&s, nullptr));
  NULL_CALL(pmr_string_push_back, w, false, pmr_string_push_back(n, 'a'));
  NULL_CALL(pmr_string_append_bytes, w, false,
            pmr_string_append_bytes(n, "a", 1));
  NULL_CALL(pmr_string_append_cstr, w, false, pmr_string_append_cstr(n, "a"));
  NULL_CALL(pmr_string_append_string, w, false,
            pmr_string_append_string(n, cs));
  NULL_CALL(pmr_string_append_string, w, false,
            pmr_string_append_string(&s, nullptr));
  NULL_CALL(pmr_string_append_format, w, false,
            pmr_string_append_format(n, "%d", 1));
  NULL_CALL(pmr_string_pop_back, w, false, pmr_string_pop_back(n));
  NULL_CALL(pmr_string_insert_bytes, w, false,
            pmr_string_insert_bytes(n, 0, "a", 1));
  NULL_CALL(pmr_string_insert_cstr, w, false,
            pmr_string_insert_cstr(n, 0, "a"));
  NULL_CALL(pmr_string_erase, w, false, pmr_string_erase(n, 0, 1));
  NULL_CALL(pmr_string_replace, w, false, pmr_string_replace(n, 0, 1, "a", 1));
  NULL_CALL(pmr_string_find, w, PMR_STRING_NPOS, pmr_string_find(n, "a", 1, 0));
  NULL_CALL(pmr_string_find_cstr, w, PMR_STRING_NPOS,
            pmr_string_find_cstr(n, "a", 0));
  NULL_CALL(pmr_string_find_char, w, PMR_STRING_NPOS,
            pmr_string_find_char(n, 'a', 0));
  NULL_CALL(pmr_string_rfind, w, PMR_STRING_NPOS,
            pmr_string_rfind(n, "a", 1, PMR_STRING_NPOS));
  NULL_CALL(pmr_string_rfind_cstr, w, PMR_STRING_NPOS,
            pmr_string_rfind_cstr(n, "a", PMR_STRING_NPOS));
  NULL_CALL(pmr_string_rfind_char, w, PMR_STRING_NPOS,
            pmr_string_rfind_char(n, 'a', PMR_STRING_NPOS));
  NULL_CALL(pmr_string_compare, w, 0, pmr_string_compare(n, cs));
  NULL_CALL(pmr_string_compare, w, 0, pmr_string_compare(cs, nullptr));
  NULL_CALL(pmr_string_compare_bytes, w, 0,
            pmr_string_compare_bytes(n, "a", 1));
  NULL_CALL(pmr_string_compare_cstr, w, 0, pmr_string_compare_cstr(n, "a"));
  NULL_CALL(pmr_string_equal, w, false, pmr_string_equal(n, cs));
  NULL_CALL(pmr_string_equal, w, false, pmr_string_equal(cs, nullptr));
  NULL_CALL(pmr_string_hash, w, 0u, pmr_string_hash(n));
  pmr_string d;
  NULL_CALL(pmr_string_substr, w, false,
            pmr_string_substr(n, cs, 0, 1, nullptr));
  NULL_CALL(pmr_string_substr, w, false,
            pmr_string_substr(&d, nullptr, 0, 1, nullptr));
  NULL_CALL(pmr_string_init_copy, w, false,
            pmr_string_init_copy(n, cs, nullptr));
  NULL_CALL(pmr_string_init_copy, w, false,
            pmr_string_init_copy(&d, nullptr, nullptr));
  NULL_VOID(pmr_string_init_move, w, pmr_string_init_move(n, &s));
  NULL_VOID(pmr_string_init_move, w, pmr_string_init_move(&d, n));
  NULL_CALL(pmr_string_move_assign, w, false, pmr_string_move_assign(n, &s));
  NULL_CALL(pmr_string_move_assign, w, false, pmr_string_move_assign(&s, n));
  NULL_VOID(pmr_string_swap, w, pmr_string_swap(n, &s));
  NULL_VOID(pmr_string_swap, w, pmr_string_swap(&s, n));
  EXPECT_STREQ(pmr_string_c_str(&s), "hello");
  EXPECT_TRUE(got_.empty());
  pmr_string_destroy(&s);
}

TEST_F(NullRuleDebug, EveryHashmapFunction) {
  pmr_hashmap* n = nullptr;
  pmr_hashmap m;
  ASSERT_TRUE(pmr_hashmap_init(&m, 8, 8, 8, 8, nullptr));
  uint64_t k = 1, v = 2;
  ASSERT_EQ(pmr_hashmap_insert(&m, &k, &v, nullptr), PMR_HASHMAP_INSERTED);
  const char* w = "map";
  const auto bad = PMR_HASHMAP_BADARG;
  NULL_CALL(pmr_hashmap_init, w, false,
            pmr_hashmap_init(n, 8, 8, 8, 8, nullptr));
  NULL_CALL(pmr_hashmap_init_cstr, w, false,
            pmr_hashmap_init_cstr(n, 8, 8, nullptr));
  NULL_CALL(pmr_hashmap_init_string, w, false,
            pmr_hashmap_init_string(n, 8, 8, nullptr));
  NULL_CALL(pmr_hashmap_init_custom, w, false,
            pmr_hashmap_init_custom(n, 8, 8, 8, 8, nullptr, nullptr, nullptr,
                                    nullptr));
  NULL_CALL(pmr_hashmap_set_seed, w, false, pmr_hashmap_set_seed(n, 1));
  NULL_VOID(pmr_hashmap_destroy, w, pmr_hashmap_destroy(n));
  NULL_CALL(pmr_hashmap_resource, w, nullptr, pmr_hashmap_resource(n));
  NULL_CALL(pmr_hashmap_size, w, 0u, pmr_hashmap_size(n));
  NULL_CALL(pmr_hashmap_empty, w, true, pmr_hashmap_empty(n));
  NULL_CALL(pmr_hashmap_capacity, w, 0u, pmr_hashmap_capacity(n));
  NULL_CALL(pmr_hashmap_find, w, nullptr, pmr_hashmap_find(n, &k));
  NULL_CALL(pmr_hashmap_contains, w, false, pmr_hashmap_contains(n, &k));
  NULL_CALL(pmr_hashmap_find_u64, w, nullptr, pmr_hashmap_find_u64(n, 1));
  NULL_CALL(pmr_hashmap_find_key, w, nullptr, pmr_hashmap_find_key(n, &k));
  NULL_CALL(pmr_hashmap_insert, w, bad, pmr_hashmap_insert(n, &k, &v, nullptr));
  NULL_CALL(pmr_hashmap_insert_u64, w, bad,
            pmr_hashmap_insert_u64(n, 1, &v, nullptr));
  NULL_CALL(pmr_hashmap_insert_or_assign, w, bad,
            pmr_hashmap_insert_or_assign(n, &k, &v));
  NULL_CALL(pmr_hashmap_emplace, w, nullptr,
            pmr_hashmap_emplace(n, &k, nullptr));
  NULL_CALL(pmr_hashmap_erase, w, false, pmr_hashmap_erase(n, &k, nullptr));
  NULL_CALL(pmr_hashmap_erase_u64, w, false, pmr_hashmap_erase_u64(n, 1));
  NULL_CALL(pmr_hashmap_find_str, w, nullptr, pmr_hashmap_find_str(n, "a", 1));
  NULL_CALL(pmr_hashmap_erase_str, w, false,
            pmr_hashmap_erase_str(n, "a", 1, nullptr));
  NULL_CALL(pmr_hashmap_insert_str, w, bad,
            pmr_hashmap_insert_str(n, "a", 1, &v, nullptr));
  NULL_CALL(pmr_hashmap_insert_or_assign_str, w, bad,
            pmr_hashmap_insert_or_assign_str(n, "a", 1, &v));
  NULL_CALL(pmr_hashmap_emplace_str, w, nullptr,
            pmr_hashmap_emplace_str(n, "a", 1, nullptr));
  NULL_CALL(pmr_hashmap_reserve, w, false, pmr_hashmap_reserve(n, 100));
  NULL_CALL(pmr_hashmap_shrink_to_fit, w, false, pmr_hashmap_shrink_to_fit(n));
  NULL_VOID(pmr_hashmap_clear, w, pmr_hashmap_clear(n));
  NULL_CALL(pmr_hashmap_probe_stats, w, 0u, pmr_hashmap_probe_stats(n).keys);
  NULL_CALL(pmr_hashmap_iter_begin, w, nullptr,
            pmr_hashmap_iter_begin(n).impl_map);
  pmr_hashmap_iter none = pmr_hashmap_iter_begin(n);  // ends at once
  ExpectOneReport("pmr_hashmap_iter_begin", w, __LINE__);
  EXPECT_FALSE(pmr_hashmap_iter_next(&none));
  pmr_hashmap_iter_erase(&none);
  EXPECT_TRUE(got_.empty());
  NULL_CALL(pmr_hashmap_iter_next, "iterator", false,
            pmr_hashmap_iter_next(nullptr));
  NULL_VOID(pmr_hashmap_iter_erase, "iterator",
            pmr_hashmap_iter_erase(nullptr));
  pmr_hashmap d;
  NULL_CALL(pmr_hashmap_init_copy, w, false,
            pmr_hashmap_init_copy(n, &m, nullptr));
  NULL_CALL(pmr_hashmap_init_copy, w, false,
            pmr_hashmap_init_copy(&d, n, nullptr));
  NULL_VOID(pmr_hashmap_init_move, w, pmr_hashmap_init_move(n, &m));
  NULL_VOID(pmr_hashmap_init_move, w, pmr_hashmap_init_move(&d, n));
  NULL_CALL(pmr_hashmap_copy_assign, w, false, pmr_hashmap_copy_assign(n, &m));
  NULL_CALL(pmr_hashmap_copy_assign, w, false, pmr_hashmap_copy_assign(&m, n));
  NULL_CALL(pmr_hashmap_move_assign, w, false, pmr_hashmap_move_assign(n, &m));
  NULL_CALL(pmr_hashmap_move_assign, w, false, pmr_hashmap_move_assign(&m, n));
  NULL_VOID(pmr_hashmap_swap, w, pmr_hashmap_swap(n, &m));
  NULL_VOID(pmr_hashmap_swap, w, pmr_hashmap_swap(&m, n));
  EXPECT_EQ(pmr_hashmap_size(&m), 1u);
  EXPECT_EQ(*static_cast<uint64_t*>(pmr_hashmap_find(&m, &k)), 2u);
  EXPECT_TRUE(got_.empty());
  pmr_hashmap_destroy(&m);
}

TEST_F(NullRuleDebug, EveryMonotonicBufferFunction) {
  pmr_monotonic_buffer* n = nullptr;
  const char* w = "monotonic_buffer";
  char buf[64];
  NULL_CALL(pmr_monotonic_buffer_init, w, false,
            pmr_monotonic_buffer_init(n, nullptr));
  NULL_CALL(pmr_monotonic_buffer_init_with_size, w, false,
            pmr_monotonic_buffer_init_with_size(n, 100, nullptr));
  NULL_CALL(pmr_monotonic_buffer_init_with_buffer, w, false,
            pmr_monotonic_buffer_init_with_buffer(n, buf, sizeof buf, nullptr));
  NULL_VOID(pmr_monotonic_buffer_destroy, w, pmr_monotonic_buffer_destroy(n));
  NULL_VOID(pmr_monotonic_buffer_release, w, pmr_monotonic_buffer_release(n));
  NULL_VOID(pmr_monotonic_buffer_reset, w, pmr_monotonic_buffer_reset(n));
  pmr_monotonic_marker mk = pmr_monotonic_buffer_mark(n);
  ExpectOneReport("pmr_monotonic_buffer_mark", w, __LINE__);
  NULL_CALL(pmr_monotonic_buffer_rewind, w, false,
            pmr_monotonic_buffer_rewind(n, mk));
  NULL_CALL(pmr_monotonic_buffer_upstream, w, nullptr,
            pmr_monotonic_buffer_upstream(n));
  NULL_CALL(pmr_monotonic_buffer_bytes_used, w, 0u,
            pmr_monotonic_buffer_bytes_used(n));
  NULL_CALL(pmr_monotonic_buffer_bytes_left, w, 0u,
            pmr_monotonic_buffer_bytes_left(n));
  NULL_CALL(pmr_monotonic_buffer_next_chunk_size, w, 0u,
            pmr_monotonic_buffer_next_chunk_size(n));
  NULL_CALL(pmr_monotonic_buffer_allocate, w, nullptr,
            pmr_monotonic_buffer_allocate(n, 16, 8));
  // The marker of a NULL buffer is accepted by no buffer.
  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init(&m, nullptr);
  ASSERT_NE(pmr_allocate(&m.base, 16, 8), nullptr);
  EXPECT_FALSE(pmr_monotonic_buffer_rewind(&m, mk));
  EXPECT_EQ(pmr_monotonic_buffer_bytes_used(&m), 16u);
  EXPECT_TRUE(got_.empty());
  pmr_monotonic_buffer_destroy(&m);
}

TEST_F(NullRuleDebug, EveryPoolFunction) {
  {
    pmr_unsynchronized_pool* n = nullptr;
    const char* w = "unsynchronized_pool";
    NULL_CALL(pmr_unsynchronized_pool_init, w, false,
              pmr_unsynchronized_pool_init(n, nullptr, nullptr));
    NULL_VOID(pmr_unsynchronized_pool_destroy, w,
              pmr_unsynchronized_pool_destroy(n));
    NULL_VOID(pmr_unsynchronized_pool_release, w,
              pmr_unsynchronized_pool_release(n));
    NULL_CALL(pmr_unsynchronized_pool_trim, w, 0u,
              pmr_unsynchronized_pool_trim(n));
    NULL_CALL(pmr_unsynchronized_pool_get_stats, w, 0u,
              pmr_unsynchronized_pool_get_stats(n).held_bytes);
    NULL_CALL(pmr_unsynchronized_pool_get_options, w, 0u,
              pmr_unsynchronized_pool_get_options(n).max_free_bytes);
    NULL_CALL(pmr_unsynchronized_pool_upstream, w, nullptr,
              pmr_unsynchronized_pool_upstream(n));
  }
  {
    pmr_synchronized_pool* n = nullptr;
    const char* w = "synchronized_pool";
    NULL_CALL(pmr_synchronized_pool_init, w, false,
              pmr_synchronized_pool_init(n, nullptr, nullptr));
    NULL_VOID(pmr_synchronized_pool_destroy, w,
              pmr_synchronized_pool_destroy(n));
    NULL_VOID(pmr_synchronized_pool_release, w,
              pmr_synchronized_pool_release(n));
    NULL_CALL(pmr_synchronized_pool_trim, w, 0u, pmr_synchronized_pool_trim(n));
    NULL_CALL(pmr_synchronized_pool_get_stats, w, 0u,
              pmr_synchronized_pool_get_stats(n).held_bytes);
    NULL_CALL(pmr_synchronized_pool_get_options, w, 0u,
              pmr_synchronized_pool_get_options(n).max_free_bytes);
    NULL_CALL(pmr_synchronized_pool_upstream, w, nullptr,
              pmr_synchronized_pool_upstream(n));
  }
  {
    pmr_thread_cache* n = nullptr;
    const char* w = "thread_cache";
    NULL_CALL(pmr_thread_cache_init, w, false,
              pmr_thread_cache_init(n, nullptr, nullptr));
    NULL_VOID(pmr_thread_cache_destroy, w, pmr_thread_cache_destroy(n));
    NULL_VOID(pmr_thread_cache_release, w, pmr_thread_cache_release(n));
    NULL_CALL(pmr_thread_cache_trim, w, 0u, pmr_thread_cache_trim(n));
    NULL_CALL(pmr_thread_cache_get_stats, w, 0u,
              pmr_thread_cache_get_stats(n).held_bytes);
    NULL_CALL(pmr_thread_cache_get_options, w, 0u,
              pmr_thread_cache_get_options(n).pool.max_free_bytes);
    NULL_CALL(pmr_thread_cache_upstream, w, nullptr,
              pmr_thread_cache_upstream(n));
  }
}

TEST_F(NullRuleDebug, EveryStatisticsAndDebugResourceFunction) {
  {
    pmr_statistics* n = nullptr;
    const char* w = "statistics";
    NULL_CALL(pmr_statistics_init, w, false, pmr_statistics_init(n, nullptr));
    NULL_VOID(pmr_statistics_destroy, w, pmr_statistics_destroy(n));
    NULL_CALL(pmr_statistics_upstream, w, nullptr, pmr_statistics_upstream(n));
    NULL_CALL(pmr_statistics_get_stats, w, 0u,
              pmr_statistics_get_stats(n).allocations);
    NULL_VOID(pmr_statistics_reset_peak, w, pmr_statistics_reset_peak(n));
    NULL_CALL(pmr_statistics_report, w, false,
              pmr_statistics_report(n, stdout));
    pmr_statistics st;
    ASSERT_TRUE(pmr_statistics_init(&st, nullptr));
    NULL_CALL(pmr_statistics_report, "stream", false,
              pmr_statistics_report(&st, nullptr));
    pmr_statistics_destroy(&st);
  }
  {
    pmr_debug_resource* n = nullptr;
    const char* w = "debug_resource";
    NULL_CALL(pmr_debug_resource_init, w, false,
              pmr_debug_resource_init(n, nullptr, nullptr));
    NULL_CALL(pmr_debug_resource_destroy, w, 0u, pmr_debug_resource_destroy(n));
    NULL_CALL(pmr_debug_resource_upstream, w, nullptr,
              pmr_debug_resource_upstream(n));
    NULL_CALL(pmr_debug_resource_check, w, 0u, pmr_debug_resource_check(n));
    NULL_CALL(pmr_debug_resource_flush_quarantine, w, 0u,
              pmr_debug_resource_flush_quarantine(n));
    NULL_CALL(pmr_debug_resource_get_stats, w, 0u,
              pmr_debug_resource_get_stats(n).allocations);
    NULL_CALL(pmr_debug_resource_get_options, w, 0u,
              pmr_debug_resource_get_options(n).quarantine_blocks);
    NULL_VOID(pmr_debug_resource_set_abort_on_misuse, w,
              pmr_debug_resource_set_abort_on_misuse(n, true));
    NULL_VOID(pmr_debug_resource_fail_nth, w,
              pmr_debug_resource_fail_nth(n, 1));
    NULL_VOID(pmr_debug_resource_fail_over_bytes, w,
              pmr_debug_resource_fail_over_bytes(n, 1));
    NULL_VOID(pmr_debug_resource_fail_always, w,
              pmr_debug_resource_fail_always(n));
    NULL_VOID(pmr_debug_resource_stop_failing, w,
              pmr_debug_resource_stop_failing(n));
  }
}

// Item 5 of issue 30 in debug builds: a use after destroy is named.
TEST_F(NullRuleDebug, UseAfterDestroyIsReported) {
  pmrtest::CountingResource up;
  pmr_unsynchronized_pool u;
  pmr_unsynchronized_pool_init(&u, nullptr, up.get());
  pmr_unsynchronized_pool_destroy(&u);
  EXPECT_EQ(pmr_allocate(&u.base, 64, 8), nullptr);
  ASSERT_EQ(got_.size(), 1u);
  EXPECT_NE(got_[0].find("unsynchronized_pool"), std::string::npos);
  EXPECT_NE(got_[0].find("after destroy"), std::string::npos);
  got_.clear();
  pmr_synchronized_pool s;
  pmr_synchronized_pool_init(&s, nullptr, up.get());
  pmr_synchronized_pool_destroy(&s);
  EXPECT_EQ(pmr_allocate(&s.base, 64, 8), nullptr);
  int x;
  pmr_deallocate(&s.base, &x, 4, 4);
  ASSERT_EQ(got_.size(), 2u);
  EXPECT_NE(got_[0].find("synchronized_pool"), std::string::npos);
  EXPECT_NE(got_[1].find("deallocate"), std::string::npos);
  got_.clear();
  pmr_thread_cache t;
  pmr_thread_cache_init(&t, nullptr, up.get());
  pmr_thread_cache_destroy(&t);
  EXPECT_EQ(pmr_allocate(&t.base, 64, 8), nullptr);
  ASSERT_EQ(got_.size(), 1u);
  EXPECT_NE(got_[0].find("thread_cache"), std::string::npos);
  EXPECT_NE(got_[0].find("after destroy"), std::string::npos);
  got_.clear();
  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init(&m, up.get());
  pmr_monotonic_buffer_destroy(&m);
  EXPECT_EQ(pmr_monotonic_buffer_allocate(&m, 16, 8), nullptr);
  ASSERT_EQ(got_.size(), 1u);
  EXPECT_NE(got_[0].find("monotonic_buffer"), std::string::npos);
  EXPECT_NE(got_[0].find("after destroy"), std::string::npos);
  got_.clear();
  EXPECT_EQ(up.allocations(), 0u);
}

}  // namespace
#endif  // PMR_DEBUG
