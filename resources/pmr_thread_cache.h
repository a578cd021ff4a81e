/* pmr_thread_cache: per-thread caches of free blocks in front of a shared
 * pool, so the common allocate and deallocate take no lock and do no atomic
 * read-modify-write. Not in std::pmr.
 *
 * Each instance has, for every thread that uses it, a cache: per size class
 * up to two magazines (arrays of free blocks, as in Bonwick's design),
 * touched only by that thread. Allocate takes a block from the calling
 * thread's magazine; deallocate puts it into it, whichever thread allocated
 * the block (blocks are not owned by threads). Behind the caches is the
 * instance's central pool: the page heap of pmr_synchronized_pool (64 KiB
 * pages in segments from upstream) and, per size class, 8 shards of
 * magazine stacks, each under a small lock; each thread has a home shard
 * (round robin among the threads that use the instance):
 *   - when both of a thread's magazines are full, it gives one to its home
 *     shard for an empty one; when both are empty, it takes a full one,
 *     from its home shard or else from another, else fills one with blocks
 *     from the pages;
 *   - between two such trips lie at least a magazine's worth of operations.
 * Magazines are blocks of the pages too. Deallocation never calls upstream:
 * a thread that needs an empty magazine and finds none packs its full one's
 * blocks into chains stored in a few of those blocks and parks them in its
 * home shard (small classes, below 32 bytes, go back to their pages). Refills
 * unpack parked chains before they take blocks from the pages. Upstream is
 * never called with a lock of the instance held (it may be another thread
 * cache). Requests above the largest class (or aligned above 4096) are
 * oversize blocks from upstream, kept for reuse once freed as in the pools
 * (pmr_pool_options.h). try_resize (pmr_try_resize, pmr_reallocate)
 * succeeds in place when the new size stays in the block's class.
 *
 * Memory: per size class a thread's cache holds at most
 * min(max_cached_blocks, max_cached_bytes / block size) (at least 2)
 * blocks; a magazine holds half of that. The central pool keeps at most 8
 * full and 4 empty magazines per class and shard (beyond, blocks go back to
 * their pages), plus the parked chains. All of it goes back to the pages
 * before the pool asks upstream for memory, and on trim: parked blocks never
 * make the pool grow. Where free pages give memory back to the OS (see
 * pmr_pool_options.h), it also goes back, at most every 10 ms, before an
 * oversize block of 128 KiB or more is mapped. Pages whose blocks are all free
 * serve any class, and go back to upstream beyond pool.max_free_bytes (see
 * pmr_pool_options.h) or on pmr_thread_cache_trim. A thread's caches go back to
 * the central pool when the thread exits; destroy and release take back every
 * cache, including those of threads that are still alive.
 *
 * Several instances may live at once, each with its own per-thread caches;
 * their number is not limited by pthread keys (the library uses one key).
 *
 * Thread safety: allocate, deallocate, try_resize, is_equal, stats and
 * upstream from any threads at once. init, release and destroy not
 * concurrently with any other use of the same instance. A thread may exit at
 * any time, also during or after destroy of an instance it used.
 *
 * The upstream must be thread-safe (the malloc resource, a synchronized
 * pool): segments and oversize blocks are asked of it from many threads.
 *
 * fork(): an instance stays usable and destroyable in the child of a
 * multi-threaded parent. Handlers installed with pthread_atfork take the
 * instance's locks before fork() (waiting for threads inside a critical
 * section to leave it) and free them after; in the child, the caches of the
 * threads that do not exist there are taken back into the central pool.
 * Blocks a vanished thread was handing over at that instant may stay
 * unused until release/destroy.
 *
 * Failure: NULL when upstream fails; nothing leaks, and the resource works
 * again once upstream does. A success leaves errno as it was, also when a
 * side allocation failed on the way (a magazine) and blocks came anyway;
 * deallocation never changes errno.
 *
 * Debug builds (-DPMR_DEBUG): as the pools, double free (also when another
 * thread frees the block again), wrong size or alignment, and pointers the
 * instance never gave out are reported through pmr_report_misuse and
 * ignored; every call then takes the checked slow path, under a lock. */
