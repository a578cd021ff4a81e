// The programs of benchmark SYS (system.cc): their command lines, generated
// inputs (fixed seeds: every allocator gets the same bytes) and the texts
// the tables print about them.
#ifndef PMR_BENCHMARKS_SYSTEM_PROGRAMS_H_
#define PMR_BENCHMARKS_SYSTEM_PROGRAMS_H_

#include <string>
#include <vector>

#include "benchmarks/registry.h"

namespace bench {

// The SYS workloads' ids, in the order of the tables.
inline constexpr const char* kSystemIds[] = {"SYS-redis", "SYS-sqlite",
                                             "SYS-lua", "SYS-python", "SYS-xz"};

inline constexpr char kRedisServer[] = "/usr/bin/redis-server";
inline constexpr char kRedisBenchmark[] = "/usr/bin/redis-benchmark";
inline constexpr char kRedisCli[] = "/usr/bin/redis-cli";

struct SystemProgram {
  // SYS-redis: redis-server, redis-benchmark and redis-cli (system.cc drives
  // them; input = the redis-cli queries). Otherwise one program reading
  // input on stdin and writing what is compared on stdout.
  bool redis = false;
  std::vector<std::string> argv;
  std::string input;  // only when asked for (it can be MiBs)
  std::string params, params_json;
};

// Workload id's program at sizes s; its input only when with_input.
SystemProgram ProgramOf(const std::string& id, const Sizes& s, bool with_input);
const char* ProgramTitle(const std::string& id);
// The lines under the workload's table.
std::string SystemNotes(const std::string& id);
// "" when every program the workload runs is installed, else which are not.
std::string ProgramMissing(const std::string& id);

}  // namespace bench

#endif  // PMR_BENCHMARKS_SYSTEM_PROGRAMS_H_
