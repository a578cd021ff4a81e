// Benchmark SYS (system.h): programs from Debian's archive run unchanged,
// each in a process of its own started by the benchmark's child. The child
// runs under the row's LD_PRELOAD (checked in child.cc); the program it
// starts inherits it, plus PMR_MALLOC=pool for pmr_dropin_pool. Inputs are
// generated (fixed seeds) into memory files given to the program as stdin,
// so nothing is left on disk. Measured per run: wall time, CPU time
// (user + system) and peak RSS from wait4's rusage; the output's digest
// must equal the glibc_malloc row's (harness.cc collects it, the check is in
// system_report.cc).
#include <arpa/inet.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "benchmarks/child.h"
#include "benchmarks/json.h"
#include "benchmarks/system.h"
#include "benchmarks/system_programs.h"

extern char** environ;

namespace bench {
namespace {

using Clock = std::chrono::steady_clock;

// FNV-1a, 64 bits: the digest of a program's output.
constexpr uint64_t kFnvBasis = 14695981039346656037ull;
uint64_t Fnv(uint64_t h, const char* p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    h ^= static_cast<unsigned char>(p[i]);
    h *= 1099511628211ull;
  }
  return h;
}

void EmitMetric(const char* id, const std::vector<double>& values) {
  std::string s = absl::StrFormat(
      "{\"type\":\"metric\",\"metric\":\"%s\",\"values\":[", id);
  for (size_t i = 0; i < values.size(); ++i)
    s += (i ? "," : "") + JsonNumber(values[i]);
  s += "]}\n";
  std::fputs(s.c_str(), stdout);
}

// The temp dir of the running redis round, removed by Fail ("": none).
std::string& TempDir() {
  static std::string dir;
  return dir;
}

// A program failed: the parent shows detail in the row (status error).
[[noreturn]] void Fail(const std::string& detail) {
  if (!TempDir().empty()) rmdir(TempDir().c_str());
  std::fputs(absl::StrFormat("{\"type\":\"error\",\"detail\":%s}\n",
                             JsonString(detail))
                 .c_str(),
             stdout);
  std::fflush(stdout);
  std::exit(4);
}

// A memory file holding bytes (a program's stdin), or -1.
int MemFile(const char* name, const std::string& bytes) {
  const int fd = memfd_create(name, MFD_CLOEXEC);
  if (fd < 0) return -1;
  size_t off = 0;
  while (off < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + off, bytes.size() - off);
    if (n <= 0) {
      close(fd);
      return -1;
    }
    off += static_cast<size_t>(n);
  }
  return fd;
}

// This process's environment without LD_PRELOAD and PMR_MALLOC, plus extra.
std::vector<std::string> EnvWith(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e)
    if (std::strncmp(*e, "LD_PRELOAD=", 11) != 0 &&
        std::strncmp(*e, "PMR_MALLOC=", 11) != 0)
      env.push_back(*e);
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

struct Proc {
  pid_t pid = -1;
  int out = -1;  // the read end of its stdout, when captured
  int err = -1;  // memory file holding its stderr
  Clock::time_point start;
};

struct Ended {
  bool ok = false;   // exited with status 0
  std::string what;  // how it ended otherwise, and the start of its stderr
  double wall_ms = 0, cpu_ms = 0, rss_kib = 0;
  uint64_t digest = kFnvBasis;  // of its stdout, when captured
  std::string head;             // its stdout's first 4 KiB, when captured
};

// Starts argv (argv[0] a path) with env: stdin from in (rewound; -1:
// /dev/null), stdout into a pipe when capture (else /dev/null), stderr into
// a memory file. The program gets SIGKILL when this process dies, so a
// child that timed out leaves no server behind.
bool Start(const std::vector<std::string>& argv,
           const std::vector<std::string>& env, int in, bool capture, Proc* p,
           std::string* why) {
  std::vector<char*> av, ev;
  for (const std::string& a : argv) av.push_back(const_cast<char*>(a.c_str()));
  av.push_back(nullptr);
  for (const std::string& e : env) ev.push_back(const_cast<char*>(e.c_str()));
  ev.push_back(nullptr);
  const int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  int fds[2] = {-1, -1};
  if (null_fd < 0 || (capture && pipe2(fds, O_CLOEXEC) != 0)) {
    *why = std::string("cannot set up the program's files: ") +
           std::strerror(errno);
    if (null_fd >= 0) close(null_fd);
    return false;
  }
  p->err = memfd_create("stderr", MFD_CLOEXEC);
  if (in >= 0) lseek(in, 0, SEEK_SET);
  const pid_t parent = getpid();
  p->start = Clock::now();
  const pid_t pid = fork();
  if (pid == 0) {  // only async-signal-safe calls until execve
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    dup2(in >= 0 ? in : null_fd, STDIN_FILENO);
    dup2(capture ? fds[1] : null_fd, STDOUT_FILENO);
    dup2(p->err >= 0 ? p->err : null_fd, STDERR_FILENO);
    execve(av[0], av.data(), ev.data());
    _exit(127);
  }
  close(null_fd);
  if (capture) close(fds[1]);
  if (pid < 0) {
    *why = std::string("fork failed: ") + std::strerror(errno);
    if (capture) close(fds[0]);
    if (p->err >= 0) close(p->err);
    return false;
  }
  p->pid = pid;
  p->out = capture ? fds[0] : -1;
  return true;
}

