// The Markdown page (report.h, WriteMarkdown; benchmarks/RESULTS.md).
#include <stdio.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/strings/str_format.h"
#include "benchmarks/report_common.h"
#include "benchmarks/studies.h"
#include "benchmarks/system.h"

namespace bench {

bool WriteMarkdown(const RunInfo& run, const std::string& path,
                   std::string* err) {
  char* buf = nullptr;
  size_t len = 0;
  FILE* mem = open_memstream(&buf, &len);
  if (mem == nullptr) {
    *err = std::string("open_memstream: ") + std::strerror(errno);
    return false;
  }
  absl::FPrintF(mem,
                "# Benchmark results\n\n"
                "<!-- Written by `bazel run -c opt //benchmarks:all -- "
                "--markdown=PATH`; a new run replaces it. -->\n\n"
                "The latest run of the comparison described in "
                "[README.md](README.md) (workloads, allocators, method, how "
                "to read the tables): %s, %s; mode %s, scale %g, %d timed "
                "rounds (%s) after %d warm-up each; %.1f s.\n\n",
                run.date, run.machine, run.mode, run.scale,
                run.rounds * run.passes, ProcessesText(run), run.warmup,
                run.wall_seconds);
  absl::FPrintF(mem, "## Which resource for which workload\n\n```text");
  PrintSummary(run, mem);
  absl::FPrintF(mem, "```\n\n## Every workload\n\n```text\n");
  PrintHeader(run, mem);
  const auto& wls = Workloads();
  for (size_t w = 0; w < wls.size(); ++w)
    if (run.selected_workload[w])
      (wls[w].study ? PrintStudyTable : PrintTable)(run, w, mem);
  PrintSystemTable(run, mem);
  absl::FPrintF(mem, "```\n");
  std::fclose(mem);
  std::string text(buf, len);
  std::free(buf);
  return WriteFile(path, text, err);
}

}  // namespace bench
