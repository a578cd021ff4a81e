/* PRIVATE: the engine's resource: the pools' and the thread cache's
 * operations, written once, over page heaps (page_heap.h).
 *
 * Two shapes of one state:
 *   - shared (pmr_synchronized_pool, pmr_thread_cache, the drop-in malloc):
 *     a page heap per thread (thread_heap.h), found through the thread's
 *     slot; a free by a thread that does not own the block's page goes onto
 *     the page's remote list;
 *   - single (pmr_unsynchronized_pool): one page heap, right after the
 *     state (pmr_impl_heap_resource_single), which every call owns.
 * The shape is a constant in each table of operations, so that the single
 * shape's fast paths hold no owner test and no thread-local load.
 *
 * A public type's state is one of these at the start of its
 * PMR_IMPL_STATE. Here: the fast paths, oversize blocks, the debug checks
 * and the verbs. */
#ifndef PMR_IMPL_HEAP_RESOURCE_H
#define PMR_IMPL_HEAP_RESOURCE_H

#include <stddef.h>

#include "resources/internal/oversize.h"
#include "resources/internal/thread_heap.h"
#include "resources/internal/thread_slots.h"

typedef struct pmr_impl_heap_resource {
  /* What the fast paths read, set at init: every thread reads these lines
   * and none writes them (the source keeps what changes apart). */
  size_t small_limit;        /* min(largest, 1024): the fast path's sizes */
  pmr_impl_slot_owner slots; /* finds the calling thread's heap */
  /* A class's offset in a heap / 8, by pmr_impl_heap_key (below
   * small_limit): the same in every heap. */
  uint8_t small_off[PMR_IMPL_POOL_TABLE_LIMIT];
  pmr_impl_thread_heaps heaps; /* source (frame geometry first), heaps */
  size_t largest;              /* largest pooled size */
  pmr_impl_spin oversize_lock; /* guards oversize and debug */
  pmr_impl_oversize_list oversize;
  struct pmr_impl_track *debug; /* PMR_DEBUG builds only */
  const char *type_name;        /* the public type's name, for reports */
  bool shared;                  /* the shape (above) */
  bool live;
} pmr_impl_heap_resource;

/* The single shape's state: the resource, then its one heap. Its source is
 * heaps.src, its heap list unused. */
typedef struct pmr_impl_heap_resource_single {
  pmr_impl_heap_resource r;
  pmr_impl_page_heap heap;
} pmr_impl_heap_resource_single;

/* Where a public type's state lies from its base (both types: the base,
 * then PMR_IMPL_STATE). */
#define PMR_IMPL_HEAP_RESOURCE_OFFSET sizeof(pmr_mem_resource)

/* The operations of the live instance s (after an init below), for its
 * shape: for a source whose frames are segments, a deallocation that does
 * not read the source's geometry (page_source.h: pmr_impl_page_of_seg);
 * with a fast path up to PMR_IMPL_POOL_TABLE_LIMIT too, nor the size
 * bound. */
const pmr_mem_resource_ops *pmr_impl_heap_resource_ops_of(
    const pmr_impl_heap_resource *s);

/* The shared shape's allocate and deallocate, for a caller that knows the
 * resource at `self` is one of these (the drop-in malloc): no indirect
 * call. */
void *pmr_impl_heap_resource_allocate(pmr_mem_resource *self, size_t bytes,
                                      size_t alignment);
void pmr_impl_heap_resource_deallocate(pmr_mem_resource *self, void *p,
                                       size_t bytes, size_t alignment);

/* Deallocation without a size (shared shape): when p is a pooled block of
 * the resource at `self` (it lies in one of its pages serving a class),
 * frees it and
 * returns its size; else (an oversize block, or memory not the
 * resource's) does nothing and returns 0. Any thread; errno untouched. */
size_t pmr_impl_heap_resource_free_unsized(pmr_mem_resource *self, void *p);

/* The fast paths inline, for a caller that knows s's address (the drop-in
 * malloc, whose resource is a static object): no call, no indirection.
 *
 * A block for key (pmr_impl_heap_key; `limit` is s->small_limit, read by
 * the caller so that it may publish it after the rest of s) from the
 * calling thread's heap's current page, or NULL: then call
 * pmr_impl_heap_resource_allocate. Debug builds: always NULL. */
static inline void *pmr_impl_heap_resource_alloc_fast(pmr_impl_heap_resource *s,
                                                      size_t key,
                                                      size_t limit) {
#ifndef PMR_DEBUG
  if (PMR_LIKELY(key < limit)) {
    pmr_impl_page_heap *h =
        (pmr_impl_page_heap *)pmr_impl_slots_mine(&s->slots);
    return pmr_impl_heap_pop(pmr_impl_heap_small(h, s->small_off, key));
  }
#else
  (void)s;
  (void)key;
  (void)limit;
#endif
  return NULL;
}

