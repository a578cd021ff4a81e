// Look-ups over the tables of allocators.cc and workloads.cc, the problem
// sizes, and the LD_PRELOAD peers.
#include "benchmarks/registry.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "absl/strings/str_format.h"
#include "mem_resource/pmr_mem_resource.h"

namespace bench {

const AllocatorInfo* FindAllocator(const std::string& id) {
  for (const auto& a : Allocators())
    if (id == a.id) return &a;
  return nullptr;
}

const char* FamilyName(Family f) {
  switch (f) {
    case Family::kMalloc:
      return "malloc";
    case Family::kStd:
      return "std::pmr";
    case Family::kSeed:
      return "seed baseline";
    case Family::kPmr:
      return "pmr-c";
    case Family::kThirdParty:
      return "third-party";
    case Family::kReference:
      return "reference";
  }
  return "?";
}

Sizes Sizes::Scaled(double scale) {
  auto sc = [scale](size_t n, size_t floor) {
    double v = std::round(static_cast<double>(n) * scale);
    return std::max(floor, static_cast<size_t>(v));
  };
  Sizes s;
  s.a_blocks = sc(1000000, 1000);
  s.b_blocks = sc(1000000, 1000);
  s.c_allocs = sc(400000, 1000);
  s.e_live = 10000;
  s.e_steps = sc(5000000, 1000);
  s.f_blocks = sc(2000000, 1000);
  s.g_requests = sc(200000, 100);
  s.v_elems = sc(10000000, 1000);
  s.h_keys = sc(1000000, 1000);
  s.s_strings = sc(1000000, 1000);
  s.hs_keys = sc(1000000, 1000);
  s.w_bytes = sc(24u << 20, 64u << 10);
  s.r_scale = sc(20, 1);
  s.q_rows = sc(200000, 200);
  // The big buffers scale too (--quick: 52 KiB .. 1.6 MiB), so that the
  // smoke test stays small.
  s.l_buffers = 20;
  s.l_replacements = sc(8, 4);
  s.l_min_bytes = sc(1u << 20, 16u << 10);
  s.l_max_bytes = sc(32u << 20, 256u << 10);
  s.bp_blocks = sc(60, 20);
  s.bp_min_bytes = sc(64u << 10, 4u << 10);
  s.bp_max_bytes = sc(4u << 20, 64u << 10);
  s.sys_redis_requests = sc(30000, 2000);
  s.sys_sql_rows = sc(50000, 500);
  s.sys_lua_n = sc(60000, 1000);
  s.sys_py_n = sc(60000, 1000);
  s.sys_xz_bytes = sc(4u << 20, 256u << 10);
  s.x_blocks = sc(200000, 500);
  s.fs_objects = sc(200000, 200);
  s.tc_gens = sc(100, 2);
  s.tc_blocks = sc(10000, 500);
  s.ls_steps = sc(400000, 1000);
  s.bn_steps = sc(1500000, 1000);
  s.t_ops = sc(3000000, 2000);
  s.es_steps = sc(2000000, 1000);
  return s;
}

const WorkloadInfo* FindWorkload(const std::string& id) {
  for (const auto& w : Workloads())
    if (id == w.id) return &w;
  return nullptr;
}

std::string WorkloadParams(const WorkloadInfo& w, const Sizes& s) {
  return w.params != nullptr ? w.params(w, s) : "";
}

std::string WorkloadParamsJson(const WorkloadInfo& w, const Sizes& s) {
  return w.params_json != nullptr ? w.params_json(w, s) : "{}";
}

std::string ContainerOf(const WorkloadInfo& w, const AllocatorInfo& a) {
  if (!Applicable(w, a, nullptr) || !w.container) return "";
  if (a.container != nullptr) return a.container;
  if (a.family == Family::kPmr) return w.pmr_container;
  if (a.family == Family::kStd)
    return std::string("std::pmr::") + w.std_container;
  return std::string("std::") + w.std_container;
}

namespace {
// id is one of the space-separated words of list.
bool InList(const char* id, const char* list) {
  const size_t n = std::strlen(id);
  for (const char* p = list; *p != '\0';) {
    const size_t len = std::strcspn(p, " ");
    if (len == n && std::strncmp(p, id, n) == 0) return true;
    p += len;
    while (*p == ' ') ++p;
  }
  return false;
}
}  // namespace

bool Applicable(const WorkloadInfo& w, const AllocatorInfo& a,
                std::string* why) {
  if (w.rows != nullptr) {
    if (InList(a.id, w.rows)) return true;
    if (why) *why = w.rows_why;
    return false;
  }
  if (a.only_in != nullptr && !InList(w.id, a.only_in)) {
    if (why) *why = a.only_why;
    return false;
  }
  if (w.system && std::strcmp(a.iface, "malloc") != 0) {
    if (why)
      *why =
          "a program from Debian's archive calls malloc: glibc and the "
          "drop-ins (LD_PRELOAD) only";
    return false;
  }
  if (w.container && !a.container_rows) {
    if (why)
      *why =
          "container workloads run over malloc, std::pmr "
          "new_delete/monotonic/unsync pool/sync pool, the bridge's owners and "
          "pmr-c malloc/monotonic/unsync pool only";
    return false;
  }
  if (!w.container && a.container != nullptr) {
    if (why) *why = "a container, not a resource";
    return false;
  }
  if (w.malloc_shaped && !(a.family == Family::kMalloc ||
                           (a.family == Family::kPmr && !a.bump &&
                            std::strcmp(a.iface, "abstract") == 0))) {
    if (why)
      *why =
          "SQLite's hooks free without a size: malloc rows and pmr-c "
          "resources (through pmr_malloc_adapter) only; bump resources "
          "would keep every block SQLite frees";
    return false;
  }
  if (w.study != nullptr && std::strcmp(w.study, "paired") == 0 &&
      !(a.family == Family::kPmr && !a.bump && a.peer == nullptr &&
        std::strcmp(a.id, "pmr_malloc") != 0)) {
    if (why)
      *why =
          "the paired study runs pmr-c's pools beside mimalloc (the "
          "process's malloc); the others have rows of their own in A, C, E";
    return false;
  }
  if (w.no_bump && a.bump) {
    if (why)
      *why =
          "a bump resource never frees: it would keep every block the run "
          "gives back";
    return false;
  }
  if (w.thread_safe_only && !a.thread_safe) {
    if (why) *why = "not thread-safe (F frees on another thread)";
    return false;
  }
  return true;
}

const char* Sharing(const WorkloadInfo& w, const AllocatorInfo& a) {
  if (!w.instances) return "";
  return a.thread_safe ? "shared" : "per-thread";
}

namespace {

template <class F>
F Symbol(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
}

std::string JemallocVersion() {
  using Mallctl = int (*)(const char*, void*, size_t*, void*, size_t);
  const char* v = nullptr;
  size_t len = sizeof v;
  if (auto f = Symbol<Mallctl>("mallctl"))
    if (f("version", &v, &len, nullptr, 0) == 0 && v != nullptr) return v;
  return "";
}

std::string TcmallocVersion() {
  using TcVersion = const char* (*)(int*, int*, const char**);
  int major = 0, minor = 0;
  const char* patch = nullptr;
  if (auto f = Symbol<TcVersion>("tc_version"))
    if (const char* v = f(&major, &minor, &patch)) return v;
  return "";
}

std::string MimallocVersion() {
  using MiVersion = int (*)();
  if (auto f = Symbol<MiVersion>("mi_version")) {
    const int v = f();
    return absl::StrFormat("mimalloc %d.%d.%d", v / 100, (v / 10) % 10, v % 10);
  }
  return "";
}

std::string PmrDropinVersion() {
  return absl::StrFormat("pmr-c %d.%d.%d", PMR_VERSION_MAJOR, PMR_VERSION_MINOR,
                         PMR_VERSION_PATCH);
}

// Where libpmr_malloc.so is, in the order tried: the runfiles of this
// binary (it is a data dependency of //benchmarks:all), then beside it in
// bazel-bin (bazel-bin/benchmarks/all -> bazel-bin/malloc/).
std::vector<std::string> PmrDropinPaths() {
  const std::string rel = "/pmr_c/malloc/libpmr_malloc.so";
  std::vector<std::string> paths;
  if (const char* r = std::getenv("RUNFILES_DIR"); r != nullptr && *r)
    paths.push_back(r + rel);
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n > 0) {
    const std::string exe(buf, static_cast<size_t>(n));
    paths.push_back(exe + ".runfiles" + rel);
    const size_t slash = exe.rfind('/');
    if (slash != std::string::npos)
      paths.push_back(exe.substr(0, slash) + "/../malloc/libpmr_malloc.so");
  }
  return paths;
}

}  // namespace

const std::vector<PeerInfo>& Peers() {
  static const std::vector<std::string> kDropin = PmrDropinPaths();
  static const std::vector<PeerInfo> kAll = {
      {"jemalloc",
       {"/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"},
       {"mallctl"},
       "jemalloc",
       JemallocVersion},
      {"tcmalloc",
       {"/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4",
        "/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4"},
       {"MallocExtension_GetNumericProperty", "tc_malloc"},
       "tcmalloc",
       TcmallocVersion},
      {"mimalloc",
       {"/usr/lib/x86_64-linux-gnu/libmimalloc.so.2"},
       {"mi_version"},
       "mimalloc",
       MimallocVersion},
      {"pmr_dropin",
       [] {
         std::vector<const char*> v;
         for (const std::string& p : kDropin) v.push_back(p.c_str());
         return v;
       }(),
       {"pmr_dropin_get_stats"},
       "libpmr_malloc",
       PmrDropinVersion},
  };
  return kAll;
}

const PeerInfo* FindPeer(const std::string& name) {
  for (const auto& p : Peers())
    if (name == p.name) return &p;
  return nullptr;
}

}  // namespace bench
