#include "benchmarks/registry.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"

namespace bench {

const std::vector<AllocatorInfo>& Allocators() {
  static const std::vector<AllocatorInfo> kAll = {
      {"glibc_malloc", Family::kMalloc, "malloc",
       "glibc malloc/free (ptmalloc2), the system default", true, false,
       "std_new_delete", nullptr},
      {"jemalloc", Family::kMalloc, "malloc",
       "jemalloc as drop-in malloc/free (LD_PRELOAD, own process)", true, false,
       "std_new_delete", "jemalloc"},
      {"tcmalloc", Family::kMalloc, "malloc",
       "gperftools tcmalloc as drop-in malloc/free (LD_PRELOAD, own process)",
       true, false, "std_new_delete", "tcmalloc"},
      {"mimalloc", Family::kMalloc, "malloc",
       "mimalloc as drop-in malloc/free (LD_PRELOAD, own process)", true, false,
       "std_new_delete", "mimalloc"},
      {"std_new_delete", Family::kStd, "virtual",
       "std::pmr::new_delete_resource()", true, false, nullptr, nullptr},
      {"std_monotonic", Family::kStd, "virtual",
       "std::pmr::monotonic_buffer_resource (deallocate no-op; drop all = "
       "release(), std has no reset)",
       false, true, nullptr, nullptr},
      {"std_unsync_pool", Family::kStd, "virtual",
       "std::pmr::unsynchronized_pool_resource, default options", false, false,
       nullptr, nullptr},
      {"std_sync_pool", Family::kStd, "virtual",
       "std::pmr::synchronized_pool_resource, default options", true, false,
       nullptr, nullptr},
      {"simple_pool", Family::kSeed, "direct",
       "seed SimplePool: one global mutex, a free list per 16 B size class, 64 "
       "KiB chunks",
       true, false, "std_sync_pool", nullptr},
      {"arena", Family::kSeed, "direct",
       "seed Arena: bump pointer in 1 MiB blocks, no per-block free; drop all "
       "= reset (keeps blocks)",
       false, true, "std_monotonic", nullptr},
      {"pmr_malloc", Family::kPmr, "abstract", "pmr_malloc_resource()", true,
       false, "std_new_delete", nullptr},
      {"pmr_monotonic", Family::kPmr, "abstract",
       "pmr_monotonic_buffer via pmr_allocate (deallocate no-op; drop all = "
       "reset, keeps chunks)",
       false, true, "std_monotonic", nullptr},
      {"pmr_monotonic_inline", Family::kPmr, "inline",
       "pmr_monotonic_buffer_allocate (inline fast path), no deallocate calls; "
       "drop all = reset",
       false, true, "std_monotonic", nullptr},
      {"pmr_monotonic_release", Family::kPmr, "abstract",
       "pmr_monotonic_buffer via pmr_allocate; drop all = release (chunks back "
       "to upstream, like std)",
       false, true, "std_monotonic", nullptr},
      {"pmr_unsync_pool", Family::kPmr, "abstract",
       "pmr_unsynchronized_pool via pmr_allocate, default options", false,
       false, "std_unsync_pool", nullptr},
      {"pmr_sync_pool", Family::kPmr, "abstract",
       "pmr_synchronized_pool via pmr_allocate, default options", true, false,
       "std_sync_pool", nullptr},
      {"pmr_thread_cache", Family::kPmr, "abstract",
       "pmr_thread_cache via pmr_allocate over the malloc resource, default "
       "options",
       true, false, "std_sync_pool", nullptr},
      {"pmr_thread_cache_pool", Family::kPmr, "abstract",
       "pmr_thread_cache over a pmr_synchronized_pool (the thread-safe stack), "
       "default options",
       true, false, "std_sync_pool", nullptr},
      {"no_allocator", Family::kReference, "direct",
       "not an allocator: F's loop alone, the producer handing out 4096 "
       "preallocated 64 B blocks in turn, free a "
       "no-op: the floor of F (F only)",
       true, false, nullptr, nullptr},
      {"absl_flat_hash_map", Family::kThirdParty, "malloc",
       "absl::flat_hash_map<uint64_t, uint64_t> (Abseil's Swiss table, "
       "std::allocator): a peer of workload H only",
       false, false, nullptr, nullptr},
  };
  return kAll;
}

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
  return s;
}

