// The drop-in malloc (malloc/pmr_dropin.h) as a program meets it: each test
// runs dropin_child, a program that never names pmr-c's malloc, in a child
// process three ways: LD_PRELOAD=libpmr_malloc.so with each engine
// (PMR_MALLOC=thread_cache, pool), and linked statically with
// //malloc:dropin. The child checks its scenario and prints "PASS <name>".
// A child that hangs is killed after kChildSeconds (a bound on a hang, not a
// measurement: every scenario takes well under a second on an idle machine).
//
// Lua's and SQLite's example programs run under the preloaded drop-in too,
// and must print what they print over glibc's malloc.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

constexpr int kChildSeconds = 120;
const char kPreload[] = "malloc/libpmr_malloc.so";
// The same library in the secure mode (malloc/BUILD.bazel).
const char kPreloadSecure[] = "malloc/libpmr_malloc_secure.so";

struct Result {
  int status = -1;  // as waitpid's
  std::string out;  // stdout
  std::string err;  // stderr
};

std::string slurp(int fd) {
  std::string s;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0)
    s.append(buf, static_cast<size_t>(n));
  return s;
}

// Runs argv with extra environment entries ("NAME=value"), collecting
// stdout and stderr (through files: no pipe to fill up).
Result run(const std::vector<std::string>& argv,
           const std::vector<std::string>& env) {
  char out_name[] = "/tmp/dropin_out_XXXXXX";
  char err_name[] = "/tmp/dropin_err_XXXXXX";
  int out = mkstemp(out_name);
  int err = mkstemp(err_name);
  Result r;
  if (out < 0 || err < 0) return r;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out, 1);
    dup2(err, 2);
    for (const std::string& e : env) putenv(const_cast<char*>(e.c_str()));
    std::vector<char*> args;
    for (const std::string& a : argv)
      args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    alarm(kChildSeconds);            // survives exec: a hang ends in SIGALRM
    struct rlimit no_core = {0, 0};  // a child stopped by abort: no core file
    setrlimit(RLIMIT_CORE, &no_core);
    execv(args[0], args.data());
    _exit(127);
  }
  if (pid > 0) waitpid(pid, &r.status, 0);
  lseek(out, 0, SEEK_SET);
  lseek(err, 0, SEEK_SET);
  r.out = slurp(out);
  r.err = slurp(err);
  close(out);
  close(err);
  unlink(out_name);
  unlink(err_name);
  return r;
}

bool exited_ok(const Result& r) {
  return WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0;
}

std::string describe(const Result& r) {
  std::string s = "status ";
  s += WIFEXITED(r.status)     ? "exit " + std::to_string(WEXITSTATUS(r.status))
       : WIFSIGNALED(r.status) ? "signal " + std::to_string(WTERMSIG(r.status))
                               : std::to_string(r.status);
  return s + "\nstdout:\n" + r.out + "\nstderr:\n" + r.err;
}

struct Mode {
  const char* name;
  const char* binary;
  std::vector<std::string> env;
};

const Mode kModes[] = {
    {"preload_thread_cache",
     "tests/dropin_child",
     {std::string("LD_PRELOAD=") + kPreload, "PMR_MALLOC=thread_cache"}},
    {"preload_pool",
     "tests/dropin_child",
     {std::string("LD_PRELOAD=") + kPreload, "PMR_MALLOC=pool"}},
    {"static", "tests/dropin_child_static", {}},
    {"preload_secure",
     "tests/dropin_child",
     {std::string("LD_PRELOAD=") + kPreloadSecure}},
};

class DropIn : public ::testing::TestWithParam<Mode> {
 protected:
  void Expect(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {GetParam().binary};
    argv.insert(argv.end(), args.begin(), args.end());
    Result r = run(argv, GetParam().env);
    EXPECT_TRUE(exited_ok(r)) << describe(r);
    EXPECT_NE(r.out.find("PASS " + args[0]), std::string::npos) << describe(r);
    // A correct program gets no misuse report.
    EXPECT_EQ(r.err.find("pmr:"), std::string::npos) << describe(r);
  }
};

