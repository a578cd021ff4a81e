// The harness of //benchmarks:all (harness.h): the machine's description,
// child processes (RunChild), the progress line, and Measure: which pairs
// run, the drop-in mallocs' check, the passes and the records they collect.
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <regex.h>
#include <spawn.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "benchmarks/harness.h"
#include "benchmarks/json.h"
#include "benchmarks/registry.h"
#include "benchmarks/system.h"

extern char** environ;

namespace bench {
namespace {

std::string SelfExe() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "/proc/self/exe";
  buf[n] = '\0';
  return buf;
}

std::string MachineLine() {
  std::string cpu = "unknown CPU";
  if (FILE* f = std::fopen("/proc/cpuinfo", "r")) {
    char line[512];
    while (std::fgets(line, sizeof line, f) != nullptr) {
      if (std::strncmp(line, "model name", 10) == 0) {
        const char* c = std::strchr(line, ':');
        if (c != nullptr) {
          cpu = c + 2;
          while (!cpu.empty() && (cpu.back() == '\n' || cpu.back() == ' '))
            cpu.pop_back();
        }
        break;
      }
    }
    std::fclose(f);
  }
  utsname u;
  std::string kernel =
      uname(&u) == 0 ? std::string(u.sysname) + " " + u.release : "?";
  return absl::StrFormat(
      "%s, %d cores, %s, glibc %s, libstdc++ %d (%d), gcc %s", cpu,
      sysconf(_SC_NPROCESSORS_ONLN), kernel, gnu_get_libc_version(),
      _GLIBCXX_RELEASE, __GLIBCXX__, __VERSION__);
}

std::string DateLine() {
  const std::time_t now = std::time(nullptr);
  std::tm tm;
  char buf[64];
  if (gmtime_r(&now, &tm) == nullptr ||
      std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", &tm) == 0)
    return "?";
  return buf;
}

const char* SanitizerName() {
#if defined(__SANITIZE_ADDRESS__)
  return "asan";
#elif defined(__SANITIZE_THREAD__)
  return "tsan";
#else
  return "";
#endif
}

struct ChildResult {
  int exit_code = -1;  // -1: killed
  int signal = 0;
  std::vector<std::map<std::string, JsonValue>> lines;
  std::string bad_line;
};

// Runs this binary with args (and LD_PRELOAD=preload when not empty),
// collecting its JSON lines.
ChildResult RunChild(const std::string& exe,
                     const std::vector<std::string>& args,
                     const std::string& preload) {
  ChildResult res;
  std::vector<std::string> env_store;
  for (char** e = environ; *e != nullptr; ++e)
    if (std::strncmp(*e, "LD_PRELOAD=", 11) != 0) env_store.push_back(*e);
  if (!preload.empty()) env_store.push_back("LD_PRELOAD=" + preload);
  std::vector<char*> envp;
  for (auto& s : env_store) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_store = {exe};
  argv_store.insert(argv_store.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : argv_store) argv.push_back(s.data());
  argv.push_back(nullptr);

  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    res.bad_line = "pipe failed";
    return res;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
  pid_t pid = 0;
  const int rc =
      posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    res.bad_line = std::string("spawn failed: ") + std::strerror(rc);
    return res;
  }
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n > 0)
      out.append(buf, static_cast<size_t>(n));
    else if (n == 0 || errno != EINTR)
      break;
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) res.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) res.signal = WTERMSIG(status);
  size_t start = 0;
  while (start < out.size()) {
    size_t end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    const std::string line = out.substr(start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    std::map<std::string, JsonValue> obj;
    if (ParseFlatObject(line, &obj))
      res.lines.push_back(std::move(obj));
    else if (res.bad_line.empty())
      res.bad_line = "unparsable line: " + line.substr(0, 200);
  }
  return res;
}

// The LD_PRELOAD peer that allocator a's children of workload w run under:
// a's own, or, in the paired study, the malloc its rounds take turns with.
const char* PeerOf(const WorkloadInfo& w, const AllocatorInfo& a) {
  if (w.study != nullptr && std::strcmp(w.study, "paired") == 0)
    return "mimalloc";
  return a.peer;
}

