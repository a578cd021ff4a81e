/* pmr_synchronized_pool: shards of page heaps over one shared page source. */
#include "resources/pmr_synchronized_pool.h"

#include <errno.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>

#include "resources/internal/debug_track.h"
#include "resources/internal/live_registry.h"
#include "resources/internal/os_mem.h"
#include "resources/internal/sharded_heap.h"

typedef struct state {
  pmr_impl_sharded_heap heap;
  pmr_pool_options opts;  /* effective */
  size_t small_limit;     /* min(largest, table limit): keys below are fast */
  pmr_impl_spin big_lock; /* guards big and debug */
  pmr_impl_big_list big;
  pmr_impl_track *debug;   /* PMR_DEBUG builds only */
  pmr_impl_live_node node; /* in the registry of live pools */
} state;

_Static_assert(sizeof(state) <=
                   sizeof(((pmr_synchronized_pool *)0)->pmr_impl_state),
               "pmr_synchronized_pool.pmr_impl_state is too small");
_Static_assert(PMR_SYNC_POOL_SHARDS == PMR_IMPL_SHARDS, "one shard count");

static state *state_of(pmr_mem_resource *self) {
  return (state *)(void *)((pmr_synchronized_pool *)self)->pmr_impl_state.bytes;
}
static const state *cstate_of(const pmr_synchronized_pool *p) {
  return (const state *)(const void *)p->pmr_impl_state.bytes;
}

/* True when a request whose block size is sz is served by the pages
 * (otherwise by an oversize block from upstream). */
static bool is_pooled(const state *s, size_t sz, size_t alignment) {
  return sz <= s->opts.largest_required_pool_block &&
         alignment <= PMR_IMPL_POOL_MAX_BLOCK_ALIGN;
}

/* Everything but the fast path: shard creation or contention, page changes,
 * sizes above 1024, 0 bytes, oversize, debug tracking, giving segments back
 * that deallocation left for later. */
PMR_NOINLINE static void *sync_allocate_slow(state *s, size_t bytes,
                                             size_t alignment) {
  int saved = errno; /* kept on success: a shard that could not be made
                        does not fail a request another shard serves */
  void *p;
  size_t sz = pmr_impl_pool_block_size(bytes, alignment);
  if (PMR_LIKELY(is_pooled(s, sz, alignment))) {
    /* Upstream is never called with a lock held. */
    pmr_impl_shard *sh = pmr_impl_sharded_lock_mine(&s->heap);
    if (PMR_UNLIKELY(sh == NULL)) return NULL;
    p = pmr_impl_sharded_alloc(&s->heap, &sh, PMR_IMPL_SHARDS,
                               pmr_impl_pool_class_of(sz));
    if (sh != NULL) pmr_impl_spin_unlock(&sh->lock);
  } else {
    p = pmr_impl_big_alloc(&s->big, &s->big_lock, s->heap.src.upstream,
                           &s->heap.src, bytes, alignment);
  }
  pmr_impl_sharded_shrink(&s->heap);
#ifdef PMR_DEBUG
  if (p != NULL)
    pmr_impl_pool_debug_add_locked(s->debug, &s->big_lock, p, bytes, alignment);
#endif
  if (p != NULL) errno = saved;
  return p;
}

static void *sync_allocate(pmr_mem_resource *self, size_t bytes,
                           size_t alignment) {
  state *s = state_of(self);
#ifndef PMR_DEBUG /* debug builds track every block: always the slow path */
  size_t key = pmr_impl_heap_key(bytes, alignment);
  if (PMR_LIKELY(key < s->small_limit)) {
    pmr_impl_shard *sh = pmr_impl_sharded_mine(&s->heap);
    if (PMR_LIKELY(pmr_impl_spin_try_lock_own(&sh->lock))) {
      void *b = pmr_impl_heap_pop(pmr_impl_heap_small(&sh->heap, key));
      pmr_impl_spin_unlock(&sh->lock);
      if (PMR_LIKELY(b != NULL)) return b;
    }
  }
#endif
  return sync_allocate_slow(s, bytes, alignment);
}

