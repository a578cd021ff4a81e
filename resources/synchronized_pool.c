/* pmr_synchronized_pool: shards of pool cores, each behind a spin lock. */
#include "resources/pmr_synchronized_pool.h"

#include <errno.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>

#include "resources/internal/debug_track.h"
#include "resources/internal/fork_guard.h"
#include "resources/internal/pool_core.h"
#include "resources/internal/spin_lock.h"

typedef struct shard {
  alignas(64) pmr_impl_spin lock; /* own cache line: shards never false-share */
  pmr_impl_pool_core core;
} shard;

typedef struct state {
  _Atomic(shard *) shards[PMR_SYNC_POOL_SHARDS];
  pmr_mem_resource *upstream;
  pmr_pool_options opts;  /* effective */
  size_t largest;         /* = opts.largest_required_pool_block */
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

static shard *create_shard(state *s, unsigned i) {
  pmr_impl_spin_lock(&s->create_lock);
  shard *sh = atomic_load_explicit(&s->shards[i], memory_order_acquire);
  if (sh == NULL)
    sh = (shard *)pmr_allocate(s->upstream, sizeof(shard), alignof(shard));
  else
    i = PMR_SYNC_POOL_SHARDS; /* made meanwhile */
  if (sh == NULL || i == PMR_SYNC_POOL_SHARDS) {
    pmr_impl_spin_unlock(&s->create_lock);
    return sh;
  }
  atomic_init(&sh->lock, 0);
  pmr_impl_pool_core_init(&sh->core, &s->opts, s->upstream);
  shard *expected = NULL;
  atomic_compare_exchange_strong_explicit(
      &s->shards[i], &expected, sh, memory_order_acq_rel, memory_order_acquire);
  pmr_impl_spin_unlock(&s->create_lock); /* (no other creator: the lock) */
  return sh;
}

/* Locks and returns the calling thread's shard, moving the thread to a free
 * shard if its own is busy. NULL only when no shard exists and none can be
 * created. */
PMR_NOINLINE static shard *lock_my_shard(state *s) {
  unsigned i = my_hint();
  shard *sh = atomic_load_explicit(&s->shards[i], memory_order_acquire);
  if (PMR_LIKELY(sh != NULL && pmr_impl_spin_try_lock(&sh->lock))) return sh;
  /* Busy (or not created yet): look for an idle shard, creating ours first. */
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
    /* Could not create our own shard: wait for any existing one. */
    for (unsigned j = 0; j < PMR_SYNC_POOL_SHARDS && sh == NULL; ++j)
      sh = atomic_load_explicit(&s->shards[j], memory_order_acquire);
    if (sh == NULL) return NULL;
  }
  pmr_impl_spin_lock(&sh->lock);
  return sh;
}

/* The class of index `at` (a byte offset) in another shard. */
static pmr_impl_pool_class *same_class(shard *sh,
                                       const pmr_impl_pool_core *mine,
                                       const pmr_impl_pool_class *k) {
  return (
      pmr_impl_pool_class *)(void *)((char *)&sh->core +
                                     ((const char *)k - (const char *)mine));
}

/* Own shard's class k is empty: take another shard's free list whole. */
static bool steal(state *s, shard *mine, pmr_impl_pool_class *k) {
  for (unsigned j = 0; j < PMR_SYNC_POOL_SHARDS; ++j) {
    shard *other = atomic_load_explicit(&s->shards[j], memory_order_acquire);
    if (other == NULL || other == mine) continue;
    if (!pmr_impl_spin_try_lock(&other->lock)) continue;
    pmr_impl_pool_class *theirs = same_class(other, &mine->core, k);
    void *list = theirs->free;
    theirs->free = NULL;
    pmr_impl_spin_unlock(&other->lock);
    if (list != NULL) {
      k->free = list;
      return true;
    }
  }
  return false;
}

/* Under sh's lock: the class is empty; steal, or refill from upstream. */
PMR_NOINLINE static void *sync_take_slow(state *s, shard *sh,
                                         pmr_impl_pool_class *k) {
  if (steal(s, sh, k)) return pmr_impl_pool_take(k);
  return pmr_impl_pool_core_refill(&sh->core, k);
}

/* Pooled: the request's size, rounded up to its alignment (0 counted as 1),
 * is at most the largest block, and the alignment within the chunks'. */
static inline bool is_pooled(const state *s, size_t bytes, size_t alignment) {
  size_t sz = ((bytes + (bytes == 0)) + (alignment - 1)) & ~(alignment - 1);
  return sz <= s->largest && alignment <= PMR_IMPL_POOL_MAX_BLOCK_ALIGN;
}

/* Everything but the fast path: shard creation or contention, refills,
 * stealing, sizes above 1024, 0 bytes, oversize, debug tracking. */
/* errno is kept on success: a shard that could not be created (upstream
 * failed) does not fail a request another shard serves. */
