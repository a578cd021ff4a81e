// bazel run //benchmarks:all [-- --quick --json=FILE --svg=FILE --filter=REGEX]
//
// Compares pmr-c's resources with glibc malloc, jemalloc, tcmalloc and
// mimalloc (drop-in, via LD_PRELOAD), std::pmr and the seed articles' naive
// baselines on workloads A..G, and pmr-c's containers with std's (and
// absl::flat_hash_map) on the container workloads V, H, S over the same
// resources (see benchmarks/README.md). The parent process
// only orchestrates: every measurement runs in a fresh child process (this
// same binary, re-executed with --child), which prints JSON lines that the
// parent collects into tables, JSON and SVG charts. This file is the command
// line; harness.cc runs the measurements, report*.cc writes the results.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "benchmarks/child.h"
#include "benchmarks/harness.h"
#include "benchmarks/registry.h"
#include "benchmarks/report.h"

namespace bench {
namespace {

constexpr char kUsage[] =
    "usage: bazel run //benchmarks:all -- [options]\n"
    "  --quick            the whole suite at 1/20 size (CI / smoke test, under "
    "30 s)\n"
    "  --json=FILE        write every result (schema: benchmarks/README.md)\n"
    "  --markdown=FILE    write the summary and every table as Markdown\n"
    "                     (benchmarks/RESULTS.md summarises one)\n"
    "  --svg=FILE         write every workload's bar chart into one SVG file\n"
    "  --svg-dir=DIR      write one bar chart per workload (DIR/A.svg ...) and "
    "DIR/index.html\n"
    "  --filter=REGEX     run only pairs whose \"WORKLOAD/ALLOCATOR\" matches "
    "(POSIX extended regex,\n"
    "                     as grep -E), e.g. '^G/', 'pool', '^(A|E)/pmr_'; "
    "glibc_malloc, the\n"
    "                     std::pmr counterpart and the workload's third-party "
    "reference\n"
    "                     (absl_flat_hash_map in H and H-str, glib_ghashtable "
    "in W) still run\n"
    "                     (marked *) so the ratios exist\n"
    "  --scale=F          multiply the problem sizes by F (full: 1, --quick: "
    "0.05)\n"
    "  --passes=N         processes per measurement, each pass running every "
    "allocator\n"
    "                     once, in reverse order every other pass (default 3, "
    "--quick 1)\n"
    "  --rounds=N         timed rounds per process (default 3, --quick 5)\n"
    "  --warmup=N         untimed rounds first, in each process (default 1)\n"
    "  --d-processes=N    fresh processes for workload D (default 3, --quick "
    "1)\n"
    "  --peer-lib=NAME=PATH  use PATH as the LD_PRELOAD library of peer NAME\n"
    "                     (jemalloc, tcmalloc, mimalloc, pmr_dropin: "
    "libpmr_malloc.so);\n"
    "                     a missing PATH reports \"not installed\"\n"
    "  --list             list workloads and allocators, then exit\n"
    "Relative paths are taken from the directory bazel run was started in.\n";

bool ParseInt(const std::string& s, int* out) {
  char* end = nullptr;
  long v = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || v < 0 || v > 1000000) return false;
  *out = static_cast<int>(v);
  return true;
}

bool ParseDouble(const std::string& s, double* out) {
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !(v > 0) || v > 100) return false;
  *out = v;
  return true;
}

bool ParseArgs(int argc, char** argv, Options* o, std::string* err) {
  static const char* kValued[] = {
      "json",   "markdown", "svg",    "svg-dir",     "filter",
      "scale",  "rounds",   "warmup", "d-processes", "peer-lib",
      "passes", "workload", "alloc",  "expect-peer", "timeout"};
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) {
      *err = "unexpected argument: " + arg;
      return false;
    }
    std::string name = arg.substr(2), value;
    bool has_value = false;
    const size_t eq = name.find('=');
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    bool valued = false;
    for (const char* v : kValued) valued = valued || name == v;
    if (valued && !has_value) {
      if (i + 1 >= argc) {
        *err = "--" + name + " needs a value";
        return false;
      }
      value = argv[++i];
      has_value = true;
    }
    if (!valued && has_value) {
      *err = "--" + name + " takes no value";
      return false;
    }
    bool ok = true;
    if (name == "quick")
      o->quick = true;
    else if (name == "list")
      o->list = true;
    else if (name == "help" || name == "h")
      o->help = true;
    else if (name == "json")
      o->json = value;
    else if (name == "markdown")
      o->markdown = value;
    else if (name == "svg")
      o->svg = value;
    else if (name == "svg-dir")
      o->svg_dir = value;
    else if (name == "filter")
      o->filter = value;
    else if (name == "scale")
      ok = ParseDouble(value, &o->scale);
    else if (name == "rounds")
      ok = ParseInt(value, &o->rounds) && o->rounds >= 1;
    else if (name == "warmup")
      ok = ParseInt(value, &o->warmup);
    else if (name == "passes")
      ok = ParseInt(value, &o->passes) && o->passes >= 1;
    else if (name == "d-processes")
      ok = ParseInt(value, &o->d_runs) && o->d_runs >= 1;
    else if (name == "peer-lib") {
      const size_t e = value.find('=');
      ok = e != std::string::npos && FindPeer(value.substr(0, e)) != nullptr;
      if (ok)
        o->peer_libs.emplace_back(value.substr(0, e), value.substr(e + 1));
    }
    // Internal: the child side.
    else if (name == "child")
      o->child = true;
    else if (name == "probe")
      o->child_args.probe = true;
    else if (name == "workload")
      o->child_args.workload = value;
    else if (name == "alloc")
      o->child_args.allocator = value;
    else if (name == "expect-peer")
      o->child_args.expect_peer = value;
    else if (name == "timeout")
      ok = ParseInt(value, &o->child_args.timeout_s);
    else {
      *err = "unknown option --" + name;
      return false;
    }
    if (!ok) {
      *err = "bad value for --" + name + ": " + value;
      return false;
    }
  }
  return true;
}

