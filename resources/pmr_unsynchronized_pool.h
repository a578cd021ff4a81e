/* pmr_unsynchronized_pool: std::pmr::unsynchronized_pool_resource.
 *
 * Size classes served from pages. For many small blocks of mixed sizes
 * allocated and freed in any order by one thread: a node-based container, a
 * parser's AST, an interpreter's objects, a per-connection cache.
 *
 *   - Classes: 8, 16, ..., 64, then four per power of two (80, 96, 112, 128,
 *     160, ..., 4 KiB), then the twelve sizes of which 15 .. 4 blocks fill
 *     a 64 KiB page (4368, 4672, ..., 8192, 9360, 10912, 13104, 16384). A
 * request goes to the smallest class that holds its size rounded up to its
 * alignment and is a multiple of that alignment; its block is aligned for it.
 * Waste is at most 25% for requests of more than 24 bytes (at most 20% above
 *     64); below that, at most 7 bytes.
 *   - Pages: memory comes from upstream in segments of up to 1 MiB (16 pages
 *     of 64 KiB, aligned to 64 KiB; fewer pages when upstream cannot give
 *     that much; mapped at 1 MiB alignment over the malloc resource). A
 *     page serves one class at a time, with its own free list, and
 *     allocation works through one page before the next: blocks allocated
 *     together lie together, whatever order they were freed in. No
 *     per-block header: a block's page is found from its address.
 *   - Memory goes back: a page whose blocks are all free can serve any class;
 *     free pages beyond max_free_bytes (see pmr_pool_options) go back to
 *     upstream a segment at a time, once no new segment was needed for a
 *     second (so a program that frees everything and allocates it again
 *     keeps its pages), and pmr_unsynchronized_pool_trim gives
 *     back every segment with no block in use now. Over the malloc
 *     resource, a page free for a second also gives its memory back to the OS
 *     (pmr_pool_options.h).
 *   - Requests above the largest class (see pmr_pool_options), or aligned
 *     above 4096, are blocks of their own from upstream, freed in O(1); a
 *     freed one of basic alignment is kept for a later oversize request,
 *     within max_free_bytes, until trim; release frees them all.
 *   - try_resize (pmr_try_resize, pmr_reallocate) succeeds in place when the
 *     new size stays in the block's class, or, for an oversize block, when
 *     the block has room for it (pmr_pool_options.h); an oversize block
 *     shrinks in place whatever its new size where the pool maps its blocks
 *     itself (over the malloc resource), else down to half.
 *   - Init never calls upstream.
 *
 * Thread safety: none. One thread at a time per instance (see
 * pmr_synchronized_pool for the thread-safe one).
 * Failure: NULL when upstream fails (errno as upstream left it); blocks
 * already in the pools are still served.
 * Debug builds (-DPMR_DEBUG): double free, wrong size or alignment, and
 * pointers the pool never gave out are reported through pmr_report_misuse
 * and ignored.
 * NULL (pmr_mem_resource.h): a NULL pool given to any function below is a
 * caller error: debug builds report it through pmr_report_misuse and the
 * call changes nothing and returns false, NULL, 0 or zeroed stats and
 * options. */
#ifndef PMR_RESOURCES_UNSYNCHRONIZED_POOL_H
#define PMR_RESOURCES_UNSYNCHRONIZED_POOL_H

#include "../mem_resource/pmr_mem_resource.h"
#include "pmr_pool_options.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The state is private; its size is fixed here so a pool can live on the
 * stack or inside another struct. */
typedef struct pmr_unsynchronized_pool {
  pmr_mem_resource base; /* first: the abstract resource */
  PMR_IMPL_STATE(4096);
} pmr_unsynchronized_pool;

/* Initialises p. opts == NULL (or zero fields) means the defaults.
 * upstream == NULL means the default resource at this moment. Never fails
 * (returns true), never calls upstream. p must not be live: debug builds
 * report init over a live pool (pmr_report_misuse) and destroy it first. */
bool pmr_unsynchronized_pool_init(pmr_unsynchronized_pool *p,
                                  const pmr_pool_options *opts,
                                  pmr_mem_resource *upstream);

/* Releases everything. Idempotent: a second destroy does nothing. p may be
 * initialised again afterwards.
 * Until then p is dead (release, not destroy, keeps a pool usable): an
 * allocation from it fails with NULL and errno EINVAL without calling
 * upstream, a deallocation or try_resize does nothing; debug builds report
 * each such call through pmr_report_misuse. */
void pmr_unsynchronized_pool_destroy(pmr_unsynchronized_pool *p);

/* Returns every segment and every oversize block to upstream, including blocks
 * never deallocated; all pointers from p become invalid. Idempotent; p stays
 * usable. */
void pmr_unsynchronized_pool_release(pmr_unsynchronized_pool *p);

/* Gives every segment with no block in use, and every kept oversize block,
 * back to upstream now, and returns the bytes given back. Blocks in use
 * stay valid. */
size_t pmr_unsynchronized_pool_trim(pmr_unsynchronized_pool *p);

/* What p holds from upstream now. */
pmr_pool_stats pmr_unsynchronized_pool_get_stats(
    const pmr_unsynchronized_pool *p);

/* The effective options: zeros replaced by the defaults, large values
 * clamped, largest_required_pool_block rounded up to its size class. */
pmr_pool_options pmr_unsynchronized_pool_get_options(
    const pmr_unsynchronized_pool *p);

pmr_mem_resource *pmr_unsynchronized_pool_upstream(
    const pmr_unsynchronized_pool *p);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PMR_RESOURCES_UNSYNCHRONIZED_POOL_H */
