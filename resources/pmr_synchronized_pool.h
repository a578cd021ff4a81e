/* pmr_synchronized_pool: std::pmr::synchronized_pool_resource.
 *
 * The pages and size classes of pmr_unsynchronized_pool (same options, same
 * classes, alignment and oversize rules), safe to use from many threads at
 * once, built to scale rather than to serialise: classes live in shards
 * (PMR_SYNC_POOL_SHARDS), each behind its own small lock, over one shared set
 * of segments and free pages. A thread keeps to one shard and moves to
 * another when it finds its shard busy.
 *
 *   - Any thread may free any block, including blocks of threads that have
 *     exited. A block goes back to the page it came from: freed by a thread
 *     of the owning shard, under that shard's lock when it is free; else
 *     onto the page's lock-free remote list, which the shard collects before
 *     it takes a new page. So memory
 *     held follows the working set whatever the threads and contention:
 *     threads that come and go reuse the same shards and pages, and a busy
 *     lock never makes the pool take new memory.
 *   - Deallocation never calls upstream and never waits for a lock. Pages
 *     with no block in use go to the shared free set (for any class and any
 *     shard); segments beyond max_free_bytes go back to upstream from a
 *     later allocation once no new segment was needed for a second, or at once
 * with pmr_synchronized_pool_trim.
 *   - Shards (about 1.5 KiB each) are taken from upstream by a thread's first
 *     allocation, never by init or deallocation.
 *   - The upstream must itself be thread-safe (the malloc resource, or
 *     another synchronized pool); it is called from several threads.
 *
 * Thread safety: allocate, deallocate, try_resize, is_equal, get_options,
 * get_stats, trim and upstream may be called from any threads at once. init,
 * release and destroy may not run concurrently with anything else on the
 * same pool.
 * fork(): a pool stays usable and destroyable in the child of a
 * multi-threaded parent: handlers installed with pthread_atfork take every
 * lock of the pool before fork() (so nothing is inherited locked or half
 * changed) and free them after. A live pool is listed for this: destroy it
 * before its storage goes away.
 * Failure: NULL when upstream fails; the pool stays usable. A success leaves
 * errno as it was, also when a failed upstream call was recovered from (a
 * shard that could not be created, a smaller segment); deallocation never
 * changes errno.
 * Debug builds (-DPMR_DEBUG): as pmr_unsynchronized_pool.
 * NULL (pmr_mem_resource.h): a NULL pool given to any function below is a
 * caller error: debug builds report it through pmr_report_misuse and the
 * call changes nothing and returns false, NULL, 0 or zeroed stats and
 * options. */
#ifndef PMR_RESOURCES_SYNCHRONIZED_POOL_H
#define PMR_RESOURCES_SYNCHRONIZED_POOL_H

#include "mem_resource/pmr_mem_resource.h"
#include "resources/pmr_pool_options.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PMR_SYNC_POOL_SHARDS 16

/* The state is private; its size is fixed here so a pool can live on the
 * stack or inside another struct. */
typedef struct pmr_synchronized_pool {
  pmr_mem_resource base; /* first: the abstract resource */
  PMR_IMPL_STATE(512);
} pmr_synchronized_pool;

/* Initialises p. opts == NULL (or zero fields) means the defaults.
 * upstream == NULL means the default resource at this moment. Never fails
 * (returns true), never calls upstream. p must not be live: initialising a
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

/* Returns every segment, shard and oversize block to upstream, including
 * blocks never deallocated. Idempotent; p stays usable. Not concurrently
 * with any other use of p. */
void pmr_synchronized_pool_release(pmr_synchronized_pool *p);

/* Gives every segment with no block in use (after collecting blocks freed
 * across threads), and every kept oversize block, back to upstream now, and
 * returns the bytes given back. Blocks in use stay valid. */
size_t pmr_synchronized_pool_trim(pmr_synchronized_pool *p);

/* What p holds from upstream now: pages, oversize blocks and shards. */
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