// A relative path given to `bazel run` means relative to where the user was.
std::string UserPath(const std::string& p) {
  if (p.empty() || p[0] == '/') return p;
  const char* wd = std::getenv("BUILD_WORKING_DIRECTORY");
  return wd != nullptr && *wd ? std::string(wd) + "/" + p : p;
}

int ParentMain(const Options& o) {
  const auto& wls = Workloads();
  const auto& all = Allocators();
  RunInfo run;
  if (const int rc = Measure(o, &run); rc != 0) return rc;

  PrintReport(run, stdout);
  std::fflush(stdout);
  int rc = 0;
  if (!o.json.empty()) {
    std::string err;
    const std::string path = UserPath(o.json);
    if (WriteJson(run, path, &err)) {
      absl::FPrintF(stderr, "JSON written to %s\n", path);
    } else {
      absl::FPrintF(stderr, "cannot write JSON: %s\n", err);
      rc = 1;
    }
  }
  if (!o.markdown.empty()) {
    std::string err;
    const std::string path = UserPath(o.markdown);
    if (WriteMarkdown(run, path, &err)) {
      absl::FPrintF(stderr, "Markdown written to %s\n", path);
    } else {
      absl::FPrintF(stderr, "cannot write Markdown: %s\n", err);
      rc = 1;
    }
  }
  if (!o.svg.empty()) {
    std::string err;
    const std::string path = UserPath(o.svg);
    if (WriteSvg(run, path, &err)) {
      absl::FPrintF(stderr, "SVG charts written to %s\n", path);
    } else {
      absl::FPrintF(stderr, "cannot write SVG: %s\n", err);
      rc = 1;
    }
  }
  if (!o.svg_dir.empty()) {
    std::string err;
    const std::string dir = UserPath(o.svg_dir);
    if (WriteSvgDir(run, dir, &err)) {
      absl::FPrintF(stderr, "SVG charts written to %s/ (open %s/index.html)\n",
                    dir, dir);
    } else {
      absl::FPrintF(stderr, "cannot write SVG: %s\n", err);
      rc = 1;
    }
  }
  for (size_t w = 0; w < wls.size(); ++w)
    for (size_t a = 0; a < all.size(); ++a)
      if (run.cells[w][a].status == Status::kError ||
          run.cells[w][a].status == Status::kMismatch)
        rc = 1;  // a crashed or wrong measurement fails the run
  return rc;
}

void List() {
  absl::PrintF("workloads:\n");
  const Sizes s = Sizes::Scaled(1.0);
  for (const auto& w : Workloads())
    absl::PrintF("  %-3s %s\n      %s\n", w.id, w.title, WorkloadParams(w, s));
  absl::PrintF("allocators:\n");
  for (const auto& a : Allocators())
    absl::PrintF("  %-22s %-14s %s%s\n", a.id, FamilyName(a.family), a.what,
                 a.thread_safe ? " [thread-safe]" : "");
}

}  // namespace
}  // namespace bench

int main(int argc, char** argv) {
  bench::Options o;
  std::string err;
  if (!bench::ParseArgs(argc, argv, &o, &err)) {
    absl::FPrintF(stderr, "%s\n%s", err, bench::kUsage);
    return 2;
  }
  if (o.help) {
    absl::PrintF("%s", bench::kUsage);
    return 0;
  }
  if (o.list) {
    bench::List();
    return 0;
  }
  if (o.child) {
    o.child_args.sizes = bench::Sizes::Scaled(o.scale > 0 ? o.scale : 1.0);
    o.child_args.rounds = o.rounds > 0 ? o.rounds : 5;
    o.child_args.warmup = o.warmup >= 0 ? o.warmup : 1;
    return bench::ChildMain(o.child_args);
  }
  return bench::ParentMain(o);
}
