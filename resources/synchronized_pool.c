/* pmr_synchronized_pool: shards of page heaps over one shared page source. */
#include "resources/pmr_synchronized_pool.h"

#include <errno.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>

#include "resources/internal/debug_track.h"
#include "resources/internal/fork_guard.h"
#include "resources/internal/page_heap.h"
#include "resources/internal/spin_lock.h"

typedef struct shard {
  alignas(64) pmr_impl_spin lock; /* own cache line: shards never false-share */
  pmr_impl_page_heap heap;
} shard;

typedef struct state {
  _Atomic(shard *) shards[PMR_SYNC_POOL_SHARDS];
  pmr_impl_page_source src;
  pmr_pool_options opts;  /* effective */
  size_t small_limit;     /* min(largest, table limit): the fast path's sizes */
  pmr_impl_spin big_lock; /* guards big and debug */
  pmr_impl_big_block big;
  pmr_impl_track *debug; /* PMR_DEBUG builds only */
  /* fork: shards are created under create_lock, so that fork's prepare,
   * holding it, sees every shard; live pools are listed for it. */
  pmr_impl_spin create_lock;
  struct state *prev_live, *next_live; /* live_lock */
  bool live;                           /* live_lock */
} state;

_Static_assert(sizeof(state) <=
                   sizeof(((pmr_synchronized_pool *)0)->pmr_impl_state),
               "pmr_synchronized_pool.pmr_impl_state is too small");

static state *state_of(pmr_mem_resource *self) {
  return (state *)(void *)((pmr_synchronized_pool *)self)->pmr_impl_state.bytes;
}
static const state *cstate_of(const pmr_synchronized_pool *p) {
  return (const state *)(const void *)p->pmr_impl_state.bytes;
}

static shard *shard_of(pmr_impl_page_heap *h) {
  return (shard *)(void *)((char *)h - offsetof(shard, heap));
}

/* Each thread's preferred shard (the same index in every pool), handed out
 * round-robin at a thread's first use and moved when the shard is busy. */
#if defined(__GNUC__) || defined(__clang__)
#define INITIAL_EXEC __attribute__((tls_model("initial-exec")))
#else
#define INITIAL_EXEC
#endif
/* The shard index plus one; 0 until the thread's first use. initial-exec:
 * one %fs-relative load, not a __tls_get_addr call, even in PIC code. */
static _Thread_local unsigned tl_shard INITIAL_EXEC;
static atomic_uint next_shard_hint;

static inline unsigned my_hint(void) {
  if (PMR_UNLIKELY(tl_shard == 0))
    tl_shard = 1 + atomic_fetch_add_explicit(&next_shard_hint, 1,
                                             memory_order_relaxed) %
                       PMR_SYNC_POOL_SHARDS;
  return tl_shard - 1;
}

/* The fast path: the thread's own shard, locked, if it exists and is free. */
static inline shard *try_my_shard(state *s) {
  unsigned i = tl_shard;
  if (PMR_UNLIKELY(i == 0)) return NULL;
  shard *sh = atomic_load_explicit(&s->shards[i - 1], memory_order_acquire);
  if (PMR_LIKELY(sh != NULL && pmr_impl_spin_try_lock(&sh->lock))) return sh;
  return NULL;
}

/* Shards are bookkeeping from upstream, made by allocation only, under
 * create_lock (fork's prepare sees every shard). */
static shard *create_shard(state *s, unsigned i) {
  pmr_impl_spin_lock(&s->create_lock);
  shard *sh = atomic_load_explicit(&s->shards[i], memory_order_acquire);
  if (sh == NULL) {
    sh = (shard *)pmr_allocate(s->src.upstream, sizeof(shard), alignof(shard));
    if (sh != NULL) {
      atomic_init(&sh->lock, 0);
      pmr_impl_heap_init(&sh->heap, &s->src,
                         s->opts.largest_required_pool_block, false);
      atomic_store_explicit(&s->shards[i], sh, memory_order_release);
    }
  }
  pmr_impl_spin_unlock(&s->create_lock);
  return sh;
}

