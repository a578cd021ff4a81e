/* pmr_pool_options: std::pmr::pool_options, shared by the pool resources. */
#ifndef PMR_RESOURCES_POOL_OPTIONS_H
#define PMR_RESOURCES_POOL_OPTIONS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Defaults (a 0 option means "the default") and limits (larger values are
 * clamped to them; SIZE_MAX clamps to the maximum, not to the minimum). */
#define PMR_POOL_DEFAULT_MAX_BLOCKS_PER_CHUNK ((size_t)4096)
#define PMR_POOL_MAX_MAX_BLOCKS_PER_CHUNK ((size_t)1 << 20)
#define PMR_POOL_DEFAULT_LARGEST_BLOCK ((size_t)16384)
#define PMR_POOL_DEFAULT_MAX_FREE_BYTES ((size_t)1 << 20) /* 1 MiB */
/* The clamp of largest_required_pool_block: both pools and the thread cache
 * serve blocks up to this size from pages, and a larger value is clamped to
 * it (their get_options report at most 16384). Larger requests are
 * oversize blocks from upstream. */
#define PMR_POOL_PAGE_LARGEST_BLOCK ((size_t)16384)

typedef struct pmr_pool_options {
  /* The most blocks one 64 KiB page serves (fewer when fewer fit); the
   * name is std::pmr's, whose pools take blocks from upstream in chunks. */
  size_t max_blocks_per_chunk;
  /* The largest request served from the pools; larger ones are blocks of
   * their own from upstream (a freed one may be kept for a later request,
   * within max_free_bytes below). Rounded up to a size class: the effective
   * value reported by the pool's get_options is exactly the threshold (one byte
   * more goes to upstream). A request counts by its size rounded up to its
   * alignment. */
  size_t largest_required_pool_block;
  /* Bytes of free pages kept for reuse by any size class; beyond
   * that, segments whose pages are all free go back to upstream once no new
   * segment was needed for a second (0: 1 MiB; less than one page: none
   * kept; _trim gives back at once). Also the bound, of its own, on freed
   * oversize blocks of basic alignment kept for reuse by a later oversize
   * request that needs at least half of one (beyond it, the largest go back
   * at once; _trim gives all back, and so does a pool about to take a new
   * segment from upstream). A pool whose upstream is itself a pool
   * or thread cache of this library keeps no oversize block: the one under
   * it keeps them, within its own max_free_bytes. */
  size_t max_free_bytes;
} pmr_pool_options;

/* Over the malloc resource (pmr_malloc_resource(), the default resource
 * unless a program sets another), or any upstream that says
 * PMR_TRAIT_SYSTEM_MEMORY (pmr_mem_resource.h), the pools and the thread
 * cache map their segments, and oversize blocks of 128 KiB or more, from
 * the OS themselves (malloc never sees them), so that free memory can go
 * back to the OS while the pool keeps its addresses: a page free for a
 * second gives its memory back (all but the OS page of its segment's
 * descriptors, in a segment's first page; it reads as zeros when used
 * again), every free page does on trim, and before an oversize block is
 * mapped free pages give back as much as it would take the pool above the
 * most it has held resident (since init, release, or the last time every
 * free page gave its memory back, as trim does), so large blocks never
 * raise the pool's peak while it holds free pages, and memory below the
 * peak is not given back only to be faulted in again. A mapped oversize
 * block is mapped with room to grow in place (address space only, not
 * resident, not counted in the stats): try_resize grows it up to about four
 * times its first size (at most 1 GiB more) without a copy, so a buffer
 * that doubles moves once in three times. An oversize block that would be
 * mapped (from just under 128 KiB: 128 KiB with its bookkeeping) up to
 * 256 KiB is not mapped when the pool's own segments have up to four free
 * pages in a row for it: it takes them (no system call; the run with the
 * most pages still resident), grows in place within them only (a block
 * just under 128 KiB, in two pages, by a few bytes), and gives them back
 * to the free pages when it is freed. Over a pool or thread
 * cache that is itself over the malloc resource (a stack such as a thread
 * cache over a synchronized pool), the segments it gives are such mappings,
 * aligned to 1 MiB as the pool above asks, and the memory of free pages
 * goes back to the OS in the same way (all but the OS page of its
 * segment's descriptors); such a pool maps nothing itself and takes no
 * runs of its own.
 * Over any other upstream nothing goes to the OS (the pool cannot know what
 * that memory is: locked, registered with a device, a file); memory goes back
 * to upstream only as described above. See resources/README.md. */

/* A snapshot of what a pool holds from upstream (over the malloc resource:
 * has mapped, resident or not). */
typedef struct pmr_pool_stats {
  size_t held_bytes;          /* all of it: pages and oversize blocks */
  size_t free_page_bytes;     /* of which pages with no block in use */
  size_t oversize_bytes;      /* of which oversize blocks, in use */
  size_t free_oversize_bytes; /* of which freed oversize blocks kept for
                                 reuse (at most max_free_bytes) */
} pmr_pool_stats;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PMR_RESOURCES_POOL_OPTIONS_H */
