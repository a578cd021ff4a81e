// Benchmark SYS: real programs from Debian's archive (redis-server, sqlite3,
// lua5.4, python3, xz), run unchanged on glibc's malloc and on each drop-in
// malloc through LD_PRELOAD (system.cc, benchmarks/README.md).
#ifndef PMR_BENCHMARKS_SYSTEM_H_
#define PMR_BENCHMARKS_SYSTEM_H_

#include <cstddef>
#include <cstdio>
#include <vector>

#include "benchmarks/registry.h"

namespace bench {

struct RunInfo;  // report.h

// The SYS workloads, one per program: SYS-redis, SYS-sqlite, SYS-lua,
// SYS-python, SYS-xz (Workloads() lists them after the others).
std::vector<WorkloadInfo> SystemWorkloads();

// After workload w's passes: a row whose program output differs from the
// glibc_malloc row's (or varied between its rounds) gets status kMismatch.
void CheckSystemOutputs(RunInfo* run, size_t w);

// One table of every SYS program x allocator that ran: time, CPU, peak RSS,
// ratios vs glibc and mimalloc, the output check. Nothing when no SYS
// workload was selected.
void PrintSystemTable(const RunInfo& run, FILE* out);

}  // namespace bench

#endif  // PMR_BENCHMARKS_SYSTEM_H_
