// Allocators(): every allocator of //benchmarks:all, one entry each: what the
// tables and the JSON say about it, and the factory of its adapter.
#include <memory>

#include "benchmarks/adapters.h"
#include "benchmarks/registry.h"

namespace bench {
namespace {

// The factory of an allocator: kNew, a function returning one of the adapter
// types (adapters.h).
template <auto kNew>
const AdapterFactory* Make() {
  static const AdapterFactory factory{kNew};
  return &factory;
}

template <class A>
std::unique_ptr<A> New(const MakeCtx&) {
  return std::make_unique<A>();
}

template <StdAdapter::Kind kKind>
std::unique_ptr<StdAdapter> NewStd(const MakeCtx& c) {
  return std::make_unique<StdAdapter>(kKind, c.mono_first_chunk);
}

template <PmrAdapter::Kind kKind>
std::unique_ptr<PmrAdapter> NewPmr(const MakeCtx& c) {
  return std::make_unique<PmrAdapter>(kKind, c.mono_first_chunk);
}

template <PmrAdapter::Kind kKind>
std::unique_ptr<PmrUnsizedAdapter> NewPmrUnsized(const MakeCtx& c) {
  return std::make_unique<PmrUnsizedAdapter>(kKind, c.mono_first_chunk);
}

std::unique_ptr<PmrMonoInlineAdapter> NewPmrMonoInline(const MakeCtx& c) {
  return std::make_unique<PmrMonoInlineAdapter>(c.mono_first_chunk);
}

// The drop-in rows run the programs of SYS: elsewhere the same engines are
// measured as resources (pmr_thread_cache, pmr_thread_cache_pool). The
// default engine's row also runs the latency study, so that the tail a
// program gets from pmr-c's malloc stands beside mimalloc's, jemalloc's,
// tcmalloc's and glibc's, and the big buffers (L1, L2, BP), where what a
// malloc does with a freed big block decides; the pool engine's row stays
// out, to keep them short. The malloc test patterns (X ... ES) name their
// rows themselves (WorkloadInfo::rows), the default engine's among them.
constexpr char kDropinIn[] =
    "SYS-redis SYS-sqlite SYS-lua SYS-python SYS-xz A-lat C-lat E-lat G-lat "
    "L1 L2 BP";
constexpr char kDropinWhy[] =
    "pmr-c's drop-in: SYS, latency, L1, L2, BP and the malloc test patterns "
    "only; its engine here: pmr_thread_cache";
constexpr char kSystemOnly[] = "SYS-redis SYS-sqlite SYS-lua SYS-python SYS-xz";
constexpr char kDropinPoolWhy[] =
    "pmr-c's drop-in: SYS only; its engine here: pmr_thread_cache_pool";

// The unsized rows: the pools and the thread cache freeing through
// pmr_deallocate_unsized, where the callers' sizes are a load of their own.
constexpr char kUnsizedIn[] = "C E";
constexpr char kUnsizedWhy[] =
    "pmr_deallocate_unsized (no size on free): C and E only";

// The C++ bridge's rows: std::pmr containers over pmr-c's resources.
constexpr char kBridgeIn[] = "V S H";
constexpr char kBridgeWhy[] =
    "std::pmr containers over pmr-c (cxx/pmr_cxx.hpp): V, S and H only";

}  // namespace

const std::vector<AllocatorInfo>& Allocators() {
  static const std::vector<AllocatorInfo> kAll = {
      {"glibc_malloc", Family::kMalloc, "malloc",
       "glibc malloc/free (ptmalloc2), the system default", true, false,
       "std_new_delete", nullptr, Make<&New<MallocAdapter>>(), true},
      {"jemalloc", Family::kMalloc, "malloc",
       "jemalloc as drop-in malloc/free (LD_PRELOAD, own process)", true, false,
       "std_new_delete", "jemalloc", Make<&New<MallocAdapter>>(), true},
      {"tcmalloc", Family::kMalloc, "malloc",
       "gperftools tcmalloc as drop-in malloc/free (LD_PRELOAD, own process)",
       true, false, "std_new_delete", "tcmalloc", Make<&New<MallocAdapter>>(),
       true},
      {"mimalloc", Family::kMalloc, "malloc",
       "mimalloc as drop-in malloc/free (LD_PRELOAD, own process)", true, false,
       "std_new_delete", "mimalloc", Make<&New<MallocAdapter>>(), true},
      {"std_new_delete", Family::kStd, "virtual",
       "std::pmr::new_delete_resource()", true, false, nullptr, nullptr,
       Make<&NewStd<StdAdapter::kNewDelete>>(), true},
      {"std_monotonic", Family::kStd, "virtual",
       "std::pmr::monotonic_buffer_resource (deallocate no-op; drop all = "
       "release(), std has no reset)",
       false, true, nullptr, nullptr, Make<&NewStd<StdAdapter::kMonotonic>>(),
       true},
      {"std_unsync_pool", Family::kStd, "virtual",
       "std::pmr::unsynchronized_pool_resource, default options", false, false,
       nullptr, nullptr, Make<&NewStd<StdAdapter::kUnsyncPool>>(), true},
      {"std_sync_pool", Family::kStd, "virtual",
       "std::pmr::synchronized_pool_resource, default options", true, false,
       nullptr, nullptr, Make<&NewStd<StdAdapter::kSyncPool>>(), true},
      // pmr-c's resources as std::pmr resources (cxx/pmr_cxx.hpp's owners):
      // std::pmr containers over them, in the container workloads only.
      {"pmrc_monotonic", Family::kStd, "virtual",
       "pmrc::monotonic_buffer (C++ bridge): pmr_monotonic_buffer as a "
       "std::pmr resource; drop all = release()",
       false, true, "std_monotonic", nullptr,
       Make<&NewStd<StdAdapter::kPmrcMonotonic>>(), true, nullptr, kBridgeIn,
       kBridgeWhy},
      {"pmrc_unsync_pool", Family::kStd, "virtual",
       "pmrc::unsynchronized_pool (C++ bridge): pmr_unsynchronized_pool as a "
       "std::pmr resource",
       false, false, "std_unsync_pool", nullptr,
       Make<&NewStd<StdAdapter::kPmrcUnsyncPool>>(), true, nullptr, kBridgeIn,
       kBridgeWhy},
      {"pmrc_sync_pool", Family::kStd, "virtual",
       "pmrc::synchronized_pool (C++ bridge): pmr_synchronized_pool as a "
       "std::pmr resource",
       true, false, "std_sync_pool", nullptr,
       Make<&NewStd<StdAdapter::kPmrcSyncPool>>(), true, nullptr, kBridgeIn,
       kBridgeWhy},
      {"pmrc_thread_cache", Family::kStd, "virtual",
       "pmrc::thread_cache (C++ bridge): pmr_thread_cache as a std::pmr "
       "resource",
       true, false, "std_sync_pool", nullptr,
       Make<&NewStd<StdAdapter::kPmrcThreadCache>>(), true, nullptr, kBridgeIn,
       kBridgeWhy},
      {"simple_pool", Family::kSeed, "direct",
       "seed SimplePool: one global mutex, a free list per 16 B size class, 64 "
       "KiB chunks",
       true, false, "std_sync_pool", nullptr, Make<&New<SimplePoolAdapter>>()},
      {"arena", Family::kSeed, "direct",
       "seed Arena: bump pointer in 1 MiB blocks, no per-block free; drop all "
       "= reset (keeps blocks)",
       false, true, "std_monotonic", nullptr, Make<&New<ArenaAdapter>>()},
      {"pmr_malloc", Family::kPmr, "abstract", "pmr_malloc_resource()", true,
       false, "std_new_delete", nullptr, Make<&NewPmr<PmrAdapter::kMalloc>>(),
       true},
      {"pmr_monotonic", Family::kPmr, "abstract",
       "pmr_monotonic_buffer via pmr_allocate (deallocate no-op; drop all = "
       "reset, keeps chunks)",
       false, true, "std_monotonic", nullptr,
       Make<&NewPmr<PmrAdapter::kMonoReset>>(), true},
      {"pmr_monotonic_inline", Family::kPmr, "inline",
       "pmr_monotonic_buffer_allocate (inline fast path), no deallocate calls; "
       "drop all = reset",
       false, true, "std_monotonic", nullptr, Make<&NewPmrMonoInline>()},
      {"pmr_monotonic_release", Family::kPmr, "abstract",
       "pmr_monotonic_buffer via pmr_allocate; drop all = release (chunks back "
       "to upstream, like std)",
       false, true, "std_monotonic", nullptr,
       Make<&NewPmr<PmrAdapter::kMonoRelease>>(), true},
      {"pmr_unsync_pool", Family::kPmr, "abstract",
       "pmr_unsynchronized_pool via pmr_allocate, default options", false,
       false, "std_unsync_pool", nullptr,
       Make<&NewPmr<PmrAdapter::kUnsyncPool>>(), true},
      {"pmr_sync_pool", Family::kPmr, "abstract",
       "pmr_synchronized_pool via pmr_allocate, default options", true, false,
       "std_sync_pool", nullptr, Make<&NewPmr<PmrAdapter::kSyncPool>>()},
      {"pmr_thread_cache", Family::kPmr, "abstract",
       "pmr_thread_cache via pmr_allocate over the malloc resource, default "
       "options",
       true, false, "std_sync_pool", nullptr,
       Make<&NewPmr<PmrAdapter::kThreadCache>>()},
      {"pmr_thread_cache_pool", Family::kPmr, "abstract",
       "pmr_thread_cache over a pmr_synchronized_pool (the thread-safe stack), "
       "default options",
       true, false, "std_sync_pool", nullptr,
       Make<&NewPmr<PmrAdapter::kThreadCachePool>>()},
      {"pmr_unsync_pool_unsized", Family::kPmr, "abstract",
       "pmr_unsynchronized_pool, freed by pmr_deallocate_unsized (the size "
       "not loaded)",
       false, false, "std_unsync_pool", nullptr,
       Make<&NewPmrUnsized<PmrAdapter::kUnsyncPool>>(), false, nullptr,
       kUnsizedIn, kUnsizedWhy},
      {"pmr_sync_pool_unsized", Family::kPmr, "abstract",
       "pmr_synchronized_pool, freed by pmr_deallocate_unsized", true, false,
       "std_sync_pool", nullptr, Make<&NewPmrUnsized<PmrAdapter::kSyncPool>>(),
       false, nullptr, kUnsizedIn, kUnsizedWhy},
      {"pmr_thread_cache_unsized", Family::kPmr, "abstract",
       "pmr_thread_cache over the malloc resource, freed by "
       "pmr_deallocate_unsized",
       true, false, "std_sync_pool", nullptr,
       Make<&NewPmrUnsized<PmrAdapter::kThreadCache>>(), false, nullptr,
       kUnsizedIn, kUnsizedWhy},
      {"pmr_dropin", Family::kPmr, "malloc",
       "pmr-c's drop-in malloc (libpmr_malloc.so, LD_PRELOAD, own process), "
       "thread cache engine (PMR_MALLOC=thread_cache)",
       true, false, nullptr, "pmr_dropin", Make<&New<MallocAdapter>>(), false,
       nullptr, kDropinIn, kDropinWhy},
      {"pmr_dropin_pool", Family::kPmr, "malloc",
       "pmr-c's drop-in malloc (libpmr_malloc.so, LD_PRELOAD, own process), "
       "synchronized pool engine (PMR_MALLOC=pool)",
       true, false, nullptr, "pmr_dropin", Make<&New<MallocAdapter>>(), false,
       nullptr, kSystemOnly, kDropinPoolWhy},
      {"no_allocator", Family::kReference, "direct",
       "not an allocator: F's loop alone, the producer handing out 4096 "
       "preallocated 64 B blocks in turn, free a "
       "no-op: the floor of F (F only)",
       true, false, nullptr, nullptr, Make<&New<NoAllocatorAdapter>>(), false,
       nullptr, "F", "the floor of F: F only"},
      {"absl_flat_hash_map", Family::kThirdParty, "malloc",
       "absl::flat_hash_map<uint64_t, uint64_t> in H, <std::string, uint64_t> "
       "in H-str (Abseil's Swiss table, std::allocator): a peer of H and "
       "H-str only",
       false, false, nullptr, nullptr, Make<&New<AbslMapAdapter>>(), true,
       "absl::flat_hash_map", "H H-str",
       "a hash map, not a resource: H and H-str only"},
      {"glib_ghashtable", Family::kThirdParty, "malloc",
       "glib's GHashTable (g_str_hash, g_str_equal; keys g_strndup'ed, counts "
       "in g_new0'd cells; glib's allocator over malloc): a peer of W only",
       false, false, nullptr, nullptr, Make<&New<GlibMapAdapter>>(), true,
       "GHashTable", "W", "a hash map, not a resource: W only"},
  };
  return kAll;
}

}  // namespace bench
