/* pmr_synchronized_pool: std::pmr::synchronized_pool_resource.
 *
 * The size classes of pmr_unsynchronized_pool (same options, same class
 * table, same alignment and oversize rules), safe to use from many threads
 * at once, and built to scale rather than to serialise: the pool is split
 * into shards (PMR_SYNC_POOL_SHARDS), each a complete set of size classes
 * behind its own small lock. A thread keeps to one shard and moves to another
 * when it finds its shard busy, so threads rarely meet on a lock and the
 * common path is one uncontended atomic exchange and a plain store around a
 * pooled allocation. Shards are created on first use (from upstream).
 *
 *   - Any thread may free any block, including blocks from threads that have
 *     exited: blocks are not owned by threads. A freed block joins the
 *     freeing thread's shard; a shard that runs dry takes the free blocks of
 *     another shard before asking upstream for a chunk, so a producer thread
 *     and a consumer thread recycle the same memory instead of growing it.
 *   - Oversize requests go to upstream under one separate lock.
 *   - The upstream must itself be thread-safe (the malloc resource, or
 *     another synchronized pool); it is called from several threads.
 *
 * Thread safety: allocate, deallocate, is_equal, options and upstream may be
 * called from any threads at once. init, release and destroy may not run
 * concurrently with anything else on the same pool.
 * fork(): a pool stays usable and destroyable in the child of a
 * multi-threaded parent: handlers installed with pthread_atfork take every
 * shard's lock before fork() (so no shard is inherited locked or half
 * changed) and free them after. A live pool is listed for this: destroy it
 * before its storage goes away.
 * Failure: NULL when upstream fails; the pool stays usable. A success leaves
 * errno as it was, also when a failed upstream call was recovered from (a
 * shard that could not be created, another one serving); deallocation never
 * changes errno.
 * Debug builds (-DPMR_DEBUG): as pmr_unsynchronized_pool. */
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
  union {
    void *align;
    unsigned char bytes[256];
  } pmr_impl_state;
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
 * initialised again afterwards. */
void pmr_synchronized_pool_destroy(pmr_synchronized_pool *p);

/* Returns every chunk, shard and oversize block to upstream, including
 * blocks never deallocated. Idempotent; p stays usable. Not concurrently
 * with any other use of p. */
void pmr_synchronized_pool_release(pmr_synchronized_pool *p);

/* The effective options (see pmr_unsynchronized_pool_options). */
pmr_pool_options pmr_synchronized_pool_get_options(
    const pmr_synchronized_pool *p);

pmr_mem_resource *pmr_synchronized_pool_upstream(
    const pmr_synchronized_pool *p);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PMR_RESOURCES_SYNCHRONIZED_POOL_H */
