// The JSON file (report.h, WriteJson; schema: benchmarks/README.md).
#include <cerrno>
#include <cstring>
#include <string>

#include "absl/strings/str_format.h"
#include "benchmarks/json.h"
#include "benchmarks/report_common.h"
#include "benchmarks/studies.h"

namespace bench {

bool WriteJson(const RunInfo& run, const std::string& path, std::string* err) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    *err = path + ": " + std::strerror(errno);
    return false;
  }
  const auto& all = Allocators();
  const auto& wls = Workloads();
  absl::FPrintF(f, "{\n\"schema\": \"pmr-c-benchmarks/1\",\n");
  absl::FPrintF(
      f,
      "\"run\": {\"mode\": %s, \"scale\": %s, \"rounds\": %d, "
      "\"passes\": %d, \"warmup\": %d, \"d_processes\": %d, "
      "\"filter\": %s, \"machine\": %s, \"date\": %s, \"sanitizer\": %s, "
      "\"load_average_before\": %s, "
      "\"wall_seconds\": %s},\n",
      JsonString(run.mode), JsonNumber(run.scale), run.rounds, run.passes,
      run.warmup, run.d_runs, JsonString(run.filter), JsonString(run.machine),
      JsonString(run.date), JsonString(run.sanitizer),
      JsonNumber(run.load_before), JsonNumber(run.wall_seconds));
  absl::FPrintF(f, "\"peers\": {");
  bool first = true;
  for (const auto& [name, ps] : run.peers) {
    absl::FPrintF(f,
                  "%s\n  %s: {\"status\": %s, \"lib\": %s, \"version\": %s, "
                  "\"malloc_from\": %s, \"detail\": %s}",
                  first ? "" : ",", JsonString(name),
                  JsonString(StatusName(ps.status)), JsonString(ps.lib),
                  JsonString(ps.version), JsonString(ps.malloc_from),
                  JsonString(ps.detail));
    first = false;
  }
  absl::FPrintF(f, "},\n\"workloads\": {");
  first = true;
  for (size_t w = 0; w < wls.size(); ++w) {
    if (!run.selected_workload[w]) continue;
    const WorkloadInfo& wl = wls[w];
    absl::FPrintF(f,
                  "%s\n  %s: {\"title\": %s, \"description\": %s, \"params\": "
                  "%s, \"primary_metric\": %s}",
                  first ? "" : ",", JsonString(wl.id), JsonString(wl.title),
                  JsonString(WorkloadParams(wl, run.sizes)),
                  WorkloadParamsJson(wl, run.sizes), JsonString(wl.primary));
    first = false;
  }
  absl::FPrintF(f, "},\n\"allocators\": {");
  for (size_t a = 0; a < all.size(); ++a) {
    const AllocatorInfo& ai = all[a];
    absl::FPrintF(f,
                  "%s\n  %s: {\"family\": %s, \"call\": %s, \"thread_safe\": "
                  "%s, \"bump\": %s, "
                  "\"std_counterpart\": %s, \"description\": %s}",
                  a ? "," : "", JsonString(ai.id),
                  JsonString(FamilyName(ai.family)), JsonString(ai.iface),
                  ai.thread_safe ? "true" : "false", ai.bump ? "true" : "false",
                  ai.std_counterpart ? JsonString(ai.std_counterpart) : "null",
                  JsonString(ai.what));
  }
  absl::FPrintF(f, "},\n\"results\": [");
  first = true;
  for (size_t w = 0; w < wls.size(); ++w) {
    if (!run.selected_workload[w]) continue;
    const WorkloadInfo& wl = wls[w];
    for (size_t a = 0; a < all.size(); ++a) {
      const Cell& c = run.cells[w][a];
      if (c.status == Status::kNotRun) continue;
      const AllocatorInfo& ai = all[a];
      for (const MetricInfo& m : wl.metrics) {
        const Stat* s = Find(c, m.id);
        std::string values = "[";
        if (s != nullptr)
          for (size_t i = 0; i < s->values.size(); ++i)
            values += (i ? "," : "") + JsonNumber(s->values[i]);
        values += "]";
        auto num_or_null = [&](double v) {
          return s != nullptr ? JsonNumber(v) : std::string("null");
        };
        auto ratio_or_null = [&](const char* ref) {
          if (ref == nullptr) return std::string("null");
          const double r = RatioVs(run, w, a, m.id, ref);
          return r > 0 ? JsonNumber(r) : std::string("null");
        };
        absl::FPrintF(
            f,
            "%s\n{\"workload\": %s, \"allocator\": %s, \"metric\": %s, "
            "\"unit\": %s, \"status\": %s, "
            "\"detail\": %s, \"reference_only\": %s, \"sharing\": %s, "
            "\"container\": %s, \"median\": %s, "
            "\"min\": %s, \"max\": %s, "
            "\"values\": %s, \"vs_glibc\": %s, \"std_counterpart\": %s, "
            "\"vs_std\": %s, \"vs_mimalloc\": %s, \"output\": %s}",
            first ? "" : ",", JsonString(wl.id), JsonString(ai.id),
            JsonString(m.id), JsonString(m.unit),
            JsonString(StatusName(c.status)), JsonString(c.detail),
            c.reference ? "true" : "false", JsonString(Sharing(wl, ai)),
            JsonString(ContainerOf(wl, ai)), num_or_null(s ? s->median : 0),
            num_or_null(s ? s->min : 0), num_or_null(s ? s->max : 0), values,
            ratio_or_null("glibc_malloc"),
            ai.std_counterpart ? JsonString(ai.std_counterpart) : "null",
            ratio_or_null(ai.std_counterpart), ratio_or_null("mimalloc"),
            JsonString(c.output));
        first = false;
      }
    }
  }
  absl::FPrintF(f, "\n]%s\n}\n", StudiesJson(run));
  const bool ok = std::fflush(f) == 0 && !std::ferror(f);
  if (std::fclose(f) != 0 || !ok) {
    *err = path + ": write failed";
    return false;
  }
  return true;
}

}  // namespace bench