/* Locks and returns the calling thread's shard, moving the thread to an idle
 * shard if its own is busy. NULL only when no shard exists and none can be
 * created. */
PMR_NOINLINE static shard *lock_my_shard(state *s) {
  unsigned i = my_hint();
  shard *sh = atomic_load_explicit(&s->shards[i], memory_order_acquire);
  if (PMR_LIKELY(sh != NULL && pmr_impl_spin_try_lock(&sh->lock))) return sh;
  if (sh == NULL && (sh = create_shard(s, i)) != NULL &&
      pmr_impl_spin_try_lock(&sh->lock))
    return sh;
  for (unsigned n = 1; n < PMR_SYNC_POOL_SHARDS; ++n) {
    unsigned j = (i + n) % PMR_SYNC_POOL_SHARDS;
    shard *other = atomic_load_explicit(&s->shards[j], memory_order_acquire);
    if (other != NULL && pmr_impl_spin_try_lock(&other->lock)) {
      tl_shard = j + 1; /* prefer the idle one from now on */
      return other;
    }
  }
  if (sh == NULL) {
    for (unsigned j = 0; j < PMR_SYNC_POOL_SHARDS && sh == NULL; ++j)
      sh = atomic_load_explicit(&s->shards[j], memory_order_acquire);
    if (sh == NULL) return NULL;
  }
  pmr_impl_spin_lock(&sh->lock);
  return sh;
}

/* Everything but the fast path: shard creation or contention, page changes,
 * sizes above 1024, 0 bytes, oversize, debug tracking, giving segments back
 * that deallocation left for later. */
PMR_NOINLINE static void *sync_allocate_slow(state *s, size_t bytes,
                                             size_t alignment) {
  int saved = errno; /* kept on success: a shard that could not be made
                        does not fail a request another shard serves */
  void *p;
  size_t sz = ((bytes + (bytes == 0)) + (alignment - 1)) & ~(alignment - 1);
  if (PMR_LIKELY(sz <= s->opts.largest_required_pool_block &&
                 alignment <= PMR_IMPL_POOL_MAX_BLOCK_ALIGN)) {
    shard *sh = lock_my_shard(s);
    if (PMR_UNLIKELY(sh == NULL)) return NULL;
    p = pmr_impl_heap_alloc(&sh->heap,
                            &sh->heap.classes[pmr_impl_pool_class_of(sz)]);
    pmr_impl_spin_unlock(&sh->lock);
  } else {
    p = pmr_impl_big_alloc(&s->big, &s->big_lock, s->src.upstream, bytes,
                           alignment);
  }
  if (PMR_UNLIKELY(
          atomic_load_explicit(&s->src.shrink_wanted, memory_order_relaxed))) {
    atomic_store_explicit(&s->src.shrink_wanted, false, memory_order_relaxed);
    pmr_impl_source_trim(&s->src, s->src.retain_pages);
  }
#ifdef PMR_DEBUG
  if (p != NULL) {
    pmr_impl_spin_lock(&s->big_lock);
    pmr_impl_track_add(s->debug, p, bytes, alignment);
    pmr_impl_spin_unlock(&s->big_lock);
  }
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
    shard *sh = try_my_shard(s);
    if (PMR_LIKELY(sh != NULL)) {
      pmr_impl_page_class *k = pmr_impl_heap_small(&sh->heap, key);
      pmr_impl_page *pg = k->current;
      void *b = pg->free;
      if (PMR_LIKELY(b != NULL)) {
        pg->free = pmr_impl_link_get(b);
        pg->used++;
        pmr_impl_spin_unlock(&sh->lock);
        PMR_IMPL_UNDEFINED(b, pg->block);
        return b;
      }
      pmr_impl_spin_unlock(&sh->lock);
    }
  }
#endif
  return sync_allocate_slow(s, bytes, alignment);
}

/* pmr_impl_heap_free's slow part, then the unlock (a tail call from
 * free_pooled, so the fast path needs no stack frame). */