/* Frees p, which starts a block of page pg, and pg's heap is the calling
 * thread's: pmr_impl_page_push_started (page_heap.h, "misuse"). */
static inline void pmr_impl_heap_resource_free_local(pmr_impl_page *pg,
                                                     void *p) {
  if (PMR_UNLIKELY(pmr_impl_page_push_started(pg, p)))
    pmr_impl_heap_free_slow(pg);
}

/* Frees p of page pg, a pooled block by its size: locally when the calling
 * thread owns pg's heap (always, in the single shape: shared false), else
 * onto pg's remote list; misuse is reported (page_heap.h). The start check
 * comes first: only a page that serves a class passes it, and only such a
 * page has a heap to read (a block freed twice may lie in a page that went
 * back to the source). */
static inline void pmr_impl_heap_resource_free_pooled(pmr_impl_page *pg,
                                                      void *p, bool shared) {
  if (PMR_LIKELY(pmr_impl_block_starts(pg, p) &&
                 (!shared || pmr_impl_thread_heap_mine(pg))))
    pmr_impl_heap_resource_free_local(pg, p);
  else if (shared)
    pmr_impl_heap_free_remote(pg, p);
  else
    pmr_impl_page_free_suspect(pg, p);
}

/* Frees p when it is a pooled block of s's (true): pushed locally when its
 * page's heap is the calling thread's, else onto the page's remote list, so
 * that a free looks its page up once. Else does nothing (false: then call
 * pmr_impl_heap_resource_free_unsized, or take p as an oversize block or no
 * block of s's). Any pointer: one that is not s's is told by the page map.
 * Debug builds: always false. */
static inline bool pmr_impl_heap_resource_free_fast(pmr_impl_heap_resource *s,
                                                    void *p) {
#ifndef PMR_DEBUG
  if (PMR_UNLIKELY(pmr_impl_page_map_get(p) != &s->heaps.src)) return false;
  pmr_impl_page *pg = pmr_impl_page_of(&s->heaps.src, p);
  /* The start check first: only a class's page passes it, and only such a
   * page has a heap to read. A run's pages (oversize), a page that serves
   * no class and a pointer inside a block go to the slow path, which tells
   * them apart (and reports misuse). */
  if (PMR_UNLIKELY(!pmr_impl_block_starts(pg, p))) return false;
  pmr_impl_heap_resource_free_pooled(pg, p, true); /* the start check folds */
  return true;
#else
  (void)s;
  (void)p;
  return false;
#endif
}

/* Initialises s, the state of a shared resource (at
 * PMR_IMPL_HEAP_RESOURCE_OFFSET from its base). opts: effective
 * (pmr_impl_heap_options). Never calls upstream; false only when malloc
 * fails (the registry of instances grows). An instance still live is
 * destroyed first (debug builds report it). */
bool pmr_impl_heap_resource_init(pmr_impl_heap_resource *s,
                                 const pmr_pool_options *opts,
                                 pmr_mem_resource *upstream,
                                 const char *type_name);
/* The same for the single shape; never fails, registers nothing (the
 * caller tells a live instance apart). */
void pmr_impl_heap_resource_init_single(pmr_impl_heap_resource_single *s,
                                        const pmr_pool_options *opts,
                                        pmr_mem_resource *upstream,
                                        const char *type_name);

/* Every heap taken back, every segment and oversize block to upstream; s
 * stays usable. Nothing when s is not live. */
void pmr_impl_heap_resource_release(pmr_impl_heap_resource *s);
/* The same, and s is no longer live. Returns whether it was. */
bool pmr_impl_heap_resource_destroy(pmr_impl_heap_resource *s);
/* The calling thread's heap trimmed (shared: thread_heap.h's trim, also
 * of exited threads' heaps), then every segment with no block in use and
 * every kept oversize block to upstream; returns the bytes. */
size_t pmr_impl_heap_resource_trim(pmr_impl_heap_resource *s);

typedef struct pmr_impl_heap_resource_stats {
  size_t threads, thread_page_bytes, pages_taken, pages_returned;
  size_t segment_bytes, free_page_bytes, oversize_bytes, free_oversize_bytes;
  size_t run_bytes; /* oversize blocks in runs of pages (in segment_bytes) */
} pmr_impl_heap_resource_stats;

/* A snapshot (zeros when s is not live; threads and thread pages 0 in the
 * single shape). */
pmr_impl_heap_resource_stats pmr_impl_heap_resource_get_stats(
    pmr_impl_heap_resource *s);

/* The same as the pools' statistics (pmr_pool_options.h). */
pmr_pool_stats pmr_impl_heap_resource_pool_stats(pmr_impl_heap_resource *s);

#endif /* PMR_IMPL_HEAP_RESOURCE_H */
