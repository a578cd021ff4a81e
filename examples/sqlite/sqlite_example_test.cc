// SQLite with SQLITE_CONFIG_MALLOC served by pmr-c resources through a
// pmr_malloc_adapter (pmr_sqlite_use): several threads, each with its own
// connections, over every thread-safe resource; the same results as over
// the malloc resource; SQLite's own accounting (xSize) agrees with the
// resource's; every byte back after sqlite3_shutdown. sqlite3_config works
// only while SQLite is not initialised, so each test shuts SQLite down,
// installs its resource, and shuts it down again before closing it.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>
#include <thread>
#include <vector>

#include "examples/example_resource.h"
#include "examples/sqlite/pmr_sqlite_mem.h"
#include "examples/sqlite/sqlite_workload.h"

namespace {

constexpr int kRows = 3000;
constexpr int kThreads = 4;
constexpr int kConnectionsPerThread = 2;

// The digest of the workload over the malloc resource, computed once.
uint64_t Reference() {
  static uint64_t digest = [] {
    example_resource e;
    EXPECT_TRUE(example_resource_open(&e, "malloc"));
    sqlite3_shutdown();
    EXPECT_EQ(pmr_sqlite_use(example_resource_get(&e)), SQLITE_OK);
    uint64_t d = 0;
    EXPECT_EQ(sqlite_workload_run(kRows, &d), SQLITE_OK);
    sqlite3_shutdown();
    example_resource_close(&e);
    return d;
  }();
  return digest;
}

class SqliteExampleTest : public ::testing::TestWithParam<const char*> {};

TEST_P(SqliteExampleTest, ThreadsAndConnectionsGiveTheSameResults) {
  const uint64_t reference = Reference();
  example_resource e;
  ASSERT_TRUE(example_resource_open(&e, GetParam()));
  sqlite3_shutdown();
  ASSERT_EQ(pmr_sqlite_use(example_resource_get(&e)), SQLITE_OK);
  ASSERT_EQ(sqlite3_initialize(), SQLITE_OK);
  // Installed while initialised: refused, nothing changed.
  EXPECT_EQ(pmr_sqlite_use(pmr_malloc_resource()), SQLITE_MISUSE);

  // One more connection, kept open through the threads' work: SQLite holds
  // its blocks until the accounting below.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "CREATE TABLE kept(x TEXT); WITH RECURSIVE n(i) AS "
                         "(SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < "
                         "2000) INSERT INTO kept SELECT printf('%0*d', i % "
                         "300, i) FROM n",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);

  std::vector<uint64_t> digests(kThreads * kConnectionsPerThread);
  std::vector<int> codes(digests.size(), -1);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int c = 0; c < kConnectionsPerThread; ++c) {
        size_t i = static_cast<size_t>(t * kConnectionsPerThread + c);
        codes[i] = sqlite_workload_run(kRows, &digests[i]);
      }
    });
  for (auto& th : threads) th.join();
  for (size_t i = 0; i < digests.size(); ++i) {
    EXPECT_EQ(codes[i], SQLITE_OK) << i;
    EXPECT_EQ(digests[i], reference) << i;
  }
  // SQLite counts each block at its xSize; the resource counts what the
  // adapter asked for: the same, plus a 16-byte header on blocks that
  // carry one.
  sqlite3_int64 used = sqlite3_memory_used();
  size_t counted = example_resource_bytes_in_use(&e);
  size_t blocks = example_resource_blocks_in_use(&e);
  EXPECT_GT(blocks, 0u);
  EXPECT_GE(counted, static_cast<size_t>(used));
  EXPECT_EQ((counted - static_cast<size_t>(used)) % 16, 0u);
  EXPECT_LE(counted - static_cast<size_t>(used), 16 * blocks);
  EXPECT_GT(example_resource_peak_bytes(&e), 1u << 20);  // the rows came here
  EXPECT_EQ(sqlite3_close(db), SQLITE_OK);
  sqlite3_shutdown();
  EXPECT_EQ(example_resource_blocks_in_use(&e), 0u);
  EXPECT_EQ(example_resource_bytes_in_use(&e), 0u);
  EXPECT_EQ(example_resource_close(&e), 0u);  // the debug resource: no leak
}

std::string Name(const ::testing::TestParamInfo<const char*>& info) {
  return info.param;
}

INSTANTIATE_TEST_SUITE_P(ThreadSafeResources, SqliteExampleTest,
                         ::testing::Values("malloc", "synchronized_pool",
                                           "thread_cache", "statistics",
                                           "debug"),
                         Name);

// The resources that are not thread-safe serve one thread.
class SqliteSingleThreadTest : public ::testing::TestWithParam<const char*> {};

TEST_P(SqliteSingleThreadTest, SameResultsEveryByteBack) {
  const uint64_t reference = Reference();
  example_resource e;
  ASSERT_TRUE(example_resource_open(&e, GetParam()));
  sqlite3_shutdown();
  ASSERT_EQ(pmr_sqlite_use(example_resource_get(&e)), SQLITE_OK);
  for (int c = 0; c < 2; ++c) {
    uint64_t d = 0;
    EXPECT_EQ(sqlite_workload_run(kRows, &d), SQLITE_OK);
    EXPECT_EQ(d, reference);
  }
  sqlite3_shutdown();
  EXPECT_EQ(example_resource_bytes_in_use(&e), 0u);
  EXPECT_EQ(example_resource_close(&e), 0u);
}

INSTANTIATE_TEST_SUITE_P(NotThreadSafe, SqliteSingleThreadTest,
                         ::testing::Values("unsynchronized_pool", "monotonic"),
                         Name);

// Over a pool, SQLite's xSize and xRoundup are the pool's class sizes: a
// block SQLite asks 100 bytes for is the 112-byte class, and SQLite knows.
TEST(SqliteExample, RoundupIsThePoolsClassSize) {
  example_resource e;
  ASSERT_TRUE(example_resource_open(&e, "thread_cache"));
  sqlite3_shutdown();
  ASSERT_EQ(pmr_sqlite_use(example_resource_get(&e)), SQLITE_OK);
  ASSERT_EQ(sqlite3_initialize(), SQLITE_OK);
  void* p = sqlite3_malloc(100);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(sqlite3_msize(p), 112u);
  size_t before = example_resource_bytes_in_use(&e);
  p = sqlite3_realloc(p, 110);  // same class: in place
  EXPECT_EQ(sqlite3_msize(p), 112u);
  EXPECT_EQ(example_resource_bytes_in_use(&e), before);
  sqlite3_free(p);
  sqlite3_shutdown();
  EXPECT_EQ(example_resource_bytes_in_use(&e), 0u);
  example_resource_close(&e);
}

}  // namespace