PMR_NOINLINE static void sync_deallocate_slow(pmr_mem_resource *self, void *p,
                                              size_t bytes, size_t alignment) {
  state *s = state_of(self);
  size_t sz = pmr_impl_pool_block_size(bytes, alignment);
  bool pooled = is_pooled(s, sz, alignment);
#ifdef PMR_DEBUG
  if (!pmr_impl_pool_debug_free_locked(s->debug, &s->big_lock,
                                       "synchronized_pool", self, p, bytes,
                                       alignment, pooled))
    return;
#endif
  if (PMR_LIKELY(pooled))
    pmr_impl_sharded_free_home(&s->heap, p);
  else
    pmr_impl_big_free(&s->big, &s->big_lock, s->heap.src.upstream, p, bytes,
                      alignment);
}

static void sync_deallocate(pmr_mem_resource *self, void *p, size_t bytes,
                            size_t alignment) {
#ifndef PMR_DEBUG
  state *s = state_of(self);
  if (PMR_LIKELY(pmr_impl_heap_key(bytes, alignment) < s->small_limit)) {
    pmr_impl_sharded_free_home(&s->heap, p);
    return;
  }
#endif
  sync_deallocate_slow(self, p, bytes, alignment);
}

static bool sync_try_resize(pmr_mem_resource *self, void *p, size_t old_bytes,
                            size_t new_bytes, size_t alignment) {
  state *s = state_of(self);
  size_t a = pmr_impl_pool_block_size(old_bytes, alignment);
  size_t b = pmr_impl_pool_block_size(new_bytes, alignment);
  if (!is_pooled(s, a, alignment) || !is_pooled(s, b, alignment) ||
      pmr_impl_pool_class_of(a) != pmr_impl_pool_class_of(b))
    return false;
#ifdef PMR_DEBUG
  if (!pmr_impl_pool_debug_free_locked(s->debug, &s->big_lock,
                                       "synchronized_pool", self, p, old_bytes,
                                       alignment, true))
    return false;
  pmr_impl_pool_debug_add_locked(s->debug, &s->big_lock, p, new_bytes,
                                 alignment);
  return true;
#else
  (void)p;
  return true;
#endif
}

static const pmr_mem_resource_ops sync_ops = {
    .allocate = sync_allocate,
    .deallocate = sync_deallocate,
    .try_resize = sync_try_resize,
};

/* A destroyed pool's: every call fails (live_registry.h). */
PMR_IMPL_DESTROYED_OPS(destroyed_ops, "synchronized_pool");

/* ---- live pools ------------------------------------------------------------
 * Before fork(): every live pool's create_lock, page source lock, shard
 * locks and big_lock. */

/* Lock k of pool instance: its heap's (create_lock first: no shard appears
 * after it is held), then big_lock. */
static bool lock_at(void *instance, size_t k, pmr_impl_live_lock *out) {
  state *s = state_of(&((pmr_synchronized_pool *)instance)->base);
  pmr_impl_spin *all[PMR_IMPL_SHARDS + 3];
  size_t n = pmr_impl_sharded_locks(&s->heap, all);
  all[n++] = &s->big_lock;
  if (k >= n) return false;
  out->spin = all[k];
  out->mutex = NULL;
  return true;
}

static pmr_impl_live_registry registry =
    PMR_IMPL_LIVE_REGISTRY("synchronized_pool", lock_at, NULL);

static pmr_mem_resource *upstream_of(const pmr_mem_resource *r) {
  return pmr_synchronized_pool_upstream((const pmr_synchronized_pool *)r);
}
static const pmr_impl_pool_kind kind = {PMR_IMPL_KIND_SYNC_POOL, &sync_ops,
                                        upstream_of};

