// Internal to the report (the report_*.cc files and studies.cc): the helpers
// they share (report.cc defines them). The report's interface is report.h.
#ifndef PMR_BENCHMARKS_REPORT_COMMON_H_
#define PMR_BENCHMARKS_REPORT_COMMON_H_

#include <cstddef>
#include <cstdio>
#include <string>

#include "benchmarks/registry.h"
#include "benchmarks/report.h"

namespace bench {

// "3 processes x 3, interleaved" / "1 process".
std::string ProcessesText(const RunInfo& run);
// The unit of a workload's primary metric ("ns", "ms").
std::string PrimaryUnit(const WorkloadInfo& wl);
bool WriteFile(const std::string& path, const std::string& text,
               std::string* err);
// The index of allocator id in Allocators(); Allocators().size() if none.
size_t AllocIndex(const char* id);
// A metric of an ok cell that has values; nullptr otherwise.
const Stat* Find(const Cell& c, const std::string& metric);
// Prose wrapped at spaces into lines of at most `width` columns (report.cc).
std::string Wrap(const std::string& first, const std::string& text,
                 const std::string& indent, size_t width = 110);
// 3 significant-ish digits for times that span 0.5 ns to microseconds.
std::string Num(double v);
std::string Ratio(double r);
// "2.10x faster" / "1.50x slower" (memory: leaner / larger) for a ratio
// ref/this.
std::string Compare(double r, bool memory);
std::string ShortStd(const char* id);
std::string Mib(double kib);
// The line under every chart: machine, date, mode and scale.
std::string ChartFooter(const RunInfo& run);
std::string NotOkText(const Cell& c);
// Workload w's peak memory under allocator a (KiB); -1 when not measured.
double MemoryOf(const RunInfo& run, size_t w, size_t a);
// The pmr-c resource to use for workload w: the fastest (D: leanest) whose
// peak memory is at most max(2 x glibc's, glibc's + 16 MiB). npos if none.
size_t Pick(const RunInfo& run, size_t w);
size_t FastestOf(const RunInfo& run, size_t w, bool malloc_only);

// The text report's parts (report_tables.cc), also in the Markdown page.
// The run's header: mode, machine, date, notes, the drop-in mallocs found,
// the allocators' legend.
void PrintHeader(const RunInfo& run, FILE* out);
// Workload w's table of every allocator.
void PrintTable(const RunInfo& run, size_t w, FILE* out);
// Which resource for which workload.
void PrintSummary(const RunInfo& run, FILE* out);

}  // namespace bench

#endif  // PMR_BENCHMARKS_REPORT_COMMON_H_