PMR_NOINLINE static void free_slow_unlock(shard *sh, pmr_impl_page *pg) {
  pmr_impl_heap_free_slow(pg);
  pmr_impl_spin_unlock(&sh->lock);
}

/* A pooled block back to the shard that owns its page: under that shard's
 * lock when it is free, else onto the page's remote list. Never calls
 * upstream and never waits for a lock. */
static inline void free_pooled(void *p) {
  pmr_impl_page *pg = pmr_impl_page_of(p);
  shard *sh = shard_of(pg->heap);
  if (PMR_LIKELY(pmr_impl_spin_try_lock(&sh->lock))) {
    void *head = pg->free;
    PMR_IMPL_NOACCESS(p, pg->block);
    pmr_impl_link_set(p, head);
    pg->free = p;
    uint32_t used = --pg->used;
    if (PMR_UNLIKELY(used - 1 >= pg->limit)) {
      free_slow_unlock(sh, pg);
      return;
    }
    pmr_impl_spin_unlock(&sh->lock);
    return;
  }
  pmr_impl_heap_free_remote(p);
}

PMR_NOINLINE static void sync_deallocate_slow(pmr_mem_resource *self, void *p,
                                              size_t bytes, size_t alignment) {
  state *s = state_of(self);
  size_t sz = ((bytes + (bytes == 0)) + (alignment - 1)) & ~(alignment - 1);
  bool pooled = sz <= s->opts.largest_required_pool_block &&
                alignment <= PMR_IMPL_POOL_MAX_BLOCK_ALIGN;
#ifdef PMR_DEBUG
  pmr_impl_spin_lock(&s->big_lock);
  bool ok = pmr_impl_pool_debug_free(s->debug, "synchronized_pool", self, p,
                                     bytes, alignment, pooled);
  pmr_impl_spin_unlock(&s->big_lock);
  if (!ok) return;
#endif
  if (PMR_LIKELY(pooled))
    free_pooled(p);
  else
    pmr_impl_big_free(&s->big, &s->big_lock, s->src.upstream, p, bytes,
                      alignment);
}

static void sync_deallocate(pmr_mem_resource *self, void *p, size_t bytes,
                            size_t alignment) {
#ifndef PMR_DEBUG
  state *s = state_of(self);
  if (PMR_LIKELY(pmr_impl_heap_key(bytes, alignment) < s->small_limit)) {
    free_pooled(p);
    return;
  }
#endif
  sync_deallocate_slow(self, p, bytes, alignment);
}