bool pmr_synchronized_pool_init(pmr_synchronized_pool *p,
                                const pmr_pool_options *opts,
                                pmr_mem_resource *upstream) {
  PMR_IMPL_CHECK_NOT_NULL(p, "synchronized_pool", false);
  state *s = state_of(&p->base);
  if (pmr_impl_live_has(&registry, p)) {
    /* Init over a live pool: it is destroyed first (nothing leaks). */
#ifdef PMR_DEBUG
    pmr_impl_live_report_init(&registry, p);
#endif
    pmr_synchronized_pool_destroy(p);
  }
  p->base.ops = &sync_ops;
  pmr_impl_os_register_pool(&kind);
  s->opts = pmr_impl_heap_options(opts);
  pmr_impl_sharded_init(&s->heap, upstream, &s->opts);
  s->small_limit =
      pmr_impl_pool_small_limit(s->opts.largest_required_pool_block);
  atomic_init(&s->big_lock, 0);
  pmr_impl_big_init(&s->big, s->heap.src.upstream, s->opts.max_free_bytes);
#ifdef PMR_DEBUG
  s->debug = pmr_impl_track_new();
#else
  s->debug = NULL;
#endif
  pmr_impl_live_add(&registry, &s->node, p);
  return true;
}

/* Under registry.lock: not while fork's prepare holds the pool's locks. */
static void release_locked(state *s) {
  pmr_impl_sharded_release(&s->heap);
  pmr_impl_big_release(&s->big, s->heap.src.upstream);
  pmr_impl_track_clear(s->debug);
}

void pmr_synchronized_pool_release(pmr_synchronized_pool *p) {
  PMR_IMPL_CHECK_NOT_NULL(p, "synchronized_pool", );
  state *s = state_of(&p->base);
  pthread_mutex_lock(&registry.lock);
  if (s->node.listed) release_locked(s);
  pthread_mutex_unlock(&registry.lock);
}

void pmr_synchronized_pool_destroy(pmr_synchronized_pool *p) {
  PMR_IMPL_CHECK_NOT_NULL(p, "synchronized_pool", );
  state *s = state_of(&p->base);
  /* destroyed already, or never initialised */
  if (!pmr_impl_live_has(&registry, p)) return;
  pmr_synchronized_pool_release(p);
  pmr_impl_live_remove(&registry, &s->node);
  pmr_impl_track_delete(s->debug);
  s->debug = NULL;
  p->base.ops = &destroyed_ops;
}

size_t pmr_synchronized_pool_trim(pmr_synchronized_pool *p) {
  PMR_IMPL_CHECK_NOT_NULL(p, "synchronized_pool", 0);
  state *s = state_of(&p->base);
  if (!s->node.listed) return 0;
  size_t given = pmr_impl_big_trim(&s->big, &s->big_lock, s->heap.src.upstream);
  return given + pmr_impl_sharded_trim(&s->heap);
}

pmr_pool_stats pmr_synchronized_pool_get_stats(const pmr_synchronized_pool *p) {
  PMR_IMPL_CHECK_NOT_NULL(p, "synchronized_pool", (pmr_pool_stats){0});
  state *s = (state *)(void *)p->pmr_impl_state.bytes; /* locks are taken */
  pmr_pool_stats st = {0, 0, 0, 0};
  if (!s->node.listed) return st;
  pmr_impl_spin_lock(&s->big_lock);
  st.oversize_bytes = s->big.live.size;
  st.free_oversize_bytes = s->big.kept;
  pmr_impl_spin_unlock(&s->big_lock);
  st.held_bytes = st.oversize_bytes + st.free_oversize_bytes;
  pmr_impl_sharded_stats(&s->heap, &st);
  return st;
}

pmr_pool_options pmr_synchronized_pool_get_options(
    const pmr_synchronized_pool *p) {
  PMR_IMPL_CHECK_NOT_NULL(p, "synchronized_pool", (pmr_pool_options){0});
  return cstate_of(p)->opts;
}

pmr_mem_resource *pmr_synchronized_pool_upstream(
    const pmr_synchronized_pool *p) {
  PMR_IMPL_CHECK_NOT_NULL(p, "synchronized_pool", NULL);
  return cstate_of(p)->heap.src.upstream;
}