TEST_P(DropIn, EveryEntryPointSizeAlignmentAndErrno) { Expect({"api"}); }
TEST_P(DropIn, OperatorNewAndDeleteInEveryForm) { Expect({"cxx"}); }
TEST_P(DropIn, ThreadsFreeEachOthersBlocksAndExit) { Expect({"threads"}); }
TEST_P(DropIn, ForkWhileOtherThreadsAllocate) { Expect({"fork"}); }
TEST_P(DropIn, DlopenAndDlcloseALibraryThatAllocates) {
  Expect({"dlopen",
          std::string(getcwd(nullptr, 0)) + "/tests/libdropin_plugin.so"});
}
TEST_P(DropIn, BlocksFromBeforeMainAndAfterIt) { Expect({"early"}); }
TEST_P(DropIn, PmrResourcesKeepWorkingOverIt) { Expect({"resources"}); }
TEST_P(DropIn, ForeignPointersAreLeftAlone) { Expect({"foreign"}); }
TEST_P(DropIn, StressAcrossThreadsWithForks) { Expect({"stress"}); }

// Misuse of blocks in each range (a small class; a page-sized class; an
// oversize block from the engine's upstream; one from the engine's own
// mappings or runs; a mapping of 30 MB, unmapped when freed: its second
// free must not read it): what the child does is in dropin_child.cc
// (scenario_misuse), `says` what its one line on stderr must hold.
struct Misuse {
  const char* kind;
  size_t n;
  const char* says;
};
const Misuse kMisuses[] = {
    {"double", 8, "a double free"},
    {"double", 4096, "a double free"},
    {"double", 20000, "a double free of a large block"},
    {"double", 262144, "a double free of a large block"},
    {"delayed", 8, "a double free"},
    {"delayed", 4096, "a double free"},
    {"delayed", 20000, "a double free of a large block"},
    {"delayed", 262144, "a double free of a large block"},
    {"remote", 16, "a double free"},
    {"remote", 4096, "a double free"},
    {"remote", 20000, "a double free of a large block"},
    {"remote", 262144, "a double free of a large block"},
    {"double", 30000000, "a double free of a large block"},
    {"realloc", 30000000, "a large block freed already"},
    {"interior", 8, "not the start of a block"},
    {"interior", 100, "not the start of a block"},
    {"interior", 4096, "not the start of a block"},
    {"unaligned", 8, "not the start of a block"},
    {"unaligned", 4096, "not the start of a block"},
    {"emptied", 64, "not the start of a block in use"},
    {"emptied", 1000, "not the start of a block in use"},
    {"realloc", 8, "a double free"},
    {"realloc", 4096, "a double free"},
    {"realloc", 20000, "a large block freed already"},
};

std::string misuse_name(const Misuse& m) {
  return std::string(m.kind) + " " + std::to_string(m.n);
}

// By default the process stops as glibc's does: SIGABRT, after one line.
TEST_P(DropIn, MisuseIsReportedAndStopsTheProcess) {
  for (const Misuse& m : kMisuses) {
    Result r = run({GetParam().binary, "misuse", m.kind, std::to_string(m.n)},
                   GetParam().env);
    EXPECT_TRUE(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGABRT)
        << misuse_name(m) << ": " << describe(r);
    EXPECT_NE(r.err.find(m.says), std::string::npos)
        << misuse_name(m) << ": " << describe(r);
    EXPECT_NE(r.err.find("stopping"), std::string::npos) << describe(r);
    EXPECT_EQ(r.out.find("PASS"), std::string::npos) << describe(r);
  }
}

// PMR_MALLOC_MISUSE=report: the same line, then the bad call does nothing
// and the program goes on with every other block intact.
TEST_P(DropIn, MisuseIsReportedAndIgnoredOnRequest) {
  std::vector<std::string> env = GetParam().env;
  env.push_back("PMR_MALLOC_MISUSE=report");
  for (const Misuse& m : kMisuses) {
    Result r =
        run({GetParam().binary, "misuse", m.kind, std::to_string(m.n)}, env);
    EXPECT_TRUE(exited_ok(r)) << misuse_name(m) << ": " << describe(r);
    EXPECT_NE(r.out.find("PASS misuse"), std::string::npos)
        << misuse_name(m) << ": " << describe(r);
    EXPECT_NE(r.err.find(m.says), std::string::npos)
        << misuse_name(m) << ": " << describe(r);
    // "ignored": the free did nothing; "dropped": a free list would have
    // handed the block out again, and was dropped instead.
    EXPECT_TRUE(r.err.find("ignored") != std::string::npos ||
                r.err.find("dropped") != std::string::npos)
        << describe(r);
  }
}

// Pooled blocks through the padding of the secure library: the usable
// size is the request, and writing all of it is no misuse; the default
// library's is at least the request.
TEST_P(DropIn, EveryUsableByteIsTheProgramsToWrite) {
  bool secure = std::string(GetParam().name) == "preload_secure";
  Expect({"padding", secure ? "exact" : "at_least"});
}

