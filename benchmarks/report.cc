// Statuses and statistics of report.h, and the helpers the report_*.cc
// files share (report_common.h).
#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_format.h"
#include "benchmarks/report_common.h"

namespace bench {

const char* StatusName(Status s) {
  switch (s) {
    case Status::kNotRun:
      return "not_run";
    case Status::kOk:
      return "ok";
    case Status::kNotInstalled:
      return "not_installed";
    case Status::kNotApplicable:
      return "not_applicable";
    case Status::kSkipped:
      return "skipped";
    case Status::kPreloadFailed:
      return "preload_failed";
    case Status::kError:
      return "error";
    case Status::kMismatch:
      return "output_mismatch";
  }
  return "?";
}

void Stat::Finish() {
  if (values.empty()) return;
  std::vector<double> v = values;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  min = v.front();
  max = v.back();
}

// "3 processes x 3, interleaved" / "1 process".
std::string ProcessesText(const RunInfo& run) {
  if (run.passes == 1) return "1 process";
  return absl::StrFormat("%d processes x %d, interleaved", run.passes,
                         run.rounds);
}

// The unit of a workload's primary metric ("ns", "ms").
std::string PrimaryUnit(const WorkloadInfo& wl) {
  for (const MetricInfo& m : wl.metrics)
    if (std::strcmp(m.id, wl.primary) == 0) return m.unit;
  return "ns";
}

bool WriteFile(const std::string& path, const std::string& text,
               std::string* err) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    *err = path + ": " + std::strerror(errno);
    return false;
  }
  const bool ok = std::fputs(text.c_str(), f) >= 0 && std::fflush(f) == 0;
  if (std::fclose(f) != 0 || !ok) {
    *err = path + ": write failed";
    return false;
  }
  return true;
}

size_t AllocIndex(const char* id) {
  const auto& all = Allocators();
  for (size_t i = 0; i < all.size(); ++i)
    if (std::strcmp(all[i].id, id) == 0) return i;
  return all.size();
}

const Stat* Find(const Cell& c, const std::string& metric) {
  if (c.status != Status::kOk) return nullptr;
  auto it = c.metrics.find(metric);
  if (it == c.metrics.end() || it->second.values.empty()) return nullptr;
  return &it->second;
}

// The text report stays readable in a 160-column terminal (the tables are
// narrower): prose such as a workload's parameters is wrapped at spaces into
// lines of at most `width` columns, each after `indent` (the first line
// after `first`, which has the same width). The JSON keeps each text whole.
std::string Wrap(const std::string& first, const std::string& text,
                 const std::string& indent, size_t width) {
  std::string out = first, line;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(' ', pos);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(pos, end - pos);
    const size_t room = width - std::min(width - 20, indent.size());
    if (!line.empty() && line.size() + 1 + word.size() > room) {
      out += line + "\n" + indent;
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    pos = end + 1;
  }
  return out + line;
}

// 3 significant-ish digits for times that span 0.5 ns to microseconds.
std::string Num(double v) {
  if (v < 10) return absl::StrFormat("%.2f", v);
  if (v < 1000) return absl::StrFormat("%.1f", v);
  return absl::StrFormat("%.0f", v);
}

std::string Ratio(double r) {
  return r > 0 ? absl::StrFormat("%.2fx", r) : "-";
}

// "2.10x faster" / "1.50x slower" (memory: leaner / larger) for a ratio
// ref/this.
std::string Compare(double r, bool memory) {
  if (r >= 1)
    return absl::StrFormat("%.2fx %s", r, memory ? "leaner" : "faster");
  return absl::StrFormat("%.2fx %s", 1 / r, memory ? "larger" : "slower");
}

std::string ShortStd(const char* id) {
  return std::strncmp(id, "std_", 4) == 0 ? id + 4 : id;
}

std::string ChartFooter(const RunInfo& run) {
  return absl::StrFormat("%s; %s; mode %s, scale %g", run.machine, run.date,
                         run.mode, run.scale);
}

std::string Mib(double kib) { return absl::StrFormat("%.1f", kib / 1024.0); }

std::string NotOkText(const Cell& c) {
  switch (c.status) {
    case Status::kNotInstalled:
      return "not installed" + (c.detail.empty() ? "" : " (" + c.detail + ")");
    case Status::kSkipped:
      return "skipped: " + c.detail;
    case Status::kPreloadFailed:
      return "PRELOAD FAILED: " + c.detail;
    case Status::kError:
      return "ERROR: " + c.detail;
    case Status::kMismatch:
      return "OUTPUT MISMATCH: " + c.detail;
    default:
      return StatusName(c.status);
  }
}

double MemoryOf(const RunInfo& run, size_t w, size_t a) {
  const WorkloadInfo& wl = Workloads()[w];
  const Stat* s =
      Find(run.cells[w][a], wl.memory ? "peak_rss_kib" : wl.rss_metric);
  return s ? s->median : -1;
}

// The pmr-c resource to use for workload w: the fastest (D: leanest) whose
// peak memory is at most max(2 x glibc's, glibc's + 16 MiB). npos if none.
size_t Pick(const RunInfo& run, size_t w) {
  const WorkloadInfo& wl = Workloads()[w];
  const auto& all = Allocators();
  const double glibc_mem = MemoryOf(run, w, AllocIndex("glibc_malloc"));
  size_t best = all.size();
  double best_v = 0;
  for (size_t a = 0; a < all.size(); ++a) {
    if (all[a].family != Family::kPmr) continue;
    const Stat* s = Find(run.cells[w][a], wl.primary);
    if (s == nullptr) continue;
    const double mem = MemoryOf(run, w, a);
    if (!wl.memory && glibc_mem >= 0 &&
        mem > std::max(2 * glibc_mem, glibc_mem + 16 * 1024))
      continue;
    if (best == all.size() || s->median < best_v) {
      best = a;
      best_v = s->median;
    }
  }
  return best;
}

size_t FastestOf(const RunInfo& run, size_t w, bool malloc_only) {
  const WorkloadInfo& wl = Workloads()[w];
  const auto& all = Allocators();
  size_t best = all.size();
  double best_v = 0;
  for (size_t a = 0; a < all.size(); ++a) {
    if (malloc_only && all[a].family != Family::kMalloc) continue;
    if (all[a].family == Family::kReference) continue;  // a floor, not a choice
    const Stat* s = Find(run.cells[w][a], wl.primary);
    if (s == nullptr) continue;
    if (best == all.size() || s->median < best_v) {
      best = a;
      best_v = s->median;
    }
  }
  return best;
}

double RatioVs(const RunInfo& run, size_t w, size_t a,
               const std::string& metric, const char* ref) {
  const size_t r = AllocIndex(ref);
  if (r >= Allocators().size()) return 0;
  const Stat* mine = Find(run.cells[w][a], metric);
  const Stat* theirs = Find(run.cells[w][r], metric);
  if (mine == nullptr || theirs == nullptr || mine->median <= 0 ||
      theirs->median <= 0)
    return 0;
  return theirs->median / mine->median;
}

}  // namespace bench
