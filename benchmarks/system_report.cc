// Benchmark SYS in the report: the output check against glibc's and the
// table of every program x allocator (system.h).
#include <cstring>
#include <string>

#include "absl/strings/str_format.h"
#include "benchmarks/report.h"
#include "benchmarks/system.h"

namespace bench {
namespace {

size_t IndexOf(const char* id) {
  const auto& all = Allocators();
  for (size_t i = 0; i < all.size(); ++i)
    if (std::strcmp(all[i].id, id) == 0) return i;
  return all.size();
}

// A metric's median, measured even when the row's output differed; -1 when
// there is none.
double Median(const Cell& c, const char* metric) {
  if (c.status != Status::kOk && c.status != Status::kMismatch) return -1;
  auto it = c.metrics.find(metric);
  return it == c.metrics.end() || it->second.values.empty() ? -1
                                                            : it->second.median;
}

std::string Ratio(double ref, double mine) {
  return ref > 0 && mine > 0 ? absl::StrFormat("%.2fx", ref / mine) : "-";
}

}  // namespace

void CheckSystemOutputs(RunInfo* run, size_t w) {
  const size_t g = IndexOf("glibc_malloc");
  if (g >= Allocators().size()) return;
  const Cell& ref = run->cells[w][g];
  const bool have_ref = ref.status == Status::kOk && !ref.output.empty() &&
                        ref.output != "varies";
  for (Cell& c : run->cells[w]) {
    if (c.status != Status::kOk) continue;
    if (c.output == "varies") {
      c.status = Status::kMismatch;
      c.detail = "the output differed between its own runs";
    } else if (have_ref && &c != &ref && c.output != ref.output) {
      c.status = Status::kMismatch;
      c.detail = absl::StrFormat("output digest %s, glibc_malloc's %s",
                                 c.output, ref.output);
    }
  }
}

void PrintSystemTable(const RunInfo& run, FILE* out) {
  const auto& wls = Workloads();
  const auto& all = Allocators();
  bool any = false;
  for (size_t w = 0; w < wls.size(); ++w)
    any = any || (wls[w].system && run.selected_workload[w]);
  if (!any) return;
  const size_t g = IndexOf("glibc_malloc"), mi = IndexOf("mimalloc");
  absl::FPrintF(out,
                "\n== SYS: real programs under each malloc (medians; vs X = "
                "X's median / this median, > 1: faster or leaner)\n");
  absl::FPrintF(out, "   %-10s %-16s %5s %9s %19s %9s %8s %8s %8s %8s  %s\n",
                "program", "allocator", "runs", "wall ms", "spread (wall)",
                "cpu ms", "peak MiB", "vs glibc", "vs mimal", "RSS vs g",
                "output");
  for (size_t w = 0; w < wls.size(); ++w) {
    const WorkloadInfo& wl = wls[w];
    if (!wl.system || !run.selected_workload[w]) continue;
    const double g_wall =
        g < all.size() ? Median(run.cells[w][g], "wall_ms") : -1;
    const double g_rss =
        g < all.size() ? Median(run.cells[w][g], "peak_rss_kib") : -1;
    const double m_wall =
        mi < all.size() ? Median(run.cells[w][mi], "wall_ms") : -1;
    const std::string program = wl.id + 4;  // after "SYS-"
    for (size_t a = 0; a < all.size(); ++a) {
      const Cell& c = run.cells[w][a];
      if (c.status == Status::kNotRun || c.status == Status::kNotApplicable)
        continue;
      const double wall = Median(c, "wall_ms");
      if (wall < 0) {
        std::string why = StatusName(c.status);
        if (c.status == Status::kNotInstalled) why = "not installed";
        absl::FPrintF(out, "   %-10s %-16s -- %s%s\n", program, all[a].id, why,
                      c.detail.empty() ? "" : ": " + c.detail.substr(0, 100));
        continue;
      }
      const Stat& ws = c.metrics.at("wall_ms");
      const double rss = Median(c, "peak_rss_kib");
      std::string check = "same as glibc";
      if (a == g)
        check = "reference";
      else if (c.status == Status::kMismatch)
        check = "MISMATCH (digest in its own table)";
      else if (c.output.empty() || Median(run.cells[w][g], "wall_ms") < 0)
        check = "not checked";
      absl::FPrintF(
          out, "   %-10s %-16s %5d %9.1f %19s %9.1f %8.1f %8s %8s %8s  %s\n",
          program, all[a].id, ws.values.size(), wall,
          absl::StrFormat("[%.1f, %.1f]", ws.min, ws.max), Median(c, "cpu_ms"),
          rss / 1024.0, Ratio(g_wall, wall), Ratio(m_wall, wall),
          Ratio(g_rss, rss), check);
    }
  }
  absl::FPrintF(out,
                "   wall: redis = redis-benchmark's run, cpu and peak RSS "
                "its server's; targets (issue #44): vs mimal >= 1, RSS vs g "
                ">= 1, output same as glibc\n");
}

}  // namespace bench
