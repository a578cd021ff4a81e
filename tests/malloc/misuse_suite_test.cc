// The misuse suite (misuse_suite.c: 17 kinds of memory bug, each at 8 B,
// 4 KiB and 256 KiB) run in child processes over glibc's malloc and over
// pmr-c's drop-in (LD_PRELOAD, each engine), by default and with
// PMR_MALLOC_MISUSE=report. What it holds pmr-c to:
//   - never a crash, never a corrupt heap (a block handed out twice, a live
//     block changed): each run ends stopped (SIGABRT, after a "pmr:" line)
//     or with the heap intact;
//   - the kinds it claims to stop (malloc/README.md, "Misuse") stopped at
//     every size;
//   - at least as many runs stopped as glibc stops on this machine;
//   - in report mode, nothing stops and the heap stays intact.
// The table of outcomes is printed to the test's log.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace {

constexpr int kChildSeconds = 60;  // a bound on a hang, not a measurement
const char kChild[] = "tests/misuse_suite";
const char kPreload[] = "malloc/libpmr_malloc.so";
const char kPreloadSecure[] = "malloc/libpmr_malloc_secure.so";

const char* const kCases[] = {
    "double",        "double_delayed", "double_between", "double_remote",
    "realloc_freed", "interior",       "unaligned",      "stack",
    "global",        "foreign_map",    "overflow_1",     "overflow_32",
    "underflow_1",   "underflow_32",   "write_freed",    "write_freed_32",
    "zero_write"};
const size_t kSizes[] = {8, 4096, 262144};

enum Outcome { kStopped, kUnnoticed, kCorrupt, kCrashed };
const char* const kOutcomeNames[] = {"stopped", "unnoticed", "CORRUPT",
                                     "CRASHED"};

struct Run {
  Outcome outcome;
  std::string err;
};

std::string slurp(int fd) {
  std::string s;
  char buf[4096];
  ssize_t n;
  lseek(fd, 0, SEEK_SET);
  while ((n = read(fd, buf, sizeof buf)) > 0)
    s.append(buf, static_cast<size_t>(n));
  return s;
}

Run run(const std::string& kind, size_t n,
        const std::vector<std::string>& env) {
  char err_name[] = "/tmp/misuse_err_XXXXXX";
  int err = mkstemp(err_name);
  Run r{kCrashed, ""};
  if (err < 0) return r;
  std::string size = std::to_string(n);
  pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(err, 2);
    for (const std::string& e : env) putenv(const_cast<char*>(e.c_str()));
    alarm(kChildSeconds);
    struct rlimit no_core = {0, 0};  // a child stopped by abort: no core file
    setrlimit(RLIMIT_CORE, &no_core);
    execl(kChild, kChild, kind.c_str(), size.c_str(), (char*)nullptr);
    _exit(127);
  }
  int status = -1;
  if (pid > 0) waitpid(pid, &status, 0);
  r.err = slurp(err);
  close(err);
  unlink(err_name);
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT)
    r.outcome = kStopped;
  else if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    r.outcome = kUnnoticed;
  else if (WIFEXITED(status) && WEXITSTATUS(status) == 3)
    r.outcome = kCorrupt;
  return r;
}

using Table = std::map<std::string, Run>;  // "kind/size" -> run

std::string key(const char* kind, size_t n) {
  return std::string(kind) + "/" + std::to_string(n);
}

Table run_all(const std::vector<std::string>& env) {
  Table t;
  for (const char* kind : kCases)
    for (size_t n : kSizes) t[key(kind, n)] = run(kind, n, env);
  return t;
}

int count(const Table& t, Outcome o) {
  int c = 0;
  for (const auto& [k, r] : t) c += r.outcome == o;
  return c;
}

void print(const char* title, const Table& t) {
  std::printf("%s: %d of %zu stopped\n", title, count(t, kStopped), t.size());
  for (const char* kind : kCases) {
    std::printf("  %-15s", kind);
    for (size_t n : kSizes)
      std::printf(" %6zu:%-9s", n, kOutcomeNames[t.at(key(kind, n)).outcome]);
    std::printf("\n");
  }
}

std::vector<std::string> preload(const char* engine) {
  return {std::string("LD_PRELOAD=") + kPreload,
          std::string("PMR_MALLOC=") + engine};
}

