/* pmr_thread_cache: a page heap per thread, so the common allocate and
 * deallocate take no lock and do no atomic read-modify-write. Not in
 * std::pmr.
 *
 * This is also the manual of pmr_synchronized_pool, the same engine under
 * std's name: everything below holds for both. They differ only in their
 * options (pmr_thread_cache_options { pool }, there pmr_pool_options), their
 * statistics (pmr_thread_cache_stats below, there pmr_pool_stats) and the
 * instance's reserved size (pmr_synchronized_pool.h).
 *
 * Each thread that uses an instance owns a page heap of it: per size class
 * a current page of 64 KiB and pages with free blocks, each page with its
 * own free list (the pools' pages, pmr_pool_options.h). Allocate takes the
 * next free block of the thread's current page of the class. Deallocate by
 * the thread that owns the block's page pushes it onto that page's list; a
 * block freed by any other thread goes onto its page's lock-free list of
 * remote frees (one compare-and-swap), which the owner takes back when its
 * pages of that class run out. So a thread's blocks stay in its own pages,
 * what it allocates close in time lies close in memory, and no block moves
 * through an intermediate cache. Upstream is never called with a lock of the
 * instance held (it may be another thread cache); deallocation never calls
 * upstream. Requests above the largest class (or aligned above 4096) are
 * oversize blocks from upstream, kept for reuse once freed as in the pools
 * (pmr_pool_options.h). try_resize (pmr_try_resize, pmr_reallocate)
 * succeeds in place when the new size stays in the block's class, or, for
 * an oversize block, when the block has room for it (pmr_pool_options.h);
 * an oversize block shrinks in place whatever its new size where the
 * instance maps its blocks itself (over the malloc resource), else down to
 * half.
 *
 * Memory: a page whose blocks are all free goes back to the instance's
 * shared free pages, where any class of any thread takes it, except a
 * class's current page, which stays with its thread until that thread needs
 * memory: a thread keeps at most one page with no block in use per class.
 * Before the instance asks upstream for a segment, the thread's empty
 * current pages and the pages of exited threads that became free go back
 * to the shared free pages. Free pages go back to upstream beyond
 * pool.max_free_bytes or on pmr_thread_cache_trim, and give their memory to
 * the OS where the pools' do (pmr_pool_options.h). When a thread exits,
 * its heap, with the pages that still hold blocks in use, is adopted whole
 * by the next thread that starts using the instance; destroy and release
 * take back every heap, including those of threads still alive.
 *
 * Several instances may live at once, each with its own per-thread heaps;
 * their number is not limited by pthread keys (the library uses one key).
 *
 * Thread safety: allocate, deallocate, try_resize, is_equal, stats, trim and
 * upstream from any threads at once. init, release and destroy not
 * concurrently with any other use of the same instance. A thread may exit at
 * any time, also during or after destroy of an instance it used.
 *
 * The upstream must be thread-safe (the malloc resource, a synchronized
 * pool): segments and oversize blocks are asked of it from many threads.
 *
 * fork(): an instance stays usable and destroyable in the child of a
 * multi-threaded parent. Handlers installed with pthread_atfork take the
 * instance's locks before fork() and free them after. In the child, the
 * heaps of the threads that do not exist there are never touched again
 * (one may have been half changed at that instant): the free blocks in
 * their pages stay unused until release/destroy.
 *
 * A live instance is listed for fork(): destroy it before its storage goes
 * away.
 *
 * Failure: NULL when upstream fails (or malloc fails for a thread's first
 * heap, about 1.5 KiB, never taken by init or deallocation); nothing leaks,
 * and the resource works again once upstream does. A success leaves errno
 * as it was, also when a failed upstream call was recovered from (a smaller
 * segment); deallocation never changes errno.
 *
 * Debug builds (-DPMR_DEBUG): as the pools, double free (also when another
 * thread frees the block again), wrong size or alignment, and pointers the
 * instance never gave out are reported through pmr_report_misuse and
 * ignored; every call then takes the checked slow path, under a lock. A
 * NULL tc is reported and the call fails. */
#ifndef PMR_RESOURCES_THREAD_CACHE_H
#define PMR_RESOURCES_THREAD_CACHE_H

#include "../mem_resource/pmr_mem_resource.h"
#include "pmr_pool_options.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pmr_thread_cache_options {
  /* Size classes and pages, as for the pools (zeros: the defaults). */
  pmr_pool_options pool;
} pmr_thread_cache_options;

/* A snapshot; exact when no other thread is using the instance. */
typedef struct pmr_thread_cache_stats {
  size_t threads;             /* threads that own a heap of it now */
  size_t thread_page_bytes;   /* pages that heaps hold for their classes, of
                                 threads alive or exited: only their owner
                                 allocates from them */
  size_t pages_taken;         /* since init: pages that heaps took for a class
                                 (from the free pages, or new segments) */
  size_t pages_returned;      /* and gave back with no block in use */
  size_t held_bytes;          /* held from upstream: pages and oversize
                                 blocks */
  size_t free_page_bytes;     /* of which pages with no block in use, shared */
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
 * upstream. Returns false (tc unusable, nothing to destroy) only when
 * malloc fails (the registry of instances grows) or tc is NULL. tc must not
 * be live: initialising a live instance again destroys it first (debug
 * builds report it through pmr_report_misuse). Each thread's heap (about
 * 1.5 KiB) comes from malloc at its first allocation. */
bool pmr_thread_cache_init(pmr_thread_cache *tc,
                           const pmr_thread_cache_options *opts,
                           pmr_mem_resource *upstream);

/* Takes back every thread's heap and returns every segment and oversize
 * block to upstream. Idempotent: destroy again, or release after destroy,
 * does nothing (so does destroy after a failed init). tc may be initialised
 * again afterwards; until then, allocation from it fails (NULL, errno
 * EINVAL; debug builds report it). */
void pmr_thread_cache_destroy(pmr_thread_cache *tc);

/* The same, but tc stays usable (threads make new heaps on next use). All
 * pointers from tc become invalid. */
void pmr_thread_cache_release(pmr_thread_cache *tc);

pmr_thread_cache_stats pmr_thread_cache_get_stats(const pmr_thread_cache *tc);

/* Gives back the calling thread's pages with no block in use (its current
 * ones) and takes in what other threads freed into its pages, does the same
 * for the heaps of exited threads, then returns every segment with no block
 * in use and every kept oversize block to upstream; returns the bytes given
 * back. Other live threads keep their current pages (at most one with no
 * block in use per class each) and what was freed into their pages until
 * they next need a page. Thread-safe. */
size_t pmr_thread_cache_trim(pmr_thread_cache *tc);

/* The effective options (zeros replaced, values clamped). */
pmr_thread_cache_options pmr_thread_cache_get_options(
    const pmr_thread_cache *tc);

pmr_mem_resource *pmr_thread_cache_upstream(const pmr_thread_cache *tc);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PMR_RESOURCES_THREAD_CACHE_H */
