// The allocators and workloads of //benchmarks:all, shared by the parent (which
// runs every measurement in a child process and reports) and the children.
//
// Each allocator is one entry of Allocators() (allocators.cc): its description
// and one factory that makes its adapter (adapters.h). Each workload is one
// entry of Workloads() (workloads.cc): its metrics, parameters, notes and run
// function. Nothing else dispatches on their ids.
#ifndef PMR_BENCHMARKS_REGISTRY_H_
#define PMR_BENCHMARKS_REGISTRY_H_

#include <cstddef>
#include <string>
#include <vector>

namespace bench {

// kReference: not an allocator; F's loop with no allocation at all (its floor).
enum class Family { kMalloc, kStd, kSeed, kPmr, kThirdParty, kReference };

struct AdapterFactory;  // adapters.h: how to make the allocator's adapter

struct AllocatorInfo {
  const char* id;  // stable name, used in --filter and in the JSON
  Family family;
  const char* iface;  // how the benchmark calls it
  const char* what;   // one line for the legend
  bool thread_safe;   // one instance may be shared by threads
  bool bump;          // deallocate is a no-op; memory is dropped in bulk
  const char* std_counterpart;  // the std::pmr resource it is compared with
                                // (nullptr: it is one)
  const char* peer;             // LD_PRELOAD peer name, or nullptr
  const AdapterFactory* make;   // makes one instance of its adapter
  // Container workloads (V, H, S) run over this allocator: the std container
  // with std::allocator (malloc family), the std::pmr container over it (std
  // family), the pmr-c container over it (pmr family).
  bool container_rows = false;
  const char* container = nullptr;  // the container type, when not by family
  const char* only_in = nullptr;    // the workloads it takes part in ("H W")
  const char* only_why = nullptr;   // why, shown elsewhere
};

const std::vector<AllocatorInfo>& Allocators();
const AllocatorInfo* FindAllocator(const std::string& id);
const char* FamilyName(Family f);

// Problem sizes. Full size is scale 1; --quick and tests scale them down.
struct Sizes {
  size_t a_blocks;    // A, D: blocks of 64 B
  size_t b_blocks;    // B: blocks of 64 B per thread
  size_t c_allocs;    // C: mixed-size allocations
  size_t e_live;      // E: live blocks (not scaled)
  size_t e_steps;     // E: free+allocate steps
  size_t f_blocks;    // F: blocks handed from producer to consumer
  size_t g_requests;  // G: requests
  size_t v_elems;     // V: uint64_t pushed into one vector
  size_t h_keys;      // H: keys inserted (and looked up hit, missed, erased)
  size_t s_strings;   // S, S-char: strings built and kept alive
  size_t hs_keys;     // H-str: string keys inserted (and looked up, erased)
  size_t w_bytes;     // W: bytes of text read (whole files, at least this)
  size_t r_scale;     // R: the Lua script's size factor
  size_t q_rows;      // Q: rows SQLite inserts
  size_t l_buffers;   // L1, L2: live buffers per thread (not scaled)
  size_t l_replacements;  // L1, L2: replacements per round per thread
  size_t l_min_bytes;     // L1, L2: buffer sizes, uniform in [min, max]
  size_t l_max_bytes;
  size_t bp_blocks;     // BP: blocks handed from producer to consumer
  size_t bp_min_bytes;  // BP: block sizes, uniform in [min, max]
  size_t bp_max_bytes;
  // SYS (system.cc): the programs' input sizes.
  size_t sys_redis_requests;  // redis-benchmark requests per test
  size_t sys_sql_rows;        // rows in the sqlite3 script
  size_t sys_lua_n;           // the Lua script's size factor
  size_t sys_py_n;            // the Python script's size factor
  size_t sys_xz_bytes;        // bytes xz compresses
  // The malloc test patterns (workloads_patterns*.cc).
  size_t x_blocks;    // X: blocks each thread allocates
  size_t fs_objects;  // FS, FP: objects each thread allocates and writes
  size_t tc_gens;     // TC: generations of 2 threads
  size_t tc_blocks;   // TC: blocks each thread allocates
  size_t ls_steps;    // LS: free+allocate steps per table
  size_t bn_steps;    // BN: arithmetic steps
  size_t t_ops;       // T: blocks of each loop (one by one, in batches)
  size_t es_steps;    // ES: steps
  static Sizes Scaled(double scale);
};

// The cache line of the machines measured (x86-64): what the benchmark's own
// shared structures are aligned to, so they never false-share.
constexpr size_t kCacheLine = 64;

// Fixed shape parameters.
constexpr size_t kBlock = 64;  // A, B, D, F block size
constexpr size_t kAlign = 16;  // every request's alignment (malloc's)
constexpr size_t kEMin = 16, kEMax = 256;  // E sizes, uniform
constexpr size_t kFRing = 1024;            // F SPSC ring slots
constexpr size_t kGMinAllocs = 40,
                 kGMaxAllocs = 60;         // G allocations per request
constexpr size_t kGMin = 16, kGMax = 512;  // G block sizes, uniform
constexpr size_t kGPieceMax =
    16;  // G: chars appended after each allocation (1..16)
constexpr size_t kGStringStart = 16;  // G: the string's first capacity
constexpr size_t kGMonoChunk =
    16 * 1024;  // G: first chunk of the monotonic resources
constexpr size_t kArenaBlock = 1 << 20;        // seed Arena block size
constexpr size_t kSMinLen = 8, kSMaxLen = 64;  // S: string lengths, uniform
constexpr size_t kSPieceMax =
    16;  // S: bytes per append (1..16; the last one cut to the length)
constexpr size_t kBPRing = 16;  // BP SPSC ring slots (blocks in flight)
constexpr size_t kPage = 4096;  // L, BP: the page size the writes step by

// The paired study (paired.cc) runs this many pairs of rounds per --rounds
// in each process: its ratios are its figures, and they need more samples
// than a table's medians of times.
constexpr int kPairedRounds = 2;

struct MetricInfo {
  const char* id;
  const char* unit;  // "ns", "KiB", or "x" (a ratio)
};

struct ChildArgs;     // child.h
struct WorkloadInfo;  // below

// Measures allocator a on workload w in this (child) process, printing its
// metrics (child.cc describes the protocol).
using RunFn = void (*)(const WorkloadInfo& w, const AllocatorInfo& a,
                       const ChildArgs& args);
using TextFn = std::string (*)(const WorkloadInfo& w, const Sizes& s);

struct WorkloadInfo {
  const char* id = "";  // "A", "B2", ...
  const char* title = "";
  int threads = 1;  // threads that allocate (B: 1, 2, 8; F: 2)
  bool thread_safe_only = false;
  bool memory = false;     // D: memory, not time
  bool instances = false;  // B, F: thread-safe resources shared, others one
                           // per thread (the table's "instances" column)
  std::vector<MetricInfo> metrics;
  const char* primary = "";     // the metric ratios, charts and the summary use
  const char* unit_label = "";  // the primary metric in words (charts)
  bool container = false;       // V, H, S: a container over each resource
  // Q: a client with malloc-shaped hooks (no size on free): malloc rows and
  // pmr-c resources (through pmr_malloc_adapter) only, bump ones excluded.
  bool malloc_shaped = false;
  const char* pmr_container = nullptr;  // container workloads: "pmr_vector"
  const char* std_container = nullptr;  // and "vector" (std:: or std::pmr::)
  const char* extra_ref = nullptr;  // H: also compared with this allocator row
  size_t mono_first_chunk = 0;      // G: the monotonic resources' first chunk
  // SYS: a program from Debian's archive, run unchanged on malloc (glibc and
  // the drop-ins through LD_PRELOAD); its output must equal glibc's.
  bool system = false;
  // The metric the tables' and charts' memory column shows.
  const char* rss_metric = "peak_rss_growth_kib";
  // SYS: "" when the programs it runs are installed, else which are not.
  std::string (*missing)(const WorkloadInfo& w) = nullptr;
  TextFn params = nullptr;       // parameters in words (printed above tables)
  TextFn params_json = nullptr;  // the same as a JSON object
  TextFn phase_note = nullptr;   // replaces the generic note on phase columns
  TextFn notes = nullptr;        // extra lines under the table
  // The studies of latency, scaling and fragmentation (studies.cc tables,
  // charts and JSON them): "latency", "scaling", "fragmentation"; and the
  // workload they repeat ("A", "B", ...).
  const char* study = nullptr;
  const char* study_of = nullptr;
  bool no_bump = false;  // E-frag: bump resources would keep every block
  // Only these allocators take part (ids, space-separated), whatever their
  // own only_in says; the others are not applicable, for rows_why.
  const char* rows = nullptr;
  const char* rows_why = nullptr;
  RunFn run = nullptr;
};

const std::vector<WorkloadInfo>& Workloads();
const WorkloadInfo* FindWorkload(const std::string& id);

// Human-readable parameters (printed above each table) and the same as a JSON
// object.
std::string WorkloadParams(const WorkloadInfo& w, const Sizes& s);
std::string WorkloadParamsJson(const WorkloadInfo& w, const Sizes& s);

// Whether allocator a takes part in workload w; if not, *why says why.
bool Applicable(const WorkloadInfo& w, const AllocatorInfo& a,
                std::string* why);
// B and F: "shared" (one instance for all threads) or "per-thread"; ""
// elsewhere.
const char* Sharing(const WorkloadInfo& w, const AllocatorInfo& a);
// V, H, S: the container type a row measures ("std::vector" = std::allocator,
// "std::pmr::vector", "pmr_vector", "absl::flat_hash_map"; element types in
// the workload's parameters); "" elsewhere.
std::string ContainerOf(const WorkloadInfo& w, const AllocatorInfo& a);

// LD_PRELOAD peers: candidate libraries (first one present wins), a symbol
// only that allocator exports, and a substring of its library's file name.
struct PeerInfo {
  const char* name;
  std::vector<const char*> libs;
  std::vector<const char*> probe_symbols;
  const char* lib_substring;
  std::string (*version)();  // its version, read in the child ("" unknown)
};
const std::vector<PeerInfo>& Peers();
const PeerInfo* FindPeer(const std::string& name);

}  // namespace bench

#endif  // PMR_BENCHMARKS_REGISTRY_H_
