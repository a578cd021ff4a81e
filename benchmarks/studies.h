// The studies of latency, scaling and fragmentation (latency.cc, scaling.cc,
// fragmentation.cc): workloads of their own (A-lat ..., B-scale, F-scale,
// E-frag, R-frag, Q-frag) that report.cc hands here for their tables, their
// charts and the JSON's "studies" object.
#ifndef PMR_BENCHMARKS_STUDIES_H_
#define PMR_BENCHMARKS_STUDIES_H_

#include <cstdio>
#include <string>

#include "benchmarks/charts.h"
#include "benchmarks/report.h"

namespace bench {

// The table of study workload w (w.study != nullptr).
void PrintStudyTable(const RunInfo& run, size_t w, FILE* out);
// The chart of study workload w.
SvgBlock StudyChart(const RunInfo& run, size_t w);
// ",\n\"studies\": {...}" (cores, the curves and series behind the charts),
// or "" when no study ran.
std::string StudiesJson(const RunInfo& run);

}  // namespace bench

#endif  // PMR_BENCHMARKS_STUDIES_H_