// Reads p's stdout to its end, then waits for p: with timeout_s > 0 at most
// that long, then SIGKILL.
Ended Wait(Proc* p, int timeout_s) {
  Ended e;
  if (p->out >= 0) {
    char buf[65536];
    for (;;) {
      const ssize_t n = read(p->out, buf, sizeof buf);
      if (n > 0) {
        e.digest = Fnv(e.digest, buf, static_cast<size_t>(n));
        if (e.head.size() < 4096)
          e.head.append(buf, std::min<size_t>(static_cast<size_t>(n),
                                              4096 - e.head.size()));
      } else if (n == 0 || errno != EINTR) {
        break;
      }
    }
    close(p->out);
  }
  int status = 0;
  rusage ru{};
  bool killed = false;
  const auto deadline = Clock::now() + std::chrono::seconds(timeout_s);
  for (;;) {
    const pid_t r = wait4(p->pid, &status, timeout_s > 0 ? WNOHANG : 0, &ru);
    if (r == p->pid) break;
    if (r < 0 && errno != EINTR) {
      e.what = std::string("wait4: ") + std::strerror(errno);
      return e;
    }
    if (r == 0 && Clock::now() > deadline && !killed) {
      kill(p->pid, SIGKILL);
      killed = true;
    }
    if (r == 0) usleep(1000);
  }
  e.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - p->start)
                  .count();
  auto ms = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) * 1e3 +
           static_cast<double>(t.tv_usec) / 1e3;
  };
  e.cpu_ms = ms(ru.ru_utime) + ms(ru.ru_stime);
  e.rss_kib = static_cast<double>(ru.ru_maxrss);
  e.ok = !killed && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!e.ok) {
    if (killed)
      e.what = absl::StrFormat("did not end within %d s", timeout_s);
    else if (WIFSIGNALED(status))
      e.what = absl::StrFormat("killed by signal %d (%s)", WTERMSIG(status),
                               strsignal(WTERMSIG(status)));
    else
      e.what = absl::StrFormat("exited with code %d", WEXITSTATUS(status));
    char err[301] = {0};
    const ssize_t n = p->err >= 0 ? pread(p->err, err, 300, 0) : 0;
    if (n > 0) {
      std::string text(err, static_cast<size_t>(n));
      for (char& c : text)
        if (c == '\n' || c == '\t') c = ' ';
      e.what += ": " + text;
    }
  }
  if (p->err >= 0) close(p->err);
  return e;
}

Ended Run(const std::vector<std::string>& argv,
          const std::vector<std::string>& env, int in, bool capture) {
  Proc p;
  std::string why;
  if (!Start(argv, env, in, capture, &p, &why)) {
    Ended e;
    e.what = why;
    return e;
  }
  return Wait(&p, 0);
}

