/* pmr_synchronized_pool: std::pmr::synchronized_pool_resource.
 *
 * The pages and size classes of pmr_unsynchronized_pool (same options, same
 * classes, alignment and oversize rules), safe to use from many threads at
 * once, built to scale rather than to serialise: as libstdc++'s does, it
 * keeps a pool per thread. Each thread that uses it owns a page heap:
 * per size class a current page and pages with free blocks, over one
 * shared set of segments and free pages. This is the engine of
 * pmr_thread_cache; the two differ only in their options and statistics
 * (pmr_thread_cache.h says how it works and what a thread keeps).
 *
 *   - Any thread may free any block, including blocks of threads that have
 *     exited. A block goes back to the page it came from: the owning
 *     thread pushes it onto the page's list with no lock and no atomic
 *     instruction; any other thread onto the page's lock-free remote list
 *     (one compare-and-swap), which the owner takes back before it takes
 *     another page. A thread that exits leaves its heap to the next thread
 *     that starts using the pool, so threads that come and go reuse the
 *     same pages.
 *   - Deallocation never calls upstream and never waits for a lock. Pages
 *     with no block in use go to the shared free pages (for any class and
 *     any thread), but a class's current page, which stays with its thread
 *     (at most one such page per class and thread); segments beyond
 *     max_free_bytes go back to upstream from a later allocation once no
 *     new segment was needed for a second, or at once with
 *     pmr_synchronized_pool_trim.
 *   - A thread's heap (about 1.5 KiB) comes from malloc at its first
 *     allocation, never from init or deallocation.
 *   - The upstream must itself be thread-safe (the malloc resource, or
 *     another synchronized pool); it is called from several threads.
 *
 * Thread safety: allocate, deallocate, try_resize, is_equal, get_options,
 * get_stats, trim and upstream may be called from any threads at once. init,
 * release and destroy may not run concurrently with anything else on the
 * same pool.
 * fork(): a pool stays usable and destroyable in the child of a
 * multi-threaded parent: handlers installed with pthread_atfork take every
 * lock of the pool before fork() (so nothing shared is inherited locked or
 * half changed) and free them after; the heaps of threads that do not exist
 * in the child are left alone, their free blocks unused until release or
 * destroy. A live pool is listed for this: destroy it before its storage
 * goes away.
 * Failure: NULL when upstream fails (or malloc, for a thread's first heap);
 * the pool stays usable. A success leaves errno as it was, also when a
 * failed upstream call was recovered from (a smaller segment); deallocation
 * never changes errno.
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
