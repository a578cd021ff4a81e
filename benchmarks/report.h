// What the parent of //benchmarks:all collects from its children, and the
// ways it reports it: text tables, JSON (--json), Markdown (--markdown), SVG
// (--svg, --svg-dir).
#ifndef PMR_BENCHMARKS_REPORT_H_
#define PMR_BENCHMARKS_REPORT_H_

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "benchmarks/registry.h"

namespace bench {

enum class Status {
  kNotRun,
  kOk,
  kNotInstalled,
  kNotApplicable,
  kSkipped,
  kPreloadFailed,
  kError,
  kMismatch  // SYS: the program's output differs from glibc's
};
const char* StatusName(Status s);  // as written in the JSON

struct Stat {
  std::vector<double> values;  // one per timed round (or per fresh process, D)
  double median = 0, min = 0, max = 0;
  void Finish();  // computes median/min/max
};

struct Cell {
  Status status = Status::kNotRun;
  std::string detail;      // why it is not ok
  bool reference = false;  // not selected by --filter, run for the ratios
  std::map<std::string, Stat> metrics;
  // SYS: the digest of the program's output ("varies" when its rounds
  // disagreed), compared with the glibc_malloc row's.
  std::string output;
};

struct PeerStatus {
  Status status = Status::kNotRun;
  std::string lib;  // the LD_PRELOAD path used
  std::string version;
  std::string malloc_from;  // the library malloc resolved to in the child
  std::string detail;
};

struct RunInfo {
  std::string mode;  // "full", "quick" or "custom"
  double scale = 1;
  int rounds = 3, warmup = 1, d_runs = 3;
  int passes = 3;  // processes per (workload, allocator), interleaved
  std::string filter;
  Sizes sizes = Sizes::Scaled(1.0);
  std::string machine;    // one line
  std::string date;       // when the run started, "YYYY-MM-DD HH:MM UTC"
  std::string sanitizer;  // "" or "asan"/"tsan"
  double load_before = 0;
  double wall_seconds = 0;
  std::vector<bool> selected_workload;  // [w]
  std::vector<std::vector<Cell>>
      cells;  // [w][a], order of Workloads() x Allocators()
  std::map<std::string, PeerStatus> peers;
};

// The ratio of the reference's median to a's median for a metric: > 1 means
// a is faster (or leaner). 0 when either is missing.
double RatioVs(const RunInfo& run, size_t w, size_t a,
               const std::string& metric, const char* ref);

void PrintReport(const RunInfo& run, FILE* out);
bool WriteJson(const RunInfo& run, const std::string& path, std::string* err);
// The summary and every table as a Markdown page (benchmarks/RESULTS.md).
bool WriteMarkdown(const RunInfo& run, const std::string& path,
                   std::string* err);
// One SVG file at path, every selected workload's chart one under another.
bool WriteSvg(const RunInfo& run, const std::string& path, std::string* err);
// One SVG file per workload (dir/A.svg ...) and dir/index.html showing them.
bool WriteSvgDir(const RunInfo& run, const std::string& dir, std::string* err);

}  // namespace bench

#endif  // PMR_BENCHMARKS_REPORT_H_
