/* pmr_synchronized_pool: std::pmr::synchronized_pool_resource.
 *
 * The size classes, pages and oversize rules of pmr_unsynchronized_pool
 * (same options), safe to use from many threads at once, built to scale
 * rather than to serialise: as libstdc++'s does, it keeps a pool per
 * thread (a page heap per thread over one shared set of segments).
 *
 * One engine with pmr_thread_cache: the same code, behaviour, thread
 * safety, fork() and failure rules, described once in pmr_thread_cache.h
 * (its manual is this type's too). The two differ only in:
 *   - options: this pool takes pmr_pool_options itself; the thread cache
 *     pmr_thread_cache_options { pool };
 *   - statistics: this pool reports pmr_pool_stats (what it holds from
 *     upstream); the thread cache pmr_thread_cache_stats (that, plus its
 *     threads and their heaps' pages);
 *   - the reserved size of the instance (PMR_IMPL_STATE below).
 * Take this one for std's name and options, the thread cache for its
 * per-thread statistics.
 *
 * Debug builds (-DPMR_DEBUG): as pmr_unsynchronized_pool.
 * NULL (pmr_mem_resource.h): a NULL pool given to any function below is a
 * caller error: debug builds report it through pmr_report_misuse and the
 * call changes nothing and returns false, NULL, 0 or zeroed stats and
 * options. */
#ifndef PMR_RESOURCES_SYNCHRONIZED_POOL_H
#define PMR_RESOURCES_SYNCHRONIZED_POOL_H

#include "../mem_resource/pmr_mem_resource.h"
#include "pmr_pool_options.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The state is private; its size is fixed here so a pool can live on the
 * stack or inside another struct. */
typedef struct pmr_synchronized_pool {
  pmr_mem_resource base; /* first: the abstract resource */
  PMR_IMPL_STATE(2048);
} pmr_synchronized_pool;

/* Initialises p. opts == NULL (or zero fields) means the defaults.
 * upstream == NULL means the default resource at this moment. Never calls
 * upstream; returns false (p unusable, nothing to destroy) only when malloc
 * fails (the registry of instances grows). p must not be live: initialising a
 * live pool again destroys it first (debug builds report it through
 * pmr_report_misuse). */
bool pmr_synchronized_pool_init(pmr_synchronized_pool *p,
                                const pmr_pool_options *opts,
                                pmr_mem_resource *upstream);

/* Releases everything. Idempotent: a second destroy does nothing. p may be
 * initialised again afterwards.
 * Until then p is dead (release, not destroy, keeps a pool usable): an
 * allocation from it fails with NULL and errno EINVAL without calling
 * upstream, a deallocation or try_resize does nothing; debug builds report
 * each such call through pmr_report_misuse. */
void pmr_synchronized_pool_destroy(pmr_synchronized_pool *p);

/* Returns every segment and oversize block to upstream, including blocks
 * never deallocated, and takes back every thread's heap. Idempotent; p
 * stays usable. Not concurrently with any other use of p. */
void pmr_synchronized_pool_release(pmr_synchronized_pool *p);

/* Gives back the calling thread's pages with no block in use and takes in
 * what other threads freed into its pages (the same for the heaps of
 * exited threads), then every segment with no block in use and every kept
 * oversize block to upstream now; returns the bytes given back. Other live
 * threads keep their current pages and what was freed into their pages
 * until they next need a page. Blocks in use stay valid. */
size_t pmr_synchronized_pool_trim(pmr_synchronized_pool *p);

/* What p holds from upstream now: pages and oversize blocks. */
pmr_pool_stats pmr_synchronized_pool_get_stats(const pmr_synchronized_pool *p);

/* The effective options (zeros replaced, values clamped). */
pmr_pool_options pmr_synchronized_pool_get_options(
    const pmr_synchronized_pool *p);

pmr_mem_resource *pmr_synchronized_pool_upstream(
    const pmr_synchronized_pool *p);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PMR_RESOURCES_SYNCHRONIZED_POOL_H */
