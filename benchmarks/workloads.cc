// Workloads(): every workload of //benchmarks:all, one entry each, in the
// order of the report. Each entry (its metrics, parameters, notes and run
// function) is in the file of its family, with the run functions it calls:
//
//   workloads_alloc.cc          A, C, D, E, G: allocation loops, one thread
//   workloads_threads.cc        B1, B2, B8, P, F: allocation loops, threads
//   workloads_vector_string.cc  V, S, S-char: a vector, many strings
//   workloads_hashmap.cc        H, H-str: hash maps
//   workloads_wordcount.cc      W: word count
//   workloads_clients.cc        R, Q: real clients (Lua, SQLite)
//   workloads_large.cc          L1, L2, BP: big buffers (MiB), page faults
//   workloads_patterns*.cc      X, FS, FP, TC, LS, BN, T, ES: malloc test
//                               patterns (workloads_patterns.h)
//   system.cc                   SYS-*: real programs under each malloc
//
// What they share (timing, metrics, the method) is in workloads_common.h.
#include <cstdint>
#include <vector>

#include "benchmarks/registry.h"
#include "benchmarks/system.h"
#include "benchmarks/workloads_common.h"
#include "benchmarks/workloads_patterns.h"

namespace bench {

uint64_t& Sink() {
  static uint64_t sink = 0;
  return sink;
}

const std::vector<WorkloadInfo>& Workloads() {
  static const std::vector<WorkloadInfo> kAll = {
      WorkloadA(),
      WorkloadB(1),
      WorkloadB(2),
      WorkloadB(8),
      WorkloadP(),
      WorkloadC(),
      WorkloadD(),
      WorkloadE(),
      WorkloadF(),
      WorkloadG(),
      WorkloadV(),
      WorkloadH(),
      WorkloadS(),
      WorkloadHStr(),
      WorkloadW(),
      WorkloadSChar(),
      WorkloadR(),
      WorkloadQ(),
      WorkloadL(1),
      WorkloadL(2),
      WorkloadBP(),
      // The malloc test patterns (workloads_patterns*.cc).
      WorkloadX(),
      WorkloadFS(),
      WorkloadFP(),
      WorkloadTC(),
      WorkloadLS(),
      WorkloadBN(),
      WorkloadT(),
      WorkloadES(),
      // The studies (latency.cc, scaling.cc, fragmentation.cc, paired.cc).
      WorkloadALat(),
      WorkloadCLat(),
      WorkloadELat(),
      WorkloadGLat(),
      WorkloadBScale(),
      WorkloadFScale(),
      WorkloadEFrag(),
      WorkloadRFrag(),
      WorkloadQFrag(),
      WorkloadAPair(),
      WorkloadCPair(),
      WorkloadEPair(),
  };
  static const std::vector<WorkloadInfo> kWithSystem = [] {
    std::vector<WorkloadInfo> v = kAll;
    for (WorkloadInfo& w : SystemWorkloads()) v.push_back(std::move(w));
    return v;
  }();
  return kWithSystem;
}

}  // namespace bench
