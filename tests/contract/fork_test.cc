// fork() in a multi-threaded program, for every thread-safe resource,
// through the public API only: threads allocate and free while the parent
// forks again and again; each child uses the inherited resource (allocates,
// checks, frees), destroys it and exits normally. The parent checks every
// child's exit status. A hang fails the test instead of blocking CI: each
// child is killed after kChildSeconds, and the whole test process after
// kTestSeconds (alarm).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "resources/pmr_debug_resource.h"
#include "resources/pmr_statistics.h"
#include "resources/pmr_synchronized_pool.h"
#include "resources/pmr_thread_cache.h"

#if defined(PMR_TSAN) || defined(__SANITIZE_THREAD__)
#define FORK_TEST_TSAN 1
#endif
#if defined(PMR_ASAN) || defined(__SANITIZE_ADDRESS__)
// GCC 12's ASan allocator does not take its locks around fork(): a child
// forked while another thread is inside malloc may hang in malloc. Under
// ASan the parent's threads therefore keep to pooled sizes (no upstream call
// once warm), and resources that call malloc on every allocation are not
// forked from while threads allocate.
#define FORK_TEST_ASAN 1
#endif
#if defined(FORK_TEST_TSAN) || defined(FORK_TEST_ASAN)
constexpr int kForks = 12;
#else
constexpr int kForks = 40;
#endif
constexpr int kChildSeconds = 20;
constexpr unsigned kTestSeconds = 240;

namespace {

// One thread-safe resource, set up and torn down through its public API.
struct Subject {
  std::string name;
  bool mallocs_always;  // every allocation reaches malloc
  std::function<pmr_mem_resource*()> init;
  std::function<void()> destroy;
};

pmr_thread_cache g_tc;
pmr_synchronized_pool g_pool;
pmr_debug_resource g_debug;
pmr_statistics g_stats;

std::vector<Subject> Subjects() {
  return {
      {"thread_cache", false,
       [] {
         pmr_thread_cache_init(&g_tc, nullptr, nullptr);
         return &g_tc.base;
       },
       [] { pmr_thread_cache_destroy(&g_tc); }},
      {"synchronized_pool", false,
       [] {
         pmr_synchronized_pool_init(&g_pool, nullptr, nullptr);
         return &g_pool.base;
       },
       [] { pmr_synchronized_pool_destroy(&g_pool); }},
      {"thread_cache_over_synchronized_pool", false,
       [] {
         pmr_synchronized_pool_init(&g_pool, nullptr, nullptr);
         pmr_thread_cache_init(&g_tc, nullptr, &g_pool.base);
         return &g_tc.base;
       },
       [] {
         pmr_thread_cache_destroy(&g_tc);
         pmr_synchronized_pool_destroy(&g_pool);
       }},
      {"statistics_over_debug_resource", true,
       [] {
         pmr_debug_resource_options o{};
         o.no_quarantine = true;
         // The child's destroy reports the blocks vanished threads held.
         o.continue_on_misuse = true;
         pmr_debug_resource_init(&g_debug, &o, nullptr);
         pmr_statistics_init(&g_stats, &g_debug.base);
         return &g_stats.base;
       },
       [] {
         pmr_statistics_destroy(&g_stats);
         pmr_debug_resource_destroy(&g_debug);
       }},
  };
}

const size_t kSizes[] = {8,   24,   64,   100,
                         256, 1000, 4000, 9000};  // 9000: oversize

// Allocates n blocks of every size (of every pooled size without oversize),
// fills, checks and frees them. False on a failed allocation or a damaged
// block.
bool Churn(pmr_mem_resource* r, int n, unsigned char tag,
           bool oversize = true) {
  // No std::vector: the parent's threads must not call malloc (see above).
  struct {
    unsigned char* p;
    size_t bytes;
  } live[8 * 64];
  size_t count = 0;
  if (n > 64) return false;
  for (int i = 0; i < n; ++i)
    for (size_t bytes : kSizes) {
      if (bytes > 4096 && !oversize) continue;
      auto* p = static_cast<unsigned char*>(pmr_allocate(r, bytes, 8));
      if (p == nullptr) return false;
      std::memset(p, tag, bytes);
      live[count].p = p;
      live[count++].bytes = bytes;
    }
  bool ok = true;
  for (size_t i = 0; i < count; ++i) {
    if (live[i].p[0] != tag || live[i].p[live[i].bytes - 1] != tag) ok = false;
    pmr_deallocate(r, live[i].p, live[i].bytes, 8);
  }
  return ok;
}

void Quiet(const char*, void*) {}

// What a child does; its exit status tells the parent what failed.
[[noreturn]] void Child(const Subject& s, pmr_mem_resource* r,
                        bool with_thread) {
  alarm(kChildSeconds);  // timers are not inherited: the child's own
  pmr_set_misuse_handler(Quiet, nullptr);
  int code = 0;
  if (!Churn(r, 50, 0x5a)) code = 2;
  if (code == 0 && with_thread) {
    bool ok = false;
    std::thread t([&] { ok = Churn(r, 20, 0x3c); });
    t.join();
    if (!ok) code = 3;
  }
  s.destroy();
  _exit(code);  // no atexit handlers: the child shares gtest's state
}

// Waits for pid at most kChildSeconds + 10; kills it on timeout. Returns
// a description of a failure, or "" for exit status 0.
std::string Reap(pid_t pid) {
  for (int ms = 0; ms < (kChildSeconds + 10) * 1000; ms += 10) {
    int status = 0;
    pid_t got = waitpid(pid, &status, WNOHANG);
    if (got == pid) {
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
      if (WIFEXITED(status))
        return "exit status " + std::to_string(WEXITSTATUS(status));
      if (WIFSIGNALED(status))
        return "killed by signal " + std::to_string(WTERMSIG(status));
      return "stopped";
    }
    if (got < 0) return "waitpid failed";
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, nullptr);
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return "hung (killed)";
}

class Fork : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override { alarm(kTestSeconds); }
  void TearDown() override { alarm(0); }
  Subject subject() { return Subjects()[GetParam()]; }
};