const std::vector<WorkloadInfo>& Workloads() {
  static const std::vector<MetricInfo> kAllocFree = {
      {"alloc_ns_per_op", "ns"},
      {"free_ns_per_op", "ns"},
      {"total_ns_per_op", "ns"},
      {"peak_rss_growth_kib", "KiB"}};
  static const std::vector<WorkloadInfo> kAll = {
      {"A", "one thread: allocate 64 B blocks (writing each), then free all", 1,
       false, false, kAllocFree, "total_ns_per_op"},
      {"B1", "1 thread: allocate 64 B blocks (writing each), then free them", 1,
       false, false, kAllocFree, "total_ns_per_op"},
      {"B2",
       "2 threads at once: each allocates 64 B blocks (writing each), then "
       "frees them",
       2, false, false, kAllocFree, "total_ns_per_op"},
      {"B8",
       "8 threads at once: each allocates 64 B blocks (writing each), then "
       "frees them",
       8, false, false, kAllocFree, "total_ns_per_op"},
      {"C",
       "one thread: mixed sizes 64/128/256/512 B (4:3:2:1), freed in shuffled "
       "order",
       1, false, false, kAllocFree, "total_ns_per_op"},
      {"D",
       "peak resident memory of workload A, each allocator in a fresh process",
       1,
       false,
       true,
       {{"peak_rss_kib", "KiB"}, {"retained_after_free_kib", "KiB"}},
       "peak_rss_kib"},
      {"E",
       "churn: random live block freed, random new size allocated, per step",
       1,
       false,
       false,
       {{"ns_per_step", "ns"}, {"peak_rss_growth_kib", "KiB"}},
       "ns_per_step"},
      {"F",
       "cross-thread: producer allocates, SPSC ring, consumer frees",
       2,
       true,
       false,
       {{"ns_per_block", "ns"}, {"peak_rss_growth_kib", "KiB"}},
       "ns_per_block"},
      {"G",
       "request-scoped arena (gateway): ~50 blocks + a growing string per "
       "request, dropped at the end",
       1,
       false,
       false,
       {{"ns_per_request", "ns"}, {"peak_rss_growth_kib", "KiB"}},
       "ns_per_request"},
      {"V",
       "container: vector of uint64_t, push_back from empty (no reserve), then "
       "destroy",
       1,
       false,
       false,
       {{"push_ns_per_op", "ns"},
        {"destroy_ns_per_op", "ns"},
        {"total_ns_per_op", "ns"},
        {"peak_rss_growth_kib", "KiB"}},
       "total_ns_per_op",
       true},
      {"H",
       "container: hash map uint64_t -> uint64_t: insert random keys, lookups "
       "that hit and miss, erase all",
       1,
       false,
       false,
       {{"insert_ns_per_op", "ns"},
        {"hit_ns_per_op", "ns"},
        {"miss_ns_per_op", "ns"},
        {"erase_ns_per_op", "ns"},
        {"total_ns_per_op", "ns"},
        {"peak_rss_growth_kib", "KiB"}},
       "total_ns_per_op",
       true,
       "absl_flat_hash_map"},
      {"S",
       "container: strings of 8-64 chars built by appends, all kept alive, "
       "then all destroyed",
       1,
       false,
       false,
       {{"build_ns_per_op", "ns"},
        {"destroy_ns_per_op", "ns"},
        {"total_ns_per_op", "ns"},
        {"peak_rss_growth_kib", "KiB"}},
       "total_ns_per_op",
       true},
  };
  return kAll;
}

const WorkloadInfo* FindWorkload(const std::string& id) {
  for (const auto& w : Workloads())
    if (id == w.id) return &w;
  return nullptr;
}

