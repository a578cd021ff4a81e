/* PRIVATE: what the pool resources share besides their pages (page_heap.h):
 * the size classes, effective options, the list of oversize blocks and the
 * debug checks of a deallocation. Not installed, not public. */
#ifndef PMR_IMPL_POOL_CORE_H
#define PMR_IMPL_POOL_CORE_H

#include <stdbool.h>
#include <stdint.h>

#include "mem_resource/pmr_mem_resource.h"
#include "resources/internal/mem_check.h"
#include "resources/pmr_pool_options.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Size classes: multiples of 8 up to 64; then four classes per power of two
 * (2^k + j * 2^(k-2), j = 1..4) up to 4 KiB; then, up to 8 KiB, the largest
 * multiple of 16 that n blocks fit in a 64 KiB page, for n = 15 .. 8 (a page
 * of such a class wastes less than n * 16 bytes, where a power-of-two
 * quarter such as 5120 would waste a whole 4 KiB, and 4 KiB plus a header of
 * up to 272 bytes, as SQLite's page cache asks, costs 4368); then four per
 * power of two again up to 1 MiB (the table's bound; pages serve up to
 * 8 KiB): 68 classes in all. */
#define PMR_IMPL_POOL_CLASSES 68
#define PMR_IMPL_POOL_TABLE_LIMIT 1024 /* sizes served by the lookup table */
/* Alignments above this bypass the pools (blocks in a page are aligned at
 * most so). */
#define PMR_IMPL_POOL_MAX_BLOCK_ALIGN ((size_t)4096)
/* The page-fitted classes: above 4 KiB, up to 8 KiB. */
#define PMR_IMPL_POOL_FIT_FIRST 32u /* the class of 4097 bytes */
#define PMR_IMPL_POOL_FIT_CLASSES 8u

extern const uint8_t
    pmr_impl_pool_class_table[PMR_IMPL_POOL_TABLE_LIMIT / 8 + 1];
extern const uint32_t pmr_impl_pool_class_sizes[PMR_IMPL_POOL_CLASSES];

/* The class of a request, given that its size rounded up to its alignment is
 * s (s <= 1 MiB): the smallest class that holds s. */
static inline unsigned pmr_impl_pool_class_of(size_t s) {
  if (PMR_LIKELY(s <= PMR_IMPL_POOL_TABLE_LIMIT))
    return pmr_impl_pool_class_table[(s + 7) >> 3];
  unsigned k = 63u - (unsigned)__builtin_clzll((unsigned long long)(s - 1));
  if (k < 12) return 8u + (k - 6u) * 4u + (unsigned)(((s - 1) >> (k - 2)) & 3u);
  if (k == 12) {
    unsigned c = PMR_IMPL_POOL_FIT_FIRST;
    while (pmr_impl_pool_class_sizes[c] < s) ++c;
    return c;
  }
  return PMR_IMPL_POOL_FIT_FIRST + PMR_IMPL_POOL_FIT_CLASSES + (k - 13u) * 4u +
         (unsigned)(((s - 1) >> (k - 2)) & 3u);
}

/* The block size of class idx: one load (pool_core.c's table; a test
 * checks it against the rule above). */
static inline size_t pmr_impl_pool_class_size(unsigned idx) {
  return pmr_impl_pool_class_sizes[idx];
}

/* The class of a request of s bytes (its size rounded up to its alignment)
 * at that alignment, or -1 when it is not pooled under `largest` (a class
 * size, at most 8 KiB): the smallest class that holds s and whose size is a
 * multiple of the alignment, so that its blocks (at multiples of their size
 * from a page's start) are aligned for it. That is pmr_impl_pool_class_of(s)
 * except for a page-fitted class (a multiple of 16) asked for a larger
 * alignment: then the next class that is a multiple of it (8 KiB at the
 * most). */
static inline int pmr_impl_pool_class_for(size_t s, size_t alignment,
                                          size_t largest) {
  if (s > largest || alignment > PMR_IMPL_POOL_MAX_BLOCK_ALIGN) return -1;
  unsigned c = pmr_impl_pool_class_of(s);
  if (PMR_UNLIKELY(alignment > 16)) {
    while (pmr_impl_pool_class_size(c) & (alignment - 1)) ++c;
    if (pmr_impl_pool_class_size(c) > largest) return -1;
  }
  return (int)c;
}

/* The size of the block a pool gives for (bytes, alignment): bytes rounded
 * up to the alignment (a power of two), 0 bytes counted as 1 (a 0-byte
 * request gets a block of its alignment). */
static inline size_t pmr_impl_pool_block_size(size_t bytes, size_t alignment) {
  return pmr_impl_round_up(bytes + (bytes == 0), alignment);
}

/* The bound of a pool's fast path for its effective largest block:
 * min(largest, PMR_IMPL_POOL_TABLE_LIMIT). */
static inline size_t pmr_impl_pool_small_limit(size_t largest) {
  return largest < PMR_IMPL_POOL_TABLE_LIMIT ? largest
                                             : PMR_IMPL_POOL_TABLE_LIMIT;
}

/* An option's effective value: 0 means dflt, and at most max. */
static inline size_t pmr_impl_clamp_option(size_t v, size_t dflt, size_t max) {
  if (v == 0) return dflt;
  return v > max ? max : v;
}

/* Resolves options (NULL = defaults) to their effective values. */
pmr_pool_options pmr_impl_pool_effective_options(const pmr_pool_options *opts);

/* Oversize blocks: from upstream, with a small trailer that links them into
 * a doubly linked list, so any one is freed in O(1) and release finds them
 * all.
 *
 * A freed oversize block of basic alignment is kept for reuse, while the
 * kept blocks total at most `retain` bytes (the pool's max_free_bytes); the
 * largest go back first. A later request takes the smallest kept block of
 * its power of two that fits (so at least half of it is used), and the
 * trailer moves to the end of what it uses. A program that builds and drops
 * the same large buffers over and over (a request's arrays, an
 * interpreter's tables) then stops trading them with malloc, which would
 * give them back to the OS and fault them in again. trim and release give
 * back every kept block.
 *
 * Over the malloc resource (pmr_impl_os_direct, os_mem.h), blocks of at
 * least PMR_IMPL_OS_BIG_MIN bytes are mapped from the OS and unmapped when
 * they go back, instead of leaving holes in malloc's heap. */
typedef struct pmr_impl_big_block {
  struct pmr_impl_big_block *prev, *next; /* kept: next links its bin */
  size_t size;      /* total bytes asked of upstream, trailer included (of
                       a mapped block: the most it has used); in the
                       list's sentinel: the sum over the list */
  size_t cap;       /* bytes of memory from start: size, or more for a
                       mapped block with room to grow in place */
  size_t alignment; /* alignment asked of upstream */
  char *start;      /* the block, as upstream gave it */
} pmr_impl_big_block;

/* Kept blocks are binned by the power of two of their size, from 2^13 to
 * below PMR_IMPL_BIG_KEEP_MAX; larger ones are never kept. */
#define PMR_IMPL_BIG_BIN_SHIFT 13
#define PMR_IMPL_BIG_BINS 14
#define PMR_IMPL_BIG_KEEP_MAX \
  ((size_t)1 << (PMR_IMPL_BIG_BIN_SHIFT + PMR_IMPL_BIG_BINS)) /* 128 MiB */

typedef struct pmr_impl_big_list {
  pmr_impl_big_block live; /* sentinel of the blocks in use; live.size: their
                              bytes */
  pmr_impl_big_block *bins[PMR_IMPL_BIG_BINS]; /* kept, linked by next */
  size_t kept;                                 /* bytes of the kept blocks */
  size_t retain;                               /* at most this many */
  /* The page source whose resident memory counts the blocks that are
   * mappings (set by pmr_impl_source_keep; NULL: none). */
  struct pmr_impl_page_source *src;
} pmr_impl_big_list;

/* An empty list that keeps up to `retain` bytes of freed blocks, or none
 * when upstream keeps freed blocks (PMR_TRAIT_KEEPS_FREED): that one keeps
 * what it gets back within its own bound, and a stack of pools keeping the
 * same blocks at two levels would hold twice what either allows. */
void pmr_impl_big_init(pmr_impl_big_list *list,
                       const pmr_mem_resource *upstream, size_t retain);

/* A run of `pages`' free pages (pmr_impl_source_take_run, page_heap.h),
 * else a kept block or one from upstream, linked into list; NULL when
 * upstream fails. lock (a pmr_impl_spin *, from spin_lock.h, which this header
 * does not include so that C++ tests can; NULL: none) guards the list; it is
 * held only while the list changes, never while upstream runs. pages: the
 * pool's page source, whose free pages give memory back before a block is
 * mapped, as much as it would take the pool above its peak
 * (pmr_impl_source_make_room; NULL: none). */
struct pmr_impl_page_source;
void *pmr_impl_big_alloc(pmr_impl_big_list *list, void *lock,
                         pmr_mem_resource *upstream,
                         struct pmr_impl_page_source *pages, size_t bytes,
                         size_t alignment);
/* Gives a run back to the source's free pages (list->src's, with no upstream
 * call when it is shared); else unlinks p (under lock, NULL: none) and
 * keeps it or gives it back to upstream (with any kept block beyond the
 * bound). */
void pmr_impl_big_free(pmr_impl_big_list *list, void *lock,
                       pmr_mem_resource *upstream, void *p, size_t bytes,
                       size_t alignment);
/* try_resize of an oversize block p from old_bytes to new_bytes (both
 * oversize): true when the block's memory (a run's pages, or its own)
 * holds new_bytes and it shrinks by at most half; its trailer then moves (under
 * lock, as for pmr_impl_big_alloc). A mapped block has room for about four
 * times its first size (address space only: untouched memory is not resident),
 * so a buffer that doubles grows in place twice of every three times, with no
 * copy and no new mapping. Growth first gives back as much of `pages`'
 * free memory as a new block would. */
bool pmr_impl_big_try_resize(pmr_impl_big_list *list, void *lock,
                             struct pmr_impl_page_source *pages, void *p,
                             size_t old_bytes, size_t new_bytes);
/* After upstream refused a request: every kept block, and every segment of
 * `pages` (NULL: none) with no block in use, back to upstream (lock: as
 * for pmr_impl_big_alloc, not held); returns the bytes. */
size_t pmr_impl_big_give_back(pmr_impl_big_list *list, void *lock,
                              pmr_mem_resource *upstream,
                              struct pmr_impl_page_source *pages);
/* Gives every kept block back to upstream; returns their bytes. */
size_t pmr_impl_big_trim(pmr_impl_big_list *list, void *lock,
                         pmr_mem_resource *upstream);
/* Frees every block, in use or kept (no lock: nothing else runs). */
void pmr_impl_big_release(pmr_impl_big_list *list, pmr_mem_resource *upstream);

/* Debug builds: checks a deallocation against the live-block table t and,
 * on misuse, reports it naming `kind` and the resource. Returns true when
 * the deallocation may proceed. pooled: the block belongs to a size class. */
struct pmr_impl_track;
bool pmr_impl_pool_debug_free(struct pmr_impl_track *t, const char *kind,
                              const void *resource, void *p, size_t bytes,
                              size_t alignment, bool pooled);
/* The same, and the table's record of a new block p, for a pool whose table
 * threads share: under lock (a pmr_impl_spin *, as for pmr_impl_big_alloc),
 * which a report also holds. */
bool pmr_impl_pool_debug_free_locked(struct pmr_impl_track *t, void *lock,
                                     const char *kind, const void *resource,
                                     void *p, size_t bytes, size_t alignment,
                                     bool pooled);
void pmr_impl_pool_debug_add_locked(struct pmr_impl_track *t, void *lock,
                                    const void *p, size_t bytes,
                                    size_t alignment);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PMR_IMPL_POOL_CORE_H */