// Threads allocate and free without pause while the parent forks.
TEST_P(Fork, RepeatedForksWhileThreadsAllocate) {
  Subject s = subject();
#ifdef FORK_TEST_ASAN
  if (s.mallocs_always) GTEST_SKIP() << "ASan's malloc is not fork-safe";
  const bool oversize = false;
#else
  const bool oversize = true;
#endif
  pmr_mem_resource* r = s.init();
  std::atomic<bool> stop{false};
  std::atomic<long> rounds{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      while (!stop.load(std::memory_order_relaxed)) {
        if (!Churn(r, 4, static_cast<unsigned char>(t + 1), oversize)) {
          ADD_FAILURE() << "parent thread " << t << ": bad block";
          return;
        }
        rounds.fetch_add(1, std::memory_order_relaxed);
      }
    });
  while (rounds.load() < 8) std::this_thread::yield();
  int failures = 0;
  for (int i = 0; i < kForks; ++i) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
#ifdef FORK_TEST_TSAN
    // TSan cannot run threads started in the child of a multi-threaded
    // parent (die_after_fork): the child uses the resource on its one thread.
    if (pid == 0) Child(s, r, false);
#else
    if (pid == 0) Child(s, r, i % 2 == 1);
#endif
    std::string why = Reap(pid);
    if (!why.empty()) {
      ADD_FAILURE() << s.name << ": child " << i << ": " << why;
      if (++failures == 3) break;
    }
  }
  stop = true;
  for (auto& t : threads) t.join();
  EXPECT_TRUE(Churn(r, 10, 0x77));  // the parent's resource works on
  s.destroy();
}

// Threads that used the resource are alive but idle at fork(); the child
// uses the resource (on a new thread where the tools allow it), then
// destroys it: the vanished threads' caches must not be touched.
TEST_P(Fork, ChildDestroysAfterIdleThreadsUsedTheResource) {
  Subject s = subject();
  pmr_mem_resource* r = s.init();
  std::mutex mu;
  std::condition_variable cv;
  bool go_home = false;
  int ready = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t)
    threads.emplace_back([&, t] {
      // The freed blocks stay in this thread's cache.
      EXPECT_TRUE(Churn(r, 30, static_cast<unsigned char>(t + 1)));
      std::unique_lock<std::mutex> lock(mu);
      ++ready;
      cv.notify_all();
      cv.wait(lock, [&] { return go_home; });
    });
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return ready == 6; });
  }
  for (int i = 0; i < 3; ++i) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
#ifdef FORK_TEST_TSAN
    if (pid == 0) Child(s, r, false);
#else
    if (pid == 0) Child(s, r, true);
#endif
    EXPECT_EQ(Reap(pid), "") << s.name << ": child " << i;
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    go_home = true;
  }
  cv.notify_all();
  for (auto& t : threads) t.join();
  s.destroy();
}

INSTANTIATE_TEST_SUITE_P(ThreadSafeResources, Fork, ::testing::Range(0, 4),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return Subjects()[info.param].name;
                         });

// In the child, the thread cache keeps only the forking thread's cache:
// the others were taken back into the central pool.
TEST(ForkThreadCache, ChildKeepsOnlyTheForkingThreadsCache) {
  alarm(kTestSeconds);
  pmr_thread_cache tc;
  ASSERT_TRUE(pmr_thread_cache_init(&tc, nullptr, nullptr));
  std::mutex mu;
  std::condition_variable cv;
  bool go_home = false;
  int ready = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t)
    threads.emplace_back([&] {
      void* p = pmr_allocate(&tc.base, 64, 8);
      pmr_deallocate(&tc.base, p, 64, 8);
      std::unique_lock<std::mutex> lock(mu);
      ++ready;
      cv.notify_all();
      cv.wait(lock, [&] { return go_home; });
    });
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return ready == 3; });
  }
  void* mine = pmr_allocate(&tc.base, 64, 8);
  ASSERT_EQ(pmr_thread_cache_get_stats(&tc).threads, 4u);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    alarm(kChildSeconds);
    int code = pmr_thread_cache_get_stats(&tc).threads == 1 ? 0 : 4;
    pmr_deallocate(&tc.base, mine, 64, 8);
    pmr_thread_cache_destroy(&tc);
    _exit(code);
  }
  EXPECT_EQ(Reap(pid), "");
  {
    std::lock_guard<std::mutex> lock(mu);
    go_home = true;
  }
  cv.notify_all();
  for (auto& t : threads) t.join();
  pmr_deallocate(&tc.base, mine, 64, 8);
  pmr_thread_cache_destroy(&tc);
  alarm(0);
}

}  // namespace