// The secure library delays a freed block's reuse until the thread has
// freed more (resources/internal/page_heap.h, "delayed reuse"); a trim ends
// the wait. The default library hands it out again at once.
TEST_P(DropIn, AFreedBlockWaitsForLaterFreesInTheSecureLibrary) {
  Expect({"reuse"});
}

// The secure library only: a write past the end of a pooled block's request
// (one byte), in each range of classes, is reported at its free or realloc,
// a write after free of a pooled block when its list would hand it out
// again, and a write before a block's start into the bytes around its
// page's table of descriptors at its free; each stops the process;
// with PMR_MALLOC_MISUSE=report the program goes on (a bad free or realloc
// does nothing). The default library does not check these.
const Misuse kSecureMisuses[] = {
    {"overflow", 24, "its padding changed"},
    {"overflow", 8, "its padding changed"},
    {"overflow", 100, "its padding changed"},
    {"overflow", 4096, "its padding changed"},
    {"overflow", 16000, "its padding changed"},
    {"overflow", 40000, "its padding changed"},
    {"overflow", 300000, "its padding changed"},
    {"realloc_overflow", 100, "its padding changed"},
    {"realloc_overflow", 4096, "its padding changed"},
    {"write_freed", 4096, "a write after free"},
    {"underflow_table", 4096, "table of descriptors"},
    {"underflow_table", 16000, "table of descriptors"},
};

TEST(DropInSecure, AWritePastTheRequestIsReportedAtTheFree) {
  std::string pre = std::string("LD_PRELOAD=") + kPreloadSecure;
  for (const Misuse& m : kSecureMisuses) {
    std::vector<std::string> argv = {"tests/dropin_child", "misuse", m.kind,
                                     std::to_string(m.n)};
    Result r = run(argv, {pre});
    EXPECT_TRUE(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGABRT)
        << misuse_name(m) << ": " << describe(r);
    EXPECT_NE(r.err.find(m.says), std::string::npos)
        << misuse_name(m) << ": " << describe(r);
    r = run(argv, {pre, "PMR_MALLOC_MISUSE=report"});
    EXPECT_TRUE(exited_ok(r)) << misuse_name(m) << ": " << describe(r);
    EXPECT_NE(r.out.find("PASS misuse"), std::string::npos) << describe(r);
    EXPECT_NE(r.err.find(m.says), std::string::npos) << describe(r);
    EXPECT_TRUE(r.err.find("ignored") != std::string::npos ||
                r.err.find("dropped") != std::string::npos)
        << describe(r);
  }
}