std::string WorkloadParams(const WorkloadInfo& w, const Sizes& s) {
  const std::string id = w.id;
  if (id == "A")
    return absl::StrFormat(
        "%d x %d B, alloc (incl. 64 B memset) and free timed separately; ns "
        "per block",
        s.a_blocks, kBlock);
  if (id[0] == 'B')
    return absl::StrFormat(
        "%d thread(s) x %d x %d B each; wall time of each phase / all blocks "
        "of all threads; "
        "thread-safe resources shared, others one per thread",
        w.threads, s.b_blocks, kBlock);
  if (id == "C")
    return absl::StrFormat(
        "%d allocations of 64/128/256/512 B drawn 4:3:2:1 (16 B written each), "
        "freed in a "
        "shuffled order; ns per block",
        s.c_allocs);
  if (id == "D")
    return absl::StrFormat(
        "%d x %d B = %.1f MiB payload; peak = VmHWM - VmRSS before allocating; "
        "retained = VmRSS after freeing all - VmRSS before",
        s.a_blocks, kBlock,
        static_cast<double>(s.a_blocks * kBlock) / (1 << 20));
  if (id == "E")
    return absl::StrFormat(
        "%d live blocks of %d..%d B; %d steps of (free a random live block, "
        "allocate a random "
        "size); sequence precomputed; ns per step (1 free + 1 alloc)",
        s.e_live, kEMin, kEMax, s.e_steps);
  if (id == "F")
    return absl::StrFormat(
        "%d x %d B through a lock-free SPSC ring of %d slots; ns per block, "
        "wall time "
        "(alloc + hand-over + free)",
        s.f_blocks, kBlock, kFRing);
  if (id == "G")
    return absl::StrFormat(
        "%d requests; each %d..%d blocks of %d..%d B + one string grown by "
        "1..%d chars after each block "
        "(capacity from %d B, doubling: allocate new, memcpy, deallocate old); "
        "end of request: "
        "bump resources drop all at once (reset/release), others free each "
        "block; monotonic first "
        "chunk %d KiB; ns per request",
        s.g_requests, kGMinAllocs, kGMaxAllocs, kGMin, kGMax, kGPieceMax,
        kGStringStart, kGMonoChunk / 1024);
  if (id == "V")
    return absl::StrFormat(
        "%d x uint64_t appended one by one to an empty vector (no reserve; "
        "every type here doubles its "
        "capacity), then the vector destroyed (bump resources: + "
        "reset/release); ns per element. "
        "pmr_vector: pmr_vector_push_back (inline while there is capacity), "
        "grows in place through "
        "pmr_try_resize where the resource allows it (monotonic: while its "
        "chunk has room)",
        s.v_elems);
  if (id == "H")
    return absl::StrFormat(
        "%d random uint64_t keys (precomputed, fixed seed) inserted into an "
        "empty map (no reserve); %d lookups "
        "that hit (shuffled order); %d that miss; %d erases (another shuffled "
        "order) and destroy (bump "
        "resources: + reset/release). Each phase timed on its own, ns per "
        "operation; total = the whole round "
        "/ %d operations. pmr_hashmap looks up and erases with the inline "
        "pmr_hashmap_find_u64 and _erase_u64",
        s.h_keys, s.h_keys, s.h_keys, s.h_keys, 4 * s.h_keys);
  if (id == "S")
    return absl::StrFormat(
        "%d strings of %d..%d chars (uniform), each built from empty by "
        "appending %d..%d-byte pieces (the last "
        "cut to the length); std::string keeps 15 chars inline, pmr_string 23, "
        "so most strings allocate and "
        "many grow twice. All are kept alive (slots reserved before timing), "
        "then all destroyed (bump "
        "resources: + reset/release); ns per string",
        s.s_strings, kSMinLen, kSMaxLen, 1, kSPieceMax);
  return "";
}

std::string WorkloadParamsJson(const WorkloadInfo& w, const Sizes& s) {
  const std::string id = w.id;
  if (id == "A" || id == "D")
    return absl::StrFormat("{\"blocks\":%d,\"block_bytes\":%d,\"threads\":1}",
                           s.a_blocks, kBlock);
  if (id[0] == 'B')
    return absl::StrFormat(
        "{\"blocks_per_thread\":%d,\"block_bytes\":%d,\"threads\":%d}",
        s.b_blocks, kBlock, w.threads);
  if (id == "C")
    return absl::StrFormat(
        "{\"allocations\":%d,\"sizes\":[64,128,256,512],\"ratio\":[4,3,2,1],"
        "\"threads\":1}",
        s.c_allocs);
  if (id == "E")
    return absl::StrFormat(
        "{\"live_blocks\":%d,\"steps\":%d,\"min_bytes\":%d,\"max_bytes\":%d,"
        "\"threads\":1}",
        s.e_live, s.e_steps, kEMin, kEMax);
  if (id == "F")
    return absl::StrFormat(
        "{\"blocks\":%d,\"block_bytes\":%d,\"ring_slots\":%d,\"threads\":2}",
        s.f_blocks, kBlock, kFRing);
  if (id == "G")
    return absl::StrFormat(
        "{\"requests\":%d,\"min_allocs\":%d,\"max_allocs\":%d,\"min_bytes\":%d,"
        "\"max_bytes\":%d,"
        "\"string_piece_max\":%d,\"string_start_capacity\":%d,\"monotonic_"
        "first_chunk\":%d,\"threads\":1}",
        s.g_requests, kGMinAllocs, kGMaxAllocs, kGMin, kGMax, kGPieceMax,
        kGStringStart, kGMonoChunk);
  if (id == "V")
    return absl::StrFormat(
        "{\"elements\":%d,\"element_bytes\":8,\"reserve\":false,\"threads\":1}",
        s.v_elems);
  if (id == "H")
    return absl::StrFormat(
        "{\"keys\":%d,\"hit_lookups\":%d,\"miss_lookups\":%d,\"erases\":%d,"
        "\"key_bytes\":8,\"value_bytes\":8,"
        "\"reserve\":false,\"threads\":1}",
        s.h_keys, s.h_keys, s.h_keys, s.h_keys);
  if (id == "S")
    return absl::StrFormat(
        "{\"strings\":%d,\"min_length\":%d,\"max_length\":%d,\"piece_min\":1,"
        "\"piece_max\":%d,"
        "\"kept_alive\":true,\"threads\":1}",
        s.s_strings, kSMinLen, kSMaxLen, kSPieceMax);
  return "{}";
}

