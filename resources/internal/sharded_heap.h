/* PRIVATE: page heaps in shards over one shared page source, for the
 * thread-safe pools (synchronized_pool, thread_cache's central pool).
 *
 * Each shard is a page heap behind its own spin lock. A thread prefers one
 * shard (handed out round robin at its first use, the same index in every
 * instance) and moves to an idle one when it finds its own busy. A block
 * goes back to the shard that owns its page: under that shard's lock when it
 * is free, else onto the page's lock-free remote list (page_heap.h), so
 * freeing never waits for a lock and never calls upstream. Shards are made
 * (from upstream) by allocation only. */
#ifndef PMR_IMPL_SHARDED_HEAP_H
#define PMR_IMPL_SHARDED_HEAP_H

#include <stdalign.h>

#include "resources/internal/page_heap.h"
#include "resources/internal/tls.h"

#define PMR_IMPL_SHARDS 16u

typedef struct pmr_impl_shard {
  alignas(PMR_IMPL_CACHE_LINE)
      pmr_impl_spin lock; /* own cache line: no false sharing */
  pmr_impl_page_heap heap;
} pmr_impl_shard;

/* The stand-in for "no shard": in slot 0 of every table (a thread that has
 * no shard yet) and in the slots of shards not made yet. Its lock is always
 * taken, so a fast path's one try_lock fails on it and goes to the slow
 * path, with no test of its own. Never unlocked (an exchange writes its 1
 * over 1); nothing else in it is ever written. */
extern pmr_impl_shard pmr_impl_no_shard;

typedef struct pmr_impl_sharded_heap {
  /* slot[i + 1]: shard i, or &pmr_impl_no_shard until it is made;
   * slot[0]: always &pmr_impl_no_shard. Indexed by pmr_impl_tl_shard. */
  _Atomic(pmr_impl_shard *) slot[PMR_IMPL_SHARDS + 1];
  pmr_impl_page_source src;
  /* Shards are made under create_lock, so that fork's prepare, holding it,
   * sees every shard. */
  pmr_impl_spin create_lock;
  uint32_t largest; /* largest pooled size (at most a page's largest block) */
} pmr_impl_sharded_heap;

/* The calling thread's preferred shard plus one; 0 before its first use
 * (tls.h: one load at a fixed offset from the thread pointer). */
extern _Thread_local unsigned pmr_impl_tl_shard PMR_IMPL_TLS_MODEL;

/* Shard i (0 .. PMR_IMPL_SHARDS - 1); NULL until it is made. */
static inline pmr_impl_shard *pmr_impl_sharded_get(pmr_impl_sharded_heap *h,
                                                   unsigned i) {
  pmr_impl_shard *sh =
      atomic_load_explicit(&h->slot[i + 1], memory_order_acquire);
  return sh == &pmr_impl_no_shard ? NULL : sh;
}

/* opts: effective options (pmr_impl_heap_options). Never calls upstream. */
void pmr_impl_sharded_init(pmr_impl_sharded_heap *h, pmr_mem_resource *up,
                           const pmr_pool_options *opts);
/* Shards and segments back to upstream; h stays usable. */
void pmr_impl_sharded_release(pmr_impl_sharded_heap *h);

/* Locks and returns shard i, making it if needed; NULL when it cannot be
 * made. */
pmr_impl_shard *pmr_impl_sharded_lock(pmr_impl_sharded_heap *h, unsigned i);
/* Locks and returns the calling thread's shard, moving the thread to an
 * idle shard if its own is busy. NULL only when no shard exists and none
 * can be made. */
pmr_impl_shard *pmr_impl_sharded_lock_mine(pmr_impl_sharded_heap *h);

/* The calling thread's shard, never NULL: &pmr_impl_no_shard (whose lock
 * is always taken) when the thread has none yet or it is not made yet. A
 * fast path try_locks it and, when that fails, takes its slow path. */
static inline pmr_impl_shard *pmr_impl_sharded_mine(pmr_impl_sharded_heap *h) {
  return atomic_load_explicit(&h->slot[pmr_impl_tl_shard],
                              memory_order_acquire);
}

static inline pmr_impl_shard *pmr_impl_shard_of(pmr_impl_page_heap *heap) {
  return (pmr_impl_shard *)(void *)((char *)heap -
                                    offsetof(pmr_impl_shard, heap));
}

/* A block of class idx from sh (locked), else from another shard whose lock
 * is free, else from pages that shards keep with no block in use; never
 * calls upstream. NULL when the pages held have no such block. */
void *pmr_impl_sharded_alloc_held(pmr_impl_sharded_heap *h, pmr_impl_shard *sh,
                                  unsigned idx);