// The secure library only: a write running past a large block's last OS
// page (128 KiB and more) meets its guard page and faults there, before it
// reaches another block (malloc/internal/guard.h), whether the block is the
// engine's or a mapping of its own, new or a freed one kept with its guard
// and taken again.
TEST(DropInSecure, AnOverflowPastALargeBlocksPagesFaultsAtItsGuard) {
  std::string pre = std::string("LD_PRELOAD=") + kPreloadSecure;
  for (const char* kind : {"overflow_far", "overflow_far_kept"}) {
    for (size_t n :
         {(size_t)140000, (size_t)300000, (size_t)1 << 20, (size_t)5 << 20}) {
      Result r =
          run({"tests/dropin_child", "misuse", kind, std::to_string(n)}, {pre});
      EXPECT_TRUE(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGSEGV)
          << kind << " " << n << ": " << describe(r);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, DropIn, ::testing::ValuesIn(kModes),
                         [](const ::testing::TestParamInfo<Mode>& i) {
                           return std::string(i.param.name);
                         });

// PMR_MALLOC picks the engine; the default is the thread cache.
TEST(DropInEnv, PmrMallocPicksTheEngine) {
  std::string pre = std::string("LD_PRELOAD=") + kPreload;
  Result r = run({"tests/dropin_child", "stats", "thread_cache"}, {pre});
  EXPECT_TRUE(exited_ok(r)) << describe(r);
  r = run({"tests/dropin_child", "stats", "pool"}, {pre, "PMR_MALLOC=pool"});
  EXPECT_TRUE(exited_ok(r)) << describe(r);
  r = run({"tests/dropin_child", "stats", "thread_cache"},
          {pre, "PMR_MALLOC=thread_cache"});
  EXPECT_TRUE(exited_ok(r)) << describe(r);
}

// Freed large blocks are kept for reuse (the reservoir), unless
// PMR_MALLOC_KEEP_BYTES=0.
TEST(DropInEnv, FreedLargeBlocksAreReused) {
  std::string pre = std::string("LD_PRELOAD=") + kPreload;
  Result r = run({"tests/dropin_child", "reservoir", "on"}, {pre});
  EXPECT_TRUE(exited_ok(r)) << describe(r);
  r = run({"tests/dropin_child", "reservoir", "on"}, {pre, "PMR_MALLOC=pool"});
  EXPECT_TRUE(exited_ok(r)) << describe(r);
  r = run({"tests/dropin_child", "reservoir", "off"},
          {pre, "PMR_MALLOC_KEEP_BYTES=0"});
  EXPECT_TRUE(exited_ok(r)) << describe(r);
}

// PMR_MALLOC_STATS=1 prints the statistics to stderr at exit; nothing
// without it.
TEST(DropInEnv, StatsAtExit) {
  std::string pre = std::string("LD_PRELOAD=") + kPreload;
  Result r = run({"tests/dropin_child", "stats", "pool"},
                 {pre, "PMR_MALLOC=pool", "PMR_MALLOC_STATS=1"});
  ASSERT_TRUE(exited_ok(r)) << describe(r);
  EXPECT_NE(r.err.find("pmr_malloc: engine pool"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("pmr_malloc: peak RSS"), std::string::npos) << r.err;
#ifdef PMR_SECURE
  // A secure build's libpmr_malloc.so is the secure library.
  EXPECT_NE(r.err.find("secure mode"), std::string::npos) << r.err;
#else
  EXPECT_EQ(r.err.find("secure mode"), std::string::npos) << r.err;
#endif
  r = run({"tests/dropin_child", "stats", "thread_cache"}, {pre});
  ASSERT_TRUE(exited_ok(r)) << describe(r);
  EXPECT_EQ(r.err.find("pmr_malloc:"), std::string::npos) << r.err;
  // The secure library says so.
  r = run({"tests/dropin_child", "stats", "thread_cache"},
          {std::string("LD_PRELOAD=") + kPreloadSecure, "PMR_MALLOC_STATS=1"});
  ASSERT_TRUE(exited_ok(r)) << describe(r);
  EXPECT_NE(r.err.find("pmr_malloc: engine thread_cache, secure mode"),
            std::string::npos)
      << r.err;
}

// A C program under the drop-in loads no C++ runtime: the library needs
// only libc (its operator new reaches libstdc++ through weak references,
// resolved in C++ programs: OperatorNewAndDeleteInEveryForm).
TEST(DropInEnv, ACProgramLoadsOnlyLibc) {
  Result r = run({"/bin/cat", "/proc/self/maps"},
                 {std::string("LD_PRELOAD=") + kPreload});
  ASSERT_TRUE(exited_ok(r)) << describe(r);
  EXPECT_NE(r.out.find("libpmr_malloc.so"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("libstdc++"), std::string::npos) << r.out;
}

// The output without the figures that depend on how threads interleave
// (SQLite's peak on several threads).
std::string without_peak(std::string s) {
  for (size_t at = s.find("peak "); at != std::string::npos;
       at = s.find("peak ", at + 1)) {
    size_t digits = at + 5, end = digits;
    while (end < s.size() && isdigit(static_cast<unsigned char>(s[end]))) ++end;
    s.replace(digits, end - digits, "N");
  }
  return s;
}

// Real clients, unchanged: the examples print the same under the drop-in.
void ExpectSameOutput(const std::vector<std::string>& argv) {
  Result plain = run(argv, {});
  ASSERT_TRUE(exited_ok(plain)) << describe(plain);
  for (const char* engine : {"PMR_MALLOC=thread_cache", "PMR_MALLOC=pool"}) {
    Result r = run(argv, {std::string("LD_PRELOAD=") + kPreload, engine});
    EXPECT_TRUE(exited_ok(r)) << engine << "\n" << describe(r);
    EXPECT_EQ(without_peak(r.out), without_peak(plain.out)) << engine;
  }
}

// The Lua state and SQLite allocate through pmr_malloc_resource(), that is
// through the drop-in's malloc; SQLite on 4 threads.
TEST(DropInClients, LuaExample) {
  ExpectSameOutput(
      {"examples/lua/lua_example", "examples/lua/alloc_heavy.lua", "malloc"});
}
TEST(DropInClients, SqliteExample) {
  ExpectSameOutput({"examples/sqlite/sqlite_example", "malloc", "20000", "4"});
}

}  // namespace
