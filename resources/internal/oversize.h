/* PRIVATE: what the pool resources share above their pages (page_heap.h):
 * the list of oversize blocks. Not installed, not public. */
#ifndef PMR_IMPL_OVERSIZE_H
#define PMR_IMPL_OVERSIZE_H

#include <stdbool.h>
#include <stdint.h>

#include "mem_resource/pmr_mem_resource.h"
#include "resources/internal/mem_check.h"
#include "resources/internal/pool_classes.h"
#include "resources/pmr_pool_options.h"

#ifdef __cplusplus
extern "C" {
#endif

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
 * Over the malloc resource (pmr_impl_os_direct, platform.h), blocks of at
 * least PMR_IMPL_OS_LARGE_MIN bytes are mapped from the OS and unmapped when
 * they go back, instead of leaving holes in malloc's heap. */
typedef struct pmr_impl_oversize_block {
  /* Of a block in use: pmr_impl_oversize_check(this trailer), first so that an
   * overflow past the block's end changes it before anything the list
   * follows; a deallocation that finds it changed (an overflow, or a size
   * that is not the block's) reports it and follows no link. */
  uintptr_t check;
  struct pmr_impl_oversize_block *prev, *next; /* kept: next links its bin */
  size_t size;      /* total bytes asked of upstream, trailer included (of
                       a mapped block: the most it has used); in the
                       list's sentinel: the sum over the list */
  size_t cap;       /* bytes of memory from start: size, or more for a
                       mapped block with room to grow in place */
  size_t alignment; /* alignment asked of upstream */
  char *start;      /* the block, as upstream gave it */
} pmr_impl_oversize_block;

/* Kept blocks are binned by the power of two of their size, from 2^13 to
 * below PMR_IMPL_OVERSIZE_KEEP_MAX; larger ones are never kept. */
#define PMR_IMPL_OVERSIZE_BIN_SHIFT 13
#define PMR_IMPL_OVERSIZE_BINS 14
#define PMR_IMPL_OVERSIZE_KEEP_MAX             \
  ((size_t)1 << (PMR_IMPL_OVERSIZE_BIN_SHIFT + \
                 PMR_IMPL_OVERSIZE_BINS)) /* 128 MiB */

typedef struct pmr_impl_oversize_list {
  /* Sentinel of the blocks in use; live.size: their bytes. */
  pmr_impl_oversize_block live;
  /* Kept, linked by next. */
  pmr_impl_oversize_block *bins[PMR_IMPL_OVERSIZE_BINS];
  size_t kept;   /* bytes of the kept blocks */
  size_t retain; /* at most this many */
  /* The page source whose resident memory counts the blocks that are
   * mappings, and the list's lock (set by pmr_impl_oversize_attach; NULL:
   * none). */
  struct pmr_impl_page_source *src;
  void *lock;
} pmr_impl_oversize_list;

/* An empty list that keeps up to `retain` bytes of freed blocks, or none
 * when upstream keeps freed blocks (PMR_TRAIT_KEEPS_FREED): that one keeps
 * what it gets back within its own bound, and a stack of pools keeping the
 * same blocks at two levels would hold twice what either allows. */
void pmr_impl_oversize_init(pmr_impl_oversize_list *list,
                            const pmr_mem_resource *upstream, size_t retain);

/* Ties list (its lock: as for pmr_impl_oversize_alloc) to the resource's page
 * source src: the kept blocks all go back to upstream before src takes a
 * new segment (pmr_impl_source_before_grow), and the blocks that are
 * mappings count in src's resident memory from then on. Call before either
 * is used. */
void pmr_impl_oversize_attach(pmr_impl_oversize_list *list, void *lock,
                              struct pmr_impl_page_source *src);

/* A run of `pages`' free pages (pmr_impl_source_take_run, page_source.h),
 * else a kept block or one from upstream, linked into list; NULL when
 * upstream fails. lock (a pmr_impl_spin *, from spin_lock.h, which this header
 * does not include so that C++ tests can; NULL: none) guards the list; it is
 * held only while the list changes, never while upstream runs. pages: the
 * pool's page source, whose free pages give memory back before a block is
 * mapped, as much as it would take the pool above its peak
 * (pmr_impl_source_make_room; NULL: none). */
struct pmr_impl_page_source;
void *pmr_impl_oversize_alloc(pmr_impl_oversize_list *list, void *lock,
                              pmr_mem_resource *upstream,
                              struct pmr_impl_page_source *pages, size_t bytes,
                              size_t alignment);
/* Gives a run back to the source's free pages (list->src's, with no upstream
 * call when it is shared); else unlinks p (under lock, NULL: none) and
 * keeps it or gives it back to upstream (with any kept block beyond the
 * bound). */
void pmr_impl_oversize_free(pmr_impl_oversize_list *list, void *lock,
                            pmr_mem_resource *upstream, void *p, size_t bytes,
                            size_t alignment);
/* try_resize of an oversize block p from old_bytes to new_bytes (both
 * oversize): true when the block's memory (a run's pages, or its own)
 * holds new_bytes, and for a block of upstream's when it shrinks by at most
 * half (a run gives back its pages past the new end, a mapping of its own
 * their memory); its trailer then moves (under
 * lock, as for pmr_impl_oversize_alloc). A mapped block has room for about four
 * times its first size (address space only: untouched memory is not resident),
 * so a buffer that doubles grows in place twice of every three times, with no
 * copy and no new mapping. Growth first gives back as much of `pages`'
 * free memory as a new block would. */
bool pmr_impl_oversize_try_resize(pmr_impl_oversize_list *list, void *lock,
                                  struct pmr_impl_page_source *pages, void *p,
                                  size_t old_bytes, size_t new_bytes);
/* After upstream refused a request: every kept block, and every segment of
 * `pages` (NULL: none) with no block in use, back to upstream (lock: as
 * for pmr_impl_oversize_alloc, not held); returns the bytes. */
size_t pmr_impl_oversize_give_back(pmr_impl_oversize_list *list, void *lock,
                                   pmr_mem_resource *upstream,
                                   struct pmr_impl_page_source *pages);
/* Gives every kept block back to upstream; returns their bytes. */
size_t pmr_impl_oversize_trim(pmr_impl_oversize_list *list, void *lock,
                              pmr_mem_resource *upstream);
/* Frees every block, in use or kept (no lock: nothing else runs). */
void pmr_impl_oversize_release(pmr_impl_oversize_list *list,
                               pmr_mem_resource *upstream);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PMR_IMPL_OVERSIZE_H */