static bool sync_try_resize(pmr_mem_resource *self, void *p, size_t old_bytes,
                            size_t new_bytes, size_t alignment) {
  state *s = state_of(self);
  size_t largest = s->opts.largest_required_pool_block;
  size_t a =
      ((old_bytes + (old_bytes == 0)) + (alignment - 1)) & ~(alignment - 1);
  size_t b =
      ((new_bytes + (new_bytes == 0)) + (alignment - 1)) & ~(alignment - 1);
  if (a > largest || b > largest || alignment > PMR_IMPL_POOL_MAX_BLOCK_ALIGN ||
      pmr_impl_pool_class_of(a) != pmr_impl_pool_class_of(b))
    return false;
#ifdef PMR_DEBUG
  pmr_impl_spin_lock(&s->big_lock);
  bool ok = pmr_impl_pool_debug_free(s->debug, "synchronized_pool", self, p,
                                     old_bytes, alignment, true);
  if (ok) pmr_impl_track_add(s->debug, p, new_bytes, alignment);
  pmr_impl_spin_unlock(&s->big_lock);
  return ok;
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

/* ---- fork ------------------------------------------------------------------
 * Before fork(): every live pool's create_lock, big_lock, page source lock
 * and shard locks. */

static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static state *live_pools; /* live_lock */

#define LOCKS (PMR_SYNC_POOL_SHARDS + 3)

/* The locks of s in one fixed order; returns how many. create_lock first:
 * no shard appears after it is held. */
static size_t list_locks(state *s, pmr_impl_spin *all[LOCKS]) {
  size_t n = 0;
  all[n++] = &s->create_lock;
  all[n++] = &s->big_lock;
  for (unsigned i = 0; i < PMR_SYNC_POOL_SHARDS; ++i) {
    shard *sh = atomic_load_explicit(&s->shards[i], memory_order_acquire);
    if (sh != NULL) all[n++] = &sh->lock;
  }
  all[n++] = &s->src.lock; /* taken under a shard's lock: last */
  return n;
}

static void unlock_first(state *s, size_t n) {
  pmr_impl_spin *all[LOCKS];
  size_t have = list_locks(s, all);
  if (n > have) n = have;
  while (n > 0) pmr_impl_spin_unlock(all[--n]);
}

static void fork_release_all(void) {
  for (state *s = live_pools; s != NULL; s = s->next_live)
    unlock_first(s, LOCKS);
  pthread_mutex_unlock(&live_lock);
}

static bool fork_take_all(void) {
  if (!pmr_impl_fork_mutex_take(&live_lock)) return false;
  for (state *s = live_pools; s != NULL; s = s->next_live) {
    /* The list is read after create_lock: no shard is added meanwhile. */
    if (!pmr_impl_fork_spin_take(&s->create_lock)) {
      for (state *t = live_pools; t != s; t = t->next_live)
        unlock_first(t, LOCKS);
      pthread_mutex_unlock(&live_lock);
      return false;
    }
    pmr_impl_spin *all[LOCKS];
    size_t n = list_locks(s, all);
    for (size_t k = 1; k < n; ++k) {
      if (pmr_impl_fork_spin_take(all[k])) continue;
      unlock_first(s, k);
      for (state *t = live_pools; t != s; t = t->next_live)
        unlock_first(t, LOCKS);
      pthread_mutex_unlock(&live_lock);
      return false;
    }
  }
  return true;
}

static void fork_child(void) {
  for (state *s = live_pools; s != NULL; s = s->next_live)
    unlock_first(s, LOCKS);
  pthread_mutex_init(&live_lock, NULL);
}

static const pmr_impl_fork_client fork_client = {fork_take_all,
                                                 fork_release_all, fork_child};

/* True when s is listed as live. Compares pointers only: s may be
 * uninitialised memory. */
static bool is_live(const state *s) {
  pthread_mutex_lock(&live_lock);
  const state *t = live_pools;
  while (t != NULL && t != s) t = t->next_live;
  pthread_mutex_unlock(&live_lock);
  return t != NULL;
}

/* Lists s (initialised) as live. */
static void list_live(state *s) {
  pthread_mutex_lock(&live_lock);
  s->prev_live = NULL;
  s->next_live = live_pools;
  if (live_pools != NULL) live_pools->prev_live = s;
  live_pools = s;
  s->live = true;
  pthread_mutex_unlock(&live_lock);
}

/* Unlists s; false when it was not live. */
static bool unlist_live(state *s) {
  pthread_mutex_lock(&live_lock);
  bool was = s->live;
  if (was) {
    if (s->prev_live != NULL)
      s->prev_live->next_live = s->next_live;
    else
      live_pools = s->next_live;
    if (s->next_live != NULL) s->next_live->prev_live = s->prev_live;
    s->live = false;
  }
  pthread_mutex_unlock(&live_lock);
  return was;
}

bool pmr_synchronized_pool_init(pmr_synchronized_pool *p,
                                const pmr_pool_options *opts,
                                pmr_mem_resource *upstream) {
  state *s = state_of(&p->base);
  if (is_live(s)) {
    /* Init over a live pool: it is destroyed first (nothing leaks). */
#ifdef PMR_DEBUG
    pmr_report_misuse(
        "synchronized_pool %p: initialised again while live (not "
        "destroyed); destroying it first",
        (void *)p);
#endif
    pmr_synchronized_pool_destroy(p);
  }
  pmr_impl_fork_register(&fork_client);
  p->base.ops = &sync_ops;
  for (unsigned i = 0; i < PMR_SYNC_POOL_SHARDS; ++i)
    atomic_init(&s->shards[i], NULL);
  s->opts = pmr_impl_heap_options(opts);
  pmr_impl_source_init(&s->src, upstream, s->opts.max_blocks_per_chunk,
                       s->opts.max_free_bytes, true);
  s->small_limit =
      s->opts.largest_required_pool_block < PMR_IMPL_POOL_TABLE_LIMIT
          ? s->opts.largest_required_pool_block
          : PMR_IMPL_POOL_TABLE_LIMIT;
  atomic_init(&s->big_lock, 0);
  pmr_impl_big_init(&s->big);
#ifdef PMR_DEBUG
  s->debug = pmr_impl_track_new();
#else
  s->debug = NULL;
#endif
  atomic_init(&s->create_lock, 0);
  list_live(s);
  return true;
}

/* Under live_lock: not while fork's prepare holds the pool's locks. */
static void release_locked(state *s) {
  for (unsigned i = 0; i < PMR_SYNC_POOL_SHARDS; ++i) {
    shard *sh =
        atomic_exchange_explicit(&s->shards[i], NULL, memory_order_acq_rel);
    if (sh != NULL)
      pmr_deallocate(s->src.upstream, sh, sizeof(shard), alignof(shard));
  }
  pmr_impl_source_release(&s->src);
  pmr_impl_big_release(&s->big, s->src.upstream);
  pmr_impl_track_clear(s->debug);
}

void pmr_synchronized_pool_release(pmr_synchronized_pool *p) {
  state *s = state_of(&p->base);
  pthread_mutex_lock(&live_lock);
  if (s->live) release_locked(s);
  pthread_mutex_unlock(&live_lock);
}

void pmr_synchronized_pool_destroy(pmr_synchronized_pool *p) {
  state *s = state_of(&p->base);
  if (!is_live(s)) return; /* destroyed already, or never initialised */
  pmr_synchronized_pool_release(p);
  unlist_live(s);
  pmr_impl_track_delete(s->debug);
  s->debug = NULL;
}

size_t pmr_synchronized_pool_trim(pmr_synchronized_pool *p) {
  state *s = state_of(&p->base);
  if (!s->live) return 0;
  for (unsigned i = 0; i < PMR_SYNC_POOL_SHARDS; ++i) {
    shard *sh = atomic_load_explicit(&s->shards[i], memory_order_acquire);
    if (sh == NULL) continue;
    pmr_impl_spin_lock(&sh->lock);
    pmr_impl_heap_trim(&sh->heap);
    pmr_impl_spin_unlock(&sh->lock);
  }
  return pmr_impl_source_trim(&s->src, 0);
}

pmr_pool_stats pmr_synchronized_pool_get_stats(const pmr_synchronized_pool *p) {
  state *s = (state *)(void *)p->pmr_impl_state.bytes; /* locks are taken */
  pmr_pool_stats st = {0, 0, 0};
  if (!s->live) return st;
  pmr_impl_spin_lock(&s->big_lock);
  st.oversize_bytes = s->big.size;
  pmr_impl_spin_unlock(&s->big_lock);
  pmr_impl_spin_lock(&s->src.lock);
  st.free_page_bytes = s->src.free_count * PMR_IMPL_PAGE_SIZE;
  st.held_bytes = s->src.segment_bytes + st.oversize_bytes;
  pmr_impl_spin_unlock(&s->src.lock);
  for (unsigned i = 0; i < PMR_SYNC_POOL_SHARDS; ++i)
    if (atomic_load_explicit(&s->shards[i], memory_order_acquire) != NULL)
      st.held_bytes += sizeof(shard);
  return st;
}

pmr_pool_options pmr_synchronized_pool_get_options(
    const pmr_synchronized_pool *p) {
  return cstate_of(p)->opts;
}

pmr_mem_resource *pmr_synchronized_pool_upstream(
    const pmr_synchronized_pool *p) {
  return cstate_of(p)->src.upstream;
}
