// The parent of //benchmarks:all: runs every selected (workload, allocator)
// pair in fresh child processes (this binary re-executed with --child), pass
// after pass, and collects their JSON lines into a RunInfo (report.h). The
// command line is main.cc's; the reports are report*.cc's.
#ifndef PMR_BENCHMARKS_HARNESS_H_
#define PMR_BENCHMARKS_HARNESS_H_

#include <string>
#include <utility>
#include <vector>

#include "benchmarks/child.h"
#include "benchmarks/report.h"

namespace bench {

// The command line (main.cc parses it).
struct Options {
  bool quick = false, list = false, help = false, child = false;
  std::string json, markdown, svg, svg_dir, filter;
  double scale = -1;
  int rounds = -1, warmup = -1, d_runs = -1, passes = -1;
  std::vector<std::pair<std::string, std::string>> peer_libs;
  ChildArgs child_args;
  double child_scale = 1;
};

// Runs the pairs that --filter selects (and the references their ratios
// need), checks the drop-in mallocs first, and fills *run. Returns 0, or 2
// after saying why on stderr (a bad --filter, or one that matches nothing).
int Measure(const Options& o, RunInfo* run);

}  // namespace bench

#endif  // PMR_BENCHMARKS_HARNESS_H_