#ifndef PMR_RESOURCES_THREAD_CACHE_H
#define PMR_RESOURCES_THREAD_CACHE_H

#include "mem_resource/pmr_mem_resource.h"
#include "resources/pmr_pool_options.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PMR_THREAD_CACHE_DEFAULT_MAX_CACHED_BLOCKS ((size_t)256)
#define PMR_THREAD_CACHE_DEFAULT_MAX_CACHED_BYTES ((size_t)64 << 10)

typedef struct pmr_thread_cache_options {
  /* Size classes and pages, as for the pools (zeros: the defaults). */
  pmr_pool_options pool;
  /* Per thread and size class: the most free blocks a thread parks (0: 256)
   * and the most bytes (0: 64 KiB); the smaller bound wins, at least 2. A
   * magazine (what moves to or from the central pool) holds half of that. */
  size_t max_cached_blocks;
  size_t max_cached_bytes;
} pmr_thread_cache_options;

/* A snapshot; exact when no other thread is using the instance. */
typedef struct pmr_thread_cache_stats {
  size_t threads;       /* threads that have a cache now */
  size_t cached_blocks; /* free blocks parked in thread caches */
  size_t cached_bytes;
  size_t refills;         /* magazines of blocks: central pool -> a thread */
  size_t flushes;         /* magazines of blocks: a thread -> central pool */
  size_t held_bytes;      /* held from upstream: pages, oversize blocks and
                             the central pool's shards */
  size_t free_page_bytes; /* of which pages with no block in use */
  size_t free_oversize_bytes; /* of which freed oversize blocks kept for
                                 reuse (pmr_pool_options.h) */
} pmr_thread_cache_stats;

/* The state is private; its size is fixed here so an instance can live in
 * static storage or inside another struct. */
typedef struct pmr_thread_cache {
  pmr_mem_resource base; /* first: the abstract resource */
  PMR_IMPL_STATE(4096);
} pmr_thread_cache;

/* Initialises tc. opts == NULL (or zero fields) means the defaults.
 * upstream == NULL means the default resource at this moment. Never calls
 * upstream; takes 20 KiB from malloc for the shards. Returns false (tc
 * unusable, nothing to destroy) only when malloc fails. tc must not be live:
 * initialising a live instance again destroys it first (debug builds report
 * it through pmr_report_misuse). */
bool pmr_thread_cache_init(pmr_thread_cache *tc,
                           const pmr_thread_cache_options *opts,
                           pmr_mem_resource *upstream);

/* Takes back every thread's cache and returns every segment and oversize block
 * to upstream. Idempotent: destroy again, or release after destroy, does
 * nothing (so does destroy after a failed init). tc may be initialised
 * again afterwards. */
void pmr_thread_cache_destroy(pmr_thread_cache *tc);

/* The same, but tc stays usable (threads make new caches on next use). All
 * pointers from tc become invalid. */
void pmr_thread_cache_release(pmr_thread_cache *tc);

pmr_thread_cache_stats pmr_thread_cache_get_stats(pmr_thread_cache *tc);

/* Gives the calling thread's cached blocks and every block and magazine the
 * central pool parks back to their pages, then every segment with no block
 * in use and every kept oversize block back to upstream; returns the bytes
 * given back. Other threads'
 * caches stay as they are (at most two magazines per class each).
 * Thread-safe. */
size_t pmr_thread_cache_trim(pmr_thread_cache *tc);

/* The effective options (zeros replaced, values clamped). */
pmr_thread_cache_options pmr_thread_cache_get_options(
    const pmr_thread_cache *tc);

pmr_mem_resource *pmr_thread_cache_upstream(const pmr_thread_cache *tc);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PMR_RESOURCES_THREAD_CACHE_H */