namespace {

// Which rows a container workload has: the std container over std::allocator
// (malloc rows), std::pmr containers over the three std resources, pmr-c
// containers over malloc / monotonic / the unsynchronized pool; H also absl.
bool ContainerRow(const WorkloadInfo& w, const AllocatorInfo& a) {
  if (a.family == Family::kMalloc) return true;
  if (a.family == Family::kThirdParty) return std::string(w.id) == "H";
  for (const char* id :
       {"std_new_delete", "std_monotonic", "std_unsync_pool", "pmr_malloc",
        "pmr_monotonic", "pmr_monotonic_release", "pmr_unsync_pool"})
    if (std::string(a.id) == id) return true;
  return false;
}

}  // namespace

std::string ContainerOf(const WorkloadInfo& w, const AllocatorInfo& a) {
  if (!w.container || !ContainerRow(w, a)) return "";
  const std::string id = w.id;
  if (a.family == Family::kThirdParty) return "absl::flat_hash_map";
  const char* pmr_c = id == "V"   ? "pmr_vector"
                      : id == "H" ? "pmr_hashmap"
                                  : "pmr_string";
  const char* std_t = id == "V"   ? "vector"
                      : id == "H" ? "unordered_map"
                                  : "string";
  if (a.family == Family::kPmr) return pmr_c;
  if (a.family == Family::kStd) return std::string("std::pmr::") + std_t;
  return std::string("std::") + std_t;
}

bool Applicable(const WorkloadInfo& w, const AllocatorInfo& a,
                std::string* why) {
  if (a.family == Family::kReference && std::string(w.id) != "F") {
    if (why) *why = "the floor of F: F only";
    return false;
  }
  if (w.container && !ContainerRow(w, a)) {
    if (why)
      *why = a.family == Family::kThirdParty
                 ? "a hash map: H only"
                 : "container workloads run over malloc, std::pmr "
                   "new_delete/monotonic/unsync pool and pmr-c "
                   "malloc/monotonic/unsync pool only";
    return false;
  }
  if (!w.container && a.family == Family::kThirdParty) {
    if (why) *why = "a container, not a resource: H only";
    return false;
  }
  if (w.thread_safe_only && !a.thread_safe) {
    if (why) *why = "not thread-safe (F frees on another thread)";
    return false;
  }
  return true;
}

const char* Sharing(const WorkloadInfo& w, const AllocatorInfo& a) {
  if (w.id[0] != 'B' && std::string(w.id) != "F") return "";
  return a.thread_safe ? "shared" : "per-thread";
}

const std::vector<PeerInfo>& Peers() {
  static const std::vector<PeerInfo> kAll = {
      {"jemalloc",
       {"/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"},
       {"mallctl"},
       "jemalloc"},
      {"tcmalloc",
       {"/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4",
        "/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4"},
       {"MallocExtension_GetNumericProperty", "tc_malloc"},
       "tcmalloc"},
      {"mimalloc",
       {"/usr/lib/x86_64-linux-gnu/libmimalloc.so.2"},
       {"mi_version"},
       "mimalloc"},
  };
  return kAll;
}

const PeerInfo* FindPeer(const std::string& name) {
  for (const auto& p : Peers())
    if (name == p.name) return &p;
  return nullptr;
}

}  // namespace bench