PMR_NOINLINE static void *sync_allocate_slow(state *s, size_t bytes,
                                             size_t alignment) {
  int saved = errno;
  void *p;
  if (PMR_LIKELY(is_pooled(s, bytes, alignment))) {
    shard *sh = lock_my_shard(s);
    if (PMR_UNLIKELY(sh == NULL)) return NULL;
    pmr_impl_pool_class *k =
        pmr_impl_pool_find_nonzero(&sh->core, bytes, alignment);
    p = pmr_impl_pool_take(k);
    if (PMR_UNLIKELY(p == NULL)) p = sync_take_slow(s, sh, k);
    pmr_impl_spin_unlock(&sh->lock);
  } else {
    p = pmr_impl_big_alloc(&s->big, &s->big_lock, s->upstream, bytes,
                           alignment);
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
  size_t sz = (bytes + (alignment - 1)) & ~(alignment - 1);
  if (PMR_LIKELY(sz <= s->small_limit)) {
    shard *sh = try_my_shard(s);
    if (PMR_LIKELY(sh != NULL)) {
      pmr_impl_pool_class *k =
          (pmr_impl_pool_class *)(void *)((char *)&sh->core +
                                          sh->core.small[(sz + 7) >> 3]);
      void *p = pmr_impl_pool_take(k);
      pmr_impl_spin_unlock(&sh->lock);
      if (PMR_LIKELY(p != NULL)) return p;
    }
  }
#endif
  return sync_allocate_slow(s, bytes, alignment);
}

static void deallocate_slow(pmr_mem_resource *self, void *p, size_t bytes,
                            size_t alignment) {
  state *s = state_of(self);
  bool pooled = is_pooled(s, bytes, alignment);
#ifdef PMR_DEBUG
  pmr_impl_spin_lock(&s->big_lock);
  bool ok = pmr_impl_pool_debug_free(s->debug, "synchronized_pool", self, p,
                                     bytes, alignment, pooled);
  pmr_impl_spin_unlock(&s->big_lock);
  if (!ok) return;
#endif
  if (PMR_LIKELY(pooled)) {
    shard *sh = lock_my_shard(s); /* never NULL: p came from some shard */
    pmr_impl_pool_put(pmr_impl_pool_find_nonzero(&sh->core, bytes, alignment),
                      p);
    pmr_impl_spin_unlock(&sh->lock);
  } else {
    pmr_impl_big_free(&s->big_lock, s->upstream, p, bytes, alignment);
  }
}

/* Deallocation never fails and leaves errno alone. */
PMR_NOINLINE static void sync_deallocate_slow(pmr_mem_resource *self, void *p,
                                              size_t bytes, size_t alignment) {
  int saved = errno;
  deallocate_slow(self, p, bytes, alignment);
  errno = saved;
}

static void sync_deallocate(pmr_mem_resource *self, void *p, size_t bytes,
                            size_t alignment) {
#ifndef PMR_DEBUG
  state *s = state_of(self);
  size_t sz = (bytes + (alignment - 1)) & ~(alignment - 1);
  if (PMR_LIKELY(sz - 1 < s->small_limit)) { /* 0 < sz <= small_limit */
    shard *sh = try_my_shard(s);
    if (PMR_LIKELY(sh != NULL)) {
      pmr_impl_pool_put(
          (pmr_impl_pool_class *)(void *)((char *)&sh->core +
                                          sh->core.small[(sz + 7) >> 3]),
          p);
      pmr_impl_spin_unlock(&sh->lock);
      return;
    }
  }
#endif
  sync_deallocate_slow(self, p, bytes, alignment);
}

static const pmr_mem_resource_ops sync_ops = {
    .allocate = sync_allocate,
    .deallocate = sync_deallocate,
};

/* ---- fork ------------------------------------------------------------------
 * Before fork(): every live pool's create_lock, big_lock and shard locks. */

static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static state *live_pools; /* live_lock */

#define LOCKS (PMR_SYNC_POOL_SHARDS + 2)

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

static void unlist_live(state *s) {
  pthread_mutex_lock(&live_lock);
  if (s->live) {
    if (s->prev_live != NULL)
      s->prev_live->next_live = s->next_live;
    else
      live_pools = s->next_live;
    if (s->next_live != NULL) s->next_live->prev_live = s->prev_live;
    s->live = false;
  }
  pthread_mutex_unlock(&live_lock);
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
  s->upstream = pmr_resource_or_default(upstream);
  s->opts = pmr_impl_pool_effective_options(opts);
  s->largest = s->opts.largest_required_pool_block;
  s->small_limit = s->largest < PMR_IMPL_POOL_TABLE_LIMIT
                       ? s->largest
                       : PMR_IMPL_POOL_TABLE_LIMIT;
  atomic_init(&s->big_lock, 0);
  atomic_init(&s->create_lock, 0);
  pmr_impl_big_init(&s->big);
#ifdef PMR_DEBUG
  s->debug = pmr_impl_track_new();
#else
  s->debug = NULL;
#endif
  list_live(s);
  return true;
}

void pmr_synchronized_pool_release(pmr_synchronized_pool *p) {
  state *s = state_of(&p->base);
  /* Not while fork's prepare holds the shards' locks. */
  pthread_mutex_lock(&live_lock);
  for (unsigned i = 0; i < PMR_SYNC_POOL_SHARDS; ++i) {
    shard *sh =
        atomic_exchange_explicit(&s->shards[i], NULL, memory_order_acq_rel);
    if (sh == NULL) continue;
    pmr_impl_pool_core_release(&sh->core);
    pmr_deallocate(s->upstream, sh, sizeof(shard), alignof(shard));
  }
  pmr_impl_big_release(&s->big, s->upstream);
  pmr_impl_track_clear(s->debug);
  pthread_mutex_unlock(&live_lock);
}

void pmr_synchronized_pool_destroy(pmr_synchronized_pool *p) {
  state *s = state_of(&p->base);
  unlist_live(s);
  pmr_synchronized_pool_release(p);
  pmr_impl_track_delete(s->debug);
  s->debug = NULL;
}

pmr_pool_options pmr_synchronized_pool_get_options(
    const pmr_synchronized_pool *p) {
  return cstate_of(p)->opts;
}

pmr_mem_resource *pmr_synchronized_pool_upstream(
    const pmr_synchronized_pool *p) {
  return cstate_of(p)->upstream;
}