/* A block of class idx (pmr_impl_pool_class_of) from *shp (locked), else
 * from another shard whose lock is free, without calling upstream; when the
 * pages held are used up, unlocks *shp,
 * adds a segment from upstream with no lock held, then locks shard `home`
 * (PMR_IMPL_SHARDS: the calling thread's) into *shp and tries again. NULL
 * (*shp then unlocked and NULL) when upstream fails. */
void *pmr_impl_sharded_alloc(pmr_impl_sharded_heap *h, pmr_impl_shard **shp,
                             unsigned home, unsigned idx);

/* pmr_impl_heap_free's slow part, then the unlock (a tail call, so that
 * pmr_impl_sharded_free needs no stack frame). */
void pmr_impl_sharded_free_slow(pmr_impl_shard *sh, pmr_impl_page *pg);

/* Gives back pooled block p of page pg: never waits for a lock, never calls
 * upstream. own: pg's shard is the calling thread's, whose lock is almost
 * always free (pmr_impl_spin_try_lock_own). */
static inline void pmr_impl_sharded_free_to(pmr_impl_page *pg, void *p,
                                            bool own) {
  pmr_impl_shard *sh = pmr_impl_shard_of(pg->heap);
  if (PMR_LIKELY(own ? pmr_impl_spin_try_lock_own(&sh->lock)
                     : pmr_impl_spin_try_lock(&sh->lock))) {
    if (pmr_impl_page_push(pg, p)) {
      pmr_impl_sharded_free_slow(sh, pg);
      return;
    }
    pmr_impl_spin_unlock(&sh->lock);
    return;
  }
  pmr_impl_heap_free_remote(pg, p);
}

/* Gives back pooled block p of page pg (any shard's). */
static inline void pmr_impl_sharded_free_at(pmr_impl_page *pg, void *p) {
  pmr_impl_sharded_free_to(pg, p, false);
}

/* Gives back pooled block p of h (pmr_impl_sharded_free_at). */
static inline void pmr_impl_sharded_free(const pmr_impl_sharded_heap *h,
                                         void *p) {
  pmr_impl_sharded_free_at(pmr_impl_page_of(&h->src, p), p);
}

/* Like pmr_impl_sharded_free, for a block a thread frees through the
 * synchronized pool: when the block's shard is not the calling thread's
 * own, it goes onto its page's remote list without touching that shard's
 * lock, which its owner takes at every allocation (a consumer thread freeing
 * what a producer allocates would otherwise make the producer's lock bounce
 * between them, and the producer move to another shard when it finds its
 * own busy). */
static inline void pmr_impl_sharded_free_home(pmr_impl_sharded_heap *h,
                                              void *p) {
  pmr_impl_page *pg = pmr_impl_page_of(&h->src, p);
  if (PMR_LIKELY(atomic_load_explicit(&h->slot[pmr_impl_tl_shard],
                                      memory_order_relaxed) ==
                 pmr_impl_shard_of(pg->heap))) {
    pmr_impl_sharded_free_to(pg, p, true);
    return;
  }
  pmr_impl_heap_free_remote(pg, p);
}

/* Gives back n pooled blocks of h, holding each owning shard's lock across
 * consecutive blocks of that shard (a magazine's worth in one go). */
void pmr_impl_sharded_free_many(const pmr_impl_sharded_heap *h,
                                void *const *blocks, size_t n);

/* Gives segments that deallocation left beyond the retention bound back to
 * upstream, and the OS the memory of pages free long enough (call with no
 * lock held). */
static inline void pmr_impl_sharded_shrink(pmr_impl_sharded_heap *h) {
  if (PMR_UNLIKELY(
          atomic_load_explicit(&h->src.shrink_wanted, memory_order_relaxed) ||
          atomic_load_explicit(&h->src.purge_wanted, memory_order_relaxed)))
    pmr_impl_source_shrink(&h->src);
}

/* Collects every shard's remote frees and gives every segment with no block
 * in use back to upstream; returns the bytes given back. */
size_t pmr_impl_sharded_trim(pmr_impl_sharded_heap *h);

/* Adds what h holds from upstream (segments and shards) to st. */
void pmr_impl_sharded_stats(pmr_impl_sharded_heap *h, pmr_pool_stats *st);

/* For fork: h's locks in one fixed order (create_lock first, the source's
 * last); returns how many (at most PMR_IMPL_SHARDS + 2). */
size_t pmr_impl_sharded_locks(pmr_impl_sharded_heap *h, pmr_impl_spin **all);

#endif /* PMR_IMPL_SHARDED_HEAP_H */