std::string Str(const std::map<std::string, JsonValue>& m, const char* key) {
  auto it = m.find(key);
  return it != m.end() && it->second.kind == JsonValue::kString ? it->second.str
                                                                : std::string();
}

std::string ExitText(const ChildResult& r) {
  if (r.signal != 0)
    return absl::StrFormat(
        "child killed by signal %d (%s)", r.signal,
        r.signal == SIGALRM ? "timed out" : strsignal(r.signal));
  if (r.exit_code != 0)
    return absl::StrFormat("child exited with code %d", r.exit_code);
  return r.bad_line;
}

class Progress {
 public:
  Progress(size_t total)
      : total_(total),
        tty_(isatty(STDERR_FILENO)),
        t0_(std::chrono::steady_clock::now()) {}
  void Step(const std::string& what) {
    ++done_;
    const double s = Elapsed();
    const std::string line =
        absl::StrFormat("[%3d/%d] %5.1fs  %s", done_, total_, s, what);
    if (tty_)
      absl::FPrintF(stderr, "\r%-78s", line.substr(0, 78));
    else
      absl::FPrintF(stderr, "%s\n", line);
  }
  void Done() {
    if (tty_) absl::FPrintF(stderr, "\r%-78s\r", "");
  }
  double Elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_)
        .count();
  }

 private:
  size_t total_, done_ = 0;
  bool tty_;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace

