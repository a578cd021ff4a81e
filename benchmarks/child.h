// The child side of //benchmarks:all: one process measures one allocator on
// one workload and prints JSON lines on stdout (see child.cc).
#ifndef PMR_BENCHMARKS_CHILD_H_
#define PMR_BENCHMARKS_CHILD_H_

#include <cstdint>
#include <string>

#include "benchmarks/registry.h"

namespace bench {

struct ChildArgs {
  std::string workload;  // empty with probe
  std::string allocator;
  std::string expect_peer;  // the LD_PRELOAD peer that must be active, or ""
  bool probe = false;       // only report which malloc is active
  Sizes sizes = Sizes::Scaled(1.0);
  int rounds = 5;
  int warmup = 1;
  int timeout_s = 0;  // 0: none
};

// The checksum the workloads feed with pointers and block contents, printed
// at the end so no work can be optimised away.
uint64_t& Sink();

// Returns the process exit code: 0 success, 3 preload check failed, 2 bad
// arguments.
int ChildMain(const ChildArgs& args);

}  // namespace bench

#endif  // PMR_BENCHMARKS_CHILD_H_
