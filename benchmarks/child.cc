// The child side of //benchmarks:all. One child process = one allocator on
// one workload (workloads.cc): a fresh heap each time, and a drop-in malloc can
// be put in with LD_PRELOAD. It prints JSON lines on stdout:
//   {"type":"malloc","from":"<library that defines
//   malloc>","peer":...,"active":true,"version":...}
//   {"type":"metric","metric":"alloc_ns_per_op","values":[<one per timed
//   round>]}
//   {"type":"done","sink":<checksum that keeps the work observable>}
#include "benchmarks/child.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "absl/strings/str_format.h"
#include "benchmarks/json.h"

namespace bench {
namespace {

// Which library really defines malloc in this process, and whether the
// expected peer is active (a preload that failed silently is caught here).
bool ReportMalloc(const std::string& expect_peer) {
  std::string from = "?";
  void* m = dlsym(RTLD_DEFAULT, "malloc");
  Dl_info info;
  if (m != nullptr && dladdr(m, &info) != 0 && info.dli_fname != nullptr)
    from = info.dli_fname;
  std::string line =
      absl::StrFormat("{\"type\":\"malloc\",\"from\":%s", JsonString(from));
  bool ok = true;
  if (!expect_peer.empty()) {
    const PeerInfo* peer = FindPeer(expect_peer);
    std::string version, detail;
    bool symbol = false;
    if (peer != nullptr) {
      for (const char* sym : peer->probe_symbols)
        symbol = symbol || dlsym(RTLD_DEFAULT, sym) != nullptr;
      version = peer->version();
    }
    const bool lib_ok =
        peer != nullptr && from.find(peer->lib_substring) != std::string::npos;
    ok = symbol && lib_ok;
    if (!symbol)
      detail = "its symbols are not in the process (LD_PRELOAD ignored?)";
    else if (!lib_ok)
      detail = "malloc resolves to " + from + ", not to the preloaded library";
    line += absl::StrFormat(
        ",\"peer\":%s,\"active\":%s,\"version\":%s,\"detail\":%s",
        JsonString(expect_peer), ok ? "true" : "false", JsonString(version),
        JsonString(detail));
  }
  line += "}\n";
  std::fputs(line.c_str(), stdout);
  return ok;
}

}  // namespace

int ChildMain(const ChildArgs& args) {
  if (args.timeout_s > 0)
    alarm(static_cast<unsigned>(
        args.timeout_s));  // a hung child dies; the parent reports it
  const bool ok = ReportMalloc(args.expect_peer);
  std::fflush(stdout);
  if (!ok) return 3;
  if (args.probe) return 0;
  const WorkloadInfo* w = FindWorkload(args.workload);
  const AllocatorInfo* a = FindAllocator(args.allocator);
  if (w == nullptr || a == nullptr) {
    std::fprintf(stderr, "benchmark child: unknown workload or allocator\n");
    return 2;
  }
  std::string why;
  if (!Applicable(*w, *a, &why)) {
    std::fprintf(stderr, "benchmark child: %s/%s not applicable: %s\n", w->id,
                 a->id, why.c_str());
    return 2;
  }
  w->run(*w, *a, args);
  std::fputs(
      absl::StrFormat("{\"type\":\"done\",\"sink\":%d}\n", Sink()).c_str(),
      stdout);
  std::fflush(stdout);
  return 0;
}

}  // namespace bench