int Measure(const Options& o, RunInfo* out) {
  const auto& wls = Workloads();
  const auto& all = Allocators();
  RunInfo& run = *out;
  run.mode = o.quick ? "quick" : "full";
  run.scale = o.scale > 0 ? o.scale : (o.quick ? 0.05 : 1.0);
  run.rounds = o.rounds > 0 ? o.rounds : (o.quick ? 5 : 3);
  run.passes = o.passes > 0 ? o.passes : (o.quick ? 1 : 3);
  run.warmup = o.warmup >= 0 ? o.warmup : 1;
  run.d_runs = o.d_runs > 0 ? o.d_runs : (o.quick ? 1 : 3);
  if (o.scale > 0 || o.rounds > 0 || o.warmup >= 0 || o.d_runs > 0 ||
      o.passes > 0)
    run.mode = o.quick ? "quick+custom" : "custom";
  run.filter = o.filter;
  run.sizes = Sizes::Scaled(run.scale);
  run.machine = MachineLine();
  run.date = DateLine();
  run.sanitizer = SanitizerName();
  double load[1] = {0};
  if (getloadavg(load, 1) == 1) run.load_before = load[0];
  run.cells.assign(wls.size(), std::vector<Cell>(all.size()));
  run.selected_workload.assign(wls.size(), false);
  const std::string exe = SelfExe();
  const int timeout = std::max(60, static_cast<int>(300 * run.scale));

  // Which pairs: the filter, plus the references the ratios need.
  regex_t re;
  const int rerr = regcomp(&re, o.filter.empty() ? "." : o.filter.c_str(),
                           REG_EXTENDED | REG_NOSUB);
  if (rerr != 0) {
    char msg[256];
    regerror(rerr, &re, msg, sizeof msg);
    absl::FPrintF(stderr, "bad --filter: %s\n", msg);
    return 2;
  }
  auto matches = [&re](const std::string& key) {
    return regexec(&re, key.c_str(), 0, nullptr, 0) == 0;
  };
  for (size_t w = 0; w < wls.size(); ++w) {
    for (size_t a = 0; a < all.size(); ++a) {
      const std::string key = std::string(wls[w].id) + "/" + all[a].id;
      if (!matches(key)) continue;
      run.selected_workload[w] = true;
      run.cells[w][a].status =
          Status::kOk;  // selected; the real status comes below
      // H: pmr-c rows are also compared with absl::flat_hash_map.
      const char* extra =
          all[a].family == Family::kPmr ? wls[w].extra_ref : nullptr;
      for (const char* ref : {"glibc_malloc", all[a].std_counterpart, extra}) {
        if (ref == nullptr) continue;
        for (size_t r = 0; r < all.size(); ++r) {
          if (std::strcmp(all[r].id, ref) == 0 &&
              run.cells[w][r].status == Status::kNotRun) {
            run.cells[w][r].status = Status::kOk;
            run.cells[w][r].reference = true;
          }
        }
      }
    }
  }
  // A reference that the filter also selects on its own is not "reference
  // only".
  for (size_t w = 0; w < wls.size(); ++w)
    for (size_t a = 0; a < all.size(); ++a)
      if (run.cells[w][a].reference &&
          matches(std::string(wls[w].id) + "/" + all[a].id))
        run.cells[w][a].reference = false;
  regfree(&re);
  bool any = false;
  for (bool s : run.selected_workload) any = any || s;
  if (!any) {
    absl::FPrintF(
        stderr, "--filter=%s matches no WORKLOAD/ALLOCATOR pair (see --list)\n",
        o.filter);
    return 2;
  }

  // Peers: installed? preload really active?
  std::map<std::string, std::string> lib_override(o.peer_libs.begin(),
                                                  o.peer_libs.end());
  for (const PeerInfo& peer : Peers()) {
    bool needed = false;
    for (size_t w = 0; w < wls.size(); ++w)
      for (size_t a = 0; a < all.size(); ++a)
        needed = needed || (PeerOf(wls[w], all[a]) != nullptr &&
                            peer.name == std::string(PeerOf(wls[w], all[a])) &&
                            run.cells[w][a].status != Status::kNotRun);
    if (!needed) continue;
    PeerStatus ps;
    std::vector<std::string> candidates;
    auto it = lib_override.find(peer.name);
    if (it != lib_override.end())
      candidates.push_back(it->second);
    else
      for (const char* l : peer.libs) candidates.push_back(l);
    for (const auto& c : candidates)
      if (ps.lib.empty() && access(c.c_str(), R_OK) == 0) ps.lib = c;
    if (!run.sanitizer.empty()) {
      ps.status = Status::kSkipped;
      ps.detail = run.sanitizer +
                  " build: the sanitizer owns malloc, a preloaded malloc "
                  "cannot be measured";
    } else if (ps.lib.empty()) {
      ps.status = Status::kNotInstalled;
      std::string list;
      for (const auto& c : candidates) list += (list.empty() ? "" : ", ") + c;
      ps.detail = "no " + list;
    } else {
      ChildResult r = RunChild(
          exe,
          {"--child", "--probe", "--expect-peer=" + std::string(peer.name)},
          ps.lib);
      ps.status = Status::kPreloadFailed;
      ps.detail = ExitText(r);
      for (const auto& line : r.lines) {
        if (Str(line, "type") != "malloc") continue;
        ps.malloc_from = Str(line, "from");
        ps.version = Str(line, "version");
        auto act = line.find("active");
        if (act != line.end() && act->second.kind == JsonValue::kBool &&
            act->second.b && r.exit_code == 0) {
          ps.status = Status::kOk;
          ps.detail.clear();
        } else {
          ps.detail = Str(line, "detail");
          if (ps.detail.empty())
            ps.detail = "malloc resolves to " + ps.malloc_from;
        }
      }
      if (ps.status == Status::kPreloadFailed)
        ps.detail = "LD_PRELOAD=" + ps.lib + ": " + ps.detail;
    }
    run.peers[peer.name] = ps;
  }

  // Statuses that need no run; count the runs.
  size_t jobs = 0;
  for (size_t w = 0; w < wls.size(); ++w) {
    for (size_t a = 0; a < all.size(); ++a) {
      Cell& c = run.cells[w][a];
      if (c.status == Status::kNotRun) continue;
      std::string why;
      if (!Applicable(wls[w], all[a], &why)) {
        c.status = Status::kNotApplicable;
        c.detail = why;
      } else if (PeerOf(wls[w], all[a]) != nullptr &&
                 run.peers[PeerOf(wls[w], all[a])].status != Status::kOk) {
        const PeerStatus& ps = run.peers[PeerOf(wls[w], all[a])];
        c.status = ps.status;
        c.detail = ps.detail;
      } else if (wls[w].missing != nullptr &&
                 !(why = wls[w].missing(wls[w])).empty()) {
        c.status = Status::kNotInstalled;
        c.detail = why;
      } else {
        jobs += wls[w].memory ? run.d_runs : run.passes;
      }
    }
  }

  absl::FPrintF(stderr,
                "pmr-c benchmarks: %d measurements (%s mode, scale %g); "
                "results on stdout\n",
                jobs, run.mode, run.scale);
  Progress progress(jobs);
  for (size_t w = 0; w < wls.size(); ++w) {
    const WorkloadInfo& wl = wls[w];
    // Passes: every allocator once per pass, in reverse order every other
    // pass, so a slow spell of the machine falls on all of them alike.
    const int passes = wl.memory ? 1 : run.passes;
    for (int pass = 0; pass < passes; ++pass) {
      for (size_t i = 0; i < all.size(); ++i) {
        const size_t a = pass % 2 == 0 ? i : all.size() - 1 - i;
        Cell& c = run.cells[w][a];
        if (c.status != Status::kOk) continue;
        const AllocatorInfo& ai = all[a];
        // --quick runs each SYS program once per allocator.
        const bool once = wl.memory || (wl.system && o.quick);
        std::vector<std::string> args = {
            "--child",
            std::string("--workload=") + wl.id,
            std::string("--alloc=") + ai.id,
            absl::StrFormat("--scale=%.17g", run.scale),
            absl::StrFormat("--rounds=%d", once ? 1 : run.rounds),
            absl::StrFormat("--warmup=%d", once ? 0 : run.warmup),
            absl::StrFormat("--timeout=%d", timeout)};
        std::string preload;
        if (const char* peer = PeerOf(wl, ai)) {
          args.push_back(std::string("--expect-peer=") + peer);
          preload = run.peers[peer].lib;
        }
        const int procs = wl.memory ? run.d_runs : 1;
        for (int p = 0; p < procs && c.status == Status::kOk; ++p) {
          progress.Step(absl::StrFormat("%-3s %s", wl.id, ai.id));
          ChildResult r = RunChild(exe, args, preload);
          bool done = false;
          std::string child_error;
          for (const auto& line : r.lines) {
            const std::string type = Str(line, "type");
            if (type == "metric") {
              auto v = line.find("values");
              if (v != line.end()) {
                auto& dst = c.metrics[Str(line, "metric")].values;
                dst.insert(dst.end(), v->second.arr.begin(),
                           v->second.arr.end());
              }
            } else if (type == "done") {
              done = true;
            } else if (type == "output") {
              const std::string d = Str(line, "digest");
              if (c.output.empty())
                c.output = d;
              else if (c.output != d)
                c.output = "varies";
            } else if (type == "error") {
              child_error = Str(line, "detail");
            } else if (type == "malloc" && PeerOf(wl, ai) != nullptr) {
              auto act = line.find("active");
              if (act == line.end() || !act->second.b) {
                c.status = Status::kPreloadFailed;
                c.detail = Str(line, "detail");
              }
            }
          }
          if (c.status == Status::kOk &&
              (!done || r.exit_code != 0 || !r.bad_line.empty())) {
            c.status =
                r.exit_code == 3 ? Status::kPreloadFailed : Status::kError;
            c.detail = ExitText(r);
            if (!child_error.empty()) c.detail += ": " + child_error;
            if (c.detail.empty()) c.detail = "child printed no result";
          }
        }
      }
    }
    for (size_t a = 0; a < all.size(); ++a)
      for (auto& [name, stat] : run.cells[w][a].metrics) stat.Finish();
    if (wl.system) CheckSystemOutputs(&run, w);
  }
  progress.Done();
  run.wall_seconds = progress.Elapsed();
  return 0;
}

}  // namespace bench