// The kinds malloc/README.md says the drop-in stops, at the sizes it says.
bool claimed(const std::string& kind, size_t n) {
  static const std::set<std::string> every_size = {
      "double",        "double_delayed", "double_between",
      "double_remote", "realloc_freed",  "interior",
      "unaligned",     "stack",          "global"};
  if (every_size.count(kind)) return true;
  // Large blocks: a trailer check word after the block.
  if (n == 262144 &&
      (kind.rfind("overflow_", 0) == 0 || kind.rfind("underflow_", 0) == 0))
    return true;
  // Page-sized blocks: the link of a free block, written after free, leads
  // out of its page and is never followed.
  return n == 4096 && kind.rfind("write_freed", 0) == 0;
}

class MisuseSuite : public ::testing::TestWithParam<const char*> {};

TEST_P(MisuseSuite, StopsAtLeastWhatGlibcStopsAndNeverCorrupts) {
  Table glibc = run_all({});
  Table pmr = run_all(preload(GetParam()));
  print("glibc", glibc);
  print((std::string("pmr-c, ") + GetParam()).c_str(), pmr);
  for (const auto& [k, r] : pmr) {
    EXPECT_TRUE(r.outcome == kStopped || r.outcome == kUnnoticed)
        << k << ": " << kOutcomeNames[r.outcome] << "\n"
        << r.err;
    if (r.outcome == kStopped) {
      EXPECT_NE(r.err.find("pmr: "), std::string::npos) << k << "\n" << r.err;
    }
    std::string kind = k.substr(0, k.find('/'));
    size_t n = std::stoul(k.substr(k.find('/') + 1));
    if (claimed(kind, n)) {
      EXPECT_EQ(r.outcome, kStopped) << k << "\n" << r.err;
    }
  }
  EXPECT_GE(count(pmr, kStopped), count(glibc, kStopped));
}

TEST_P(MisuseSuite, ReportModeReportsAndKeepsTheHeapIntact) {
  std::vector<std::string> env = preload(GetParam());
  env.push_back("PMR_MALLOC_MISUSE=report");
  Table pmr = run_all(env);
  for (const auto& [k, r] : pmr) {
    EXPECT_EQ(r.outcome, kUnnoticed)
        << k << ": " << kOutcomeNames[r.outcome] << "\n"
        << r.err;
    std::string kind = k.substr(0, k.find('/'));
    size_t n = std::stoul(k.substr(k.find('/') + 1));
    if (claimed(kind, n)) {
      EXPECT_NE(r.err.find("pmr: "), std::string::npos) << k << "\n" << r.err;
    }
  }
}

// What the secure library claims besides: every overflow and underflow,
// and writes into a zero-size block (malloc/internal/pad.h; large blocks:
// the trailer's check word).
bool claimed_secure(const std::string& kind, size_t n) {
  return claimed(kind, n) || kind.rfind("overflow_", 0) == 0 ||
         kind.rfind("underflow_", 0) == 0 || kind == "zero_write";
}

// The secure library (libpmr_malloc_secure.so): never a crash or a corrupt
// heap, at least every run the default library stops, what it claims, and
// at least 90 % of the suite. Its table is printed.
TEST(MisuseSuiteSecure, StopsAtLeastWhatTheDefaultStopsAndNeverCorrupts) {
  Table plain = run_all(preload("thread_cache"));
  Table secure = run_all(
      {std::string("LD_PRELOAD=") + kPreloadSecure, "PMR_MALLOC=thread_cache"});
  print("pmr-c secure, thread_cache", secure);
  for (const auto& [k, r] : secure) {
    EXPECT_TRUE(r.outcome == kStopped || r.outcome == kUnnoticed)
        << k << ": " << kOutcomeNames[r.outcome] << "\n"
        << r.err;
    if (plain.at(k).outcome == kStopped) {
      EXPECT_EQ(r.outcome, kStopped) << k << "\n" << r.err;
    }
    if (r.outcome == kStopped) {
      EXPECT_NE(r.err.find("pmr: "), std::string::npos) << k << "\n" << r.err;
    }
    std::string kind = k.substr(0, k.find('/'));
    size_t n = std::stoul(k.substr(k.find('/') + 1));
    if (claimed_secure(kind, n)) {
      EXPECT_EQ(r.outcome, kStopped) << k << "\n" << r.err;
    }
  }
  EXPECT_GE(static_cast<size_t>(count(secure, kStopped)) * 10,
            secure.size() * 9);
}

INSTANTIATE_TEST_SUITE_P(Engines, MisuseSuite,
                         ::testing::Values("thread_cache", "pool"));

}  // namespace
