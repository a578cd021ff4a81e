// Lua 5.4 runs an allocation-heavy script (trees, string building, table
// churn) over every resource of pmr-c: the same result everywhere, and every
// byte back in the resource after lua_close.
#include <gtest/gtest.h>

#include <string>

#include "examples/example_resource.h"
#include "examples/lua/lua_run.h"
#include "examples/lua/pmr_lua_alloc.h"

namespace {

const char kScript[] = "examples/lua/alloc_heavy.lua";
const char kExpected[] =
    "nodes=49146 long_lived=2047 joined=288865 grown=3000 live=1557";

class LuaExampleTest : public ::testing::TestWithParam<const char*> {};

TEST_P(LuaExampleTest, ScriptGivesItsResultAndLeavesNothing) {
  example_resource e;
  ASSERT_TRUE(example_resource_open(&e, GetParam()));
  char result[512];
  int rc =
      lua_run_file(example_resource_get(&e), kScript, result, sizeof result);
  EXPECT_EQ(rc, 0) << result;
  EXPECT_STREQ(result, kExpected);
  pmr_statistics_stats s = pmr_statistics_get_stats(&e.counter);
  EXPECT_GT(s.allocations, 100000u);  // the script does allocate a lot
  EXPECT_EQ(s.allocations, s.deallocations);
  EXPECT_EQ(s.blocks_in_use, 0u);
  EXPECT_EQ(s.bytes_in_use, 0u);
  if (std::string(GetParam()) == "monotonic") {
    // Reallocations of the latest block grow in place (pmr_try_resize).
    EXPECT_GT(s.resizes, 0u);
  }
  EXPECT_EQ(example_resource_close(&e), 0u);  // the debug resource: no leak
}

std::string Name(const ::testing::TestParamInfo<const char*>& info) {
  return info.param;
}

INSTANTIATE_TEST_SUITE_P(EveryResource, LuaExampleTest,
                         ::testing::ValuesIn(example_resource_names,
                                             example_resource_names + 7),
                         Name);

// A state that cannot get memory fails cleanly: lua_run_file reports it and
// nothing is left allocated.
TEST(LuaAllocTest, OutOfMemoryIsAnErrorNotACrash) {
  pmr_debug_resource d;
  ASSERT_TRUE(pmr_debug_resource_init(&d, nullptr, pmr_malloc_resource()));
  pmr_debug_resource_fail_over_bytes(&d, 64 * 1024);
  char result[512];
  EXPECT_EQ(lua_run_file(&d.base, kScript, result, sizeof result), -1);
  EXPECT_NE(std::string(result).find("memory"), std::string::npos) << result;
  EXPECT_EQ(pmr_debug_resource_get_stats(&d).blocks_in_use, 0u);
  EXPECT_EQ(pmr_debug_resource_destroy(&d), 0u);
}

TEST(LuaAllocTest, FreeReallocAndAllocateFollowLuaAllocRules) {
  pmr_statistics s;
  ASSERT_TRUE(pmr_statistics_init(&s, pmr_malloc_resource()));
  // ptr == NULL: osize is a type tag, not a size.
  void* p = pmr_lua_alloc(&s.base, nullptr, 5 /* LUA_TTABLE */, 56);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(pmr_statistics_get_stats(&s).bytes_in_use, 56u);
  p = pmr_lua_alloc(&s.base, p, 56, 200);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(pmr_statistics_get_stats(&s).bytes_in_use, 200u);
  EXPECT_EQ(pmr_lua_alloc(&s.base, p, 200, 0), nullptr);
  EXPECT_EQ(pmr_statistics_get_stats(&s).blocks_in_use, 0u);
  pmr_statistics_destroy(&s);
}

}  // namespace