// A TCP port on 127.0.0.1 that was free a moment ago.
int FreePort() {
  const int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = -1;
  if (bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  close(s);
  return port;
}

// One round of a program that reads stdin and writes stdout.
Ended RunFiltered(const SystemProgram& prog,
                  const std::vector<std::string>& env, int in) {
  Ended e = Run(prog.argv, env, in, true);
  if (!e.ok) Fail(std::string(prog.argv[0]) + " " + e.what);
  return e;
}

// One round of redis: the server under the row's malloc, redis-benchmark
// and redis-cli under glibc's. Wall time = redis-benchmark's run; CPU time
// and peak RSS = the server's; output = redis-cli's replies to the queries
// (the data the benchmark left).
Ended RunRedis(const std::vector<std::string>& env,
               const std::vector<std::string>& client_env, const Sizes& s,
               const std::string& dir, int queries) {
  const int port = FreePort();
  if (port < 0) Fail("no free TCP port on 127.0.0.1");
  const std::string p = std::to_string(port);
  Proc server;
  std::string why;
  if (!Start({kRedisServer, "--port", p, "--bind", "127.0.0.1", "--save", "",
              "--appendonly", "no", "--dir", dir, "--daemonize", "no",
              "--logfile", "", "--loglevel", "warning"},
             env, -1, false, &server, &why))
    Fail(why);
  const std::vector<std::string> cli = {kRedisCli, "-h", "127.0.0.1", "-p", p};
  auto server_gone = [&]() {
    siginfo_t info{};
    return waitid(P_PID, static_cast<id_t>(server.pid), &info,
                  WEXITED | WNOHANG | WNOWAIT) == 0 &&
           info.si_pid == server.pid;
  };
  auto stop = [&](const std::string& what) {
    kill(server.pid, SIGKILL);
    Ended e = Wait(&server, 0);
    Fail(what + (e.what.empty() ? "" : "; redis-server " + e.what));
  };
  // Ready when it answers PING (it loads nothing: no persistence).
  bool ready = false;
  for (int i = 0; i < 1000 && !ready; ++i) {
    if (server_gone()) stop("redis-server ended before answering PING");
    std::vector<std::string> ping = cli;
    ping.push_back("PING");
    ready = Run(ping, client_env, -1, true).head == "PONG\n";
    if (!ready) usleep(10000);
  }
  if (!ready) stop("redis-server did not answer PING within 10 s");
  Ended bench = Run({kRedisBenchmark, "-h", "127.0.0.1", "-p", p, "-n",
                     std::to_string(s.sys_redis_requests), "-P", "16", "-d",
                     "100", "-q", "-t", "set,get,lpush,lrange_100"},
                    client_env, -1, true);
  if (!bench.ok) stop("redis-benchmark " + bench.what);
  Ended q = Run(cli, client_env, queries, true);
  if (!q.ok) stop("redis-cli " + q.what);
  std::vector<std::string> shutdown = cli;
  shutdown.insert(shutdown.end(), {"SHUTDOWN", "NOSAVE"});
  Run(shutdown, client_env, -1, true);  // the connection just closes
  Ended srv = Wait(&server, 20);
  if (!srv.ok) Fail("redis-server " + srv.what);
  srv.wall_ms = bench.wall_ms;
  srv.digest = q.digest;
  return srv;
}

void RunSystem(const WorkloadInfo& w, const AllocatorInfo& a,
               const ChildArgs& args) {
  const SystemProgram prog = ProgramOf(w.id, args.sizes, true);
  std::vector<std::string> extra;
  if (a.peer != nullptr) {
    const char* preload = std::getenv("LD_PRELOAD");
    if (preload == nullptr || *preload == '\0')
      Fail("no LD_PRELOAD for a drop-in row");
    extra.push_back(std::string("LD_PRELOAD=") + preload);
  } else if (prog.redis) {
    // Debian's redis-server is linked with libjemalloc.so.2: with the C
    // library itself preloaded, its malloc comes first and the glibc row
    // is glibc's.
    Dl_info info;
    if (dladdr(reinterpret_cast<void*>(&free), &info) == 0 ||
        info.dli_fname == nullptr)
      Fail("cannot find the C library's file");
    extra.push_back(std::string("LD_PRELOAD=") + info.dli_fname);
  }
  if (std::strcmp(a.id, "pmr_dropin_pool") == 0)
    extra.push_back("PMR_MALLOC=pool");
  const std::vector<std::string> env = EnvWith(extra);
  const std::vector<std::string> plain = EnvWith({});
  const int in = MemFile("input", prog.input);
  if (in < 0) Fail(std::string("cannot hold the input: ") + strerror(errno));
  std::string dir;
  if (prog.redis) {
    char tmpl[] = "/tmp/pmr-bench-redis-XXXXXX";
    if (mkdtemp(tmpl) == nullptr)
      Fail(std::string("mkdtemp: ") + std::strerror(errno));
    dir = tmpl;
    TempDir() = dir;
  }
  std::vector<double> wall, cpu, rss;
  std::string digest;
  for (int r = 0; r < args.warmup + args.rounds; ++r) {
    const Ended e = prog.redis ? RunRedis(env, plain, args.sizes, dir, in)
                               : RunFiltered(prog, env, in);
    const std::string d = absl::StrFormat("%016x", e.digest);
    if (digest.empty())
      digest = d;
    else if (digest != d)
      digest = "varies";
    if (r < args.warmup) continue;
    wall.push_back(e.wall_ms);
    cpu.push_back(e.cpu_ms);
    rss.push_back(e.rss_kib);
  }
  if (!dir.empty()) rmdir(dir.c_str());  // redis wrote nothing into it
  TempDir().clear();
  close(in);
  EmitMetric("wall_ms", wall);
  EmitMetric("cpu_ms", cpu);
  EmitMetric("peak_rss_kib", rss);
  std::fputs(
      absl::StrFormat("{\"type\":\"output\",\"digest\":\"%s\"}\n", digest)
          .c_str(),
      stdout);
  std::fflush(stdout);
}

}  // namespace

std::vector<WorkloadInfo> SystemWorkloads() {
  std::vector<WorkloadInfo> v;
  for (const char* id : kSystemIds) {
    WorkloadInfo w;
    w.id = id;
    w.title = ProgramTitle(id);
    w.system = true;
    w.metrics = {{"wall_ms", "ms"}, {"cpu_ms", "ms"}, {"peak_rss_kib", "KiB"}};
    w.primary = "wall_ms";
    w.rss_metric = "peak_rss_kib";
    w.unit_label = "ms per run (wall time)";
    w.params = [](const WorkloadInfo& wl, const Sizes& s) {
      return ProgramOf(wl.id, s, false).params;
    };
    w.params_json = [](const WorkloadInfo& wl, const Sizes& s) {
      return ProgramOf(wl.id, s, false).params_json;
    };
    w.notes = [](const WorkloadInfo& wl, const Sizes&) {
      return SystemNotes(wl.id);
    };
    w.missing = [](const WorkloadInfo& wl) { return ProgramMissing(wl.id); };
    w.run = RunSystem;
    v.push_back(std::move(w));
  }
  return v;
}

}  // namespace bench
