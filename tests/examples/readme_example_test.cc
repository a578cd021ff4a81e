// The documents' examples are real code: the README's count_distinct block is
// byte-for-byte tests/examples/count_distinct.c, and mem_resource/README.md's
// "write your own resource" block is tests/examples/budget_resource.c; both are
// built and run here.
#include <gtest/gtest.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "resources/pmr_monotonic_buffer.h"
#include "resources/pmr_synchronized_pool.h"
#include "resources/pmr_thread_cache.h"
#include "resources/pmr_unsynchronized_pool.h"
#include "tests/examples/budget_resource_shim.h"
#include "tests/examples/count_distinct.h"
#include "tests/testkit/counting_resource.h"

namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ReadmeExample, BudgetResourceBlockIsTheTestedFile) {
  std::string doc = ReadFile("mem_resource/README.md");
  std::string code = ReadFile("tests/examples/budget_resource.c");
  ASSERT_FALSE(doc.empty());
  ASSERT_FALSE(code.empty());
  EXPECT_NE(doc.find("```c\n" + code + "```"), std::string::npos)
      << "mem_resource/README.md must show tests/examples/budget_resource.c "
         "verbatim";
}

TEST(ReadmeExample, CountDistinctBlockIsTheTestedFile) {
  std::string readme = ReadFile("README.md");
  std::string code = ReadFile("tests/examples/count_distinct.c");
  ASSERT_FALSE(code.empty());
  EXPECT_NE(readme.find("```c\n" + code + "```"), std::string::npos)
      << "README.md must show tests/examples/count_distinct.c verbatim";
}

TEST(ReadmeExample, CountDistinctGivesTheSameAnswerOverEveryResource) {
  std::vector<uint64_t> xs;
  for (uint64_t i = 0; i < 20000; ++i) xs.push_back((i * 7919) % 5003);
  pmrtest::CountingResource up;
  {
    alignas(16) static char stack[64 << 10];
    pmr_monotonic_buffer arena;
    pmr_monotonic_buffer_init_with_buffer(&arena, stack, sizeof stack,
                                          up.get());
    pmr_unsynchronized_pool pool;
    pmr_unsynchronized_pool_init(&pool, nullptr, up.get());
    pmr_synchronized_pool shared;
    pmr_synchronized_pool_init(&shared, nullptr, up.get());
    pmr_thread_cache tc;
    ASSERT_TRUE(pmr_thread_cache_init(&tc, nullptr, up.get()));
    for (pmr_mem_resource* r : {pmr_malloc_resource(), up.get(), &arena.base,
                                &pool.base, &shared.base, &tc.base})
      EXPECT_EQ(count_distinct(xs.data(), xs.size(), r), 5003);
    pmr_thread_cache_destroy(&tc);
    pmr_synchronized_pool_destroy(&shared);
    pmr_unsynchronized_pool_destroy(&pool);
    pmr_monotonic_buffer_destroy(&arena);
  }
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  // Out of memory is -1, not a wrong count.
  up.fail_after(2);
  EXPECT_EQ(count_distinct(xs.data(), xs.size(), up.get()), -1);
  up.never_fail();
  EXPECT_EQ(up.outstanding_blocks(), 0u);
}

TEST(ReadmeExample, BudgetResourceEnforcesItsLimit) {
  pmrtest::CountingResource upstream;
  pmr_mem_resource* r = budget_example_new(upstream.get(), 100);
  ASSERT_NE(r, nullptr);
  void* a = pmr_allocate(r, 60, 8);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(budget_example_used(r), 60u);
  errno = 0;
  EXPECT_EQ(pmr_allocate(r, 41, 8), nullptr);  // 60 + 41 > 100
  EXPECT_EQ(errno, ENOMEM);
  void* b = pmr_allocate(r, 40, 8);  // exactly at the limit
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(upstream.outstanding_bytes(), 100u);
  pmr_deallocate(r, a, 60, 8);
  pmr_deallocate(r, b, 40, 8);
  EXPECT_EQ(budget_example_used(r), 0u);
  EXPECT_EQ(upstream.outstanding_blocks(), 0u);
  EXPECT_EQ(upstream.mismatches(), 0u);
  // Bad input is rejected by pmr_allocate before the example's hook runs.
  errno = 0;
  EXPECT_EQ(pmr_allocate(r, 8, 3), nullptr);
  EXPECT_EQ(errno, EINVAL);
  budget_example_delete(r);
}

TEST(ReadmeExample, NullUpstreamMeansTheDefaultResource) {
  pmrtest::CountingResource counting;
  pmr_mem_resource* prev = pmr_set_default_resource(counting.get());
  pmr_mem_resource* r = budget_example_new(nullptr, 1000);
  pmr_set_default_resource(prev);
  void* p = pmr_allocate(r, 10, 1);
  EXPECT_EQ(counting.allocations(), 1u);
  pmr_deallocate(r, p, 10, 1);
  EXPECT_EQ(counting.outstanding_blocks(), 0u);
  budget_example_delete(r);
}

}  // namespace
