/* pmr_thread_cache: the resource over per-thread page heaps.
 *
 * Who does what:
 *   - thread_heap.h: the heaps, their pages, exit and adoption;
 *   - thread_slots.h: which heap is the calling thread's (one TLS load),
 *     thread exit, destroy against exit, fork;
 *   - here: the fast paths, oversize blocks, debug checks, the verbs. */
#include "resources/pmr_thread_cache.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "resources/internal/debug_track.h"
#include "resources/internal/fork_guard.h"
#include "resources/internal/os_mem.h"
#include "resources/internal/pool_core.h"
#include "resources/internal/thread_heap.h"
#include "resources/internal/thread_slots.h"

/* A magazine used to hold at most this many blocks: the bound the
 * deprecated max_cached_blocks option is still clamped to. */
#define MAX_CACHED_BLOCKS 2040u

typedef struct tc_state {
  /* What the fast paths read: */
  size_t small_limit; /* min(largest, 1024): the fast path's sizes */
  /* A class's offset in a heap / 8, by pmr_impl_heap_key (below
   * small_limit): the same in every heap of the instance. */
  uint8_t small_off[PMR_IMPL_POOL_TABLE_LIMIT];
  pmr_impl_slot_owner slots; /* the calling thread's heap */
  pmr_impl_theaps heaps;     /* pages, heaps */
  size_t largest;            /* largest pooled size */
  pmr_impl_spin big_lock;    /* guards big and debug */
  pmr_impl_big_list big;
  pmr_impl_track *debug; /* PMR_DEBUG builds only */
  pmr_thread_cache_options opts;
  bool live;
} tc_state;

PMR_IMPL_STATE_FITS(pmr_thread_cache, tc_state);
_Static_assert(offsetof(pmr_impl_theap, heap.classes) % 8 == 0 &&
                   sizeof(pmr_impl_page_class) % 8 == 0 &&
                   (offsetof(pmr_impl_theap, heap.classes) +
                    24 * sizeof(pmr_impl_page_class)) /
                           8 <=
                       UINT8_MAX,
               "small_off holds the offsets of the classes up to 1024 bytes");

static tc_state *state_of(pmr_mem_resource *self) {
  return (tc_state *)(void *)((pmr_thread_cache *)self)->pmr_impl_state.bytes;
}
static const tc_state *cstate_of(const pmr_thread_cache *tc) {
  return (const tc_state *)(const void *)tc->pmr_impl_state.bytes;
}
static tc_state *state_of_owner(pmr_impl_slot_owner *o) {
  return (tc_state *)(void *)((char *)o - offsetof(tc_state, slots));
}

#define NONE ((pmr_impl_theap *)(void *)pmr_impl_slot_none)

/* ---- the slot owner: heaps made, given back, freed; fork -------------- */

static void *make_heap(pmr_impl_slot_owner *o) {
  return pmr_impl_theap_acquire(&state_of_owner(o)->heaps);
}

static void heap_gone(pmr_impl_slot_owner *o, void *obj, bool vanished) {
  (void)o;
  (void)vanished; /* fork's child: its lock was free, as after an exit */
  pmr_impl_theap_abandon((pmr_impl_theap *)obj);
}

static void heaps_cleared(pmr_impl_slot_owner *o) {
  pmr_impl_theaps_clear(&state_of_owner(o)->heaps);
}

static bool fork_take(pmr_impl_slot_owner *o) {
  tc_state *s = state_of_owner(o);
  if (!pmr_impl_theaps_fork_take(&s->heaps)) return false;
  if (pmr_impl_fork_spin_take(&s->big_lock)) return true;
  pmr_impl_theaps_fork_release(&s->heaps);
  return false;
}

static void fork_release(pmr_impl_slot_owner *o) {
  tc_state *s = state_of_owner(o);
  pmr_impl_spin_unlock(&s->big_lock);
  pmr_impl_theaps_fork_release(&s->heaps);
}

static void fork_child(pmr_impl_slot_owner *o) {
  tc_state *s = state_of_owner(o);
  pmr_impl_spin_unlock(&s->big_lock);
  pmr_impl_theaps_fork_child(&s->heaps);
}

static const pmr_impl_slot_ops slot_ops = {
    make_heap, heap_gone, heaps_cleared, fork_take, fork_release, fork_child};

static void format_none(void) { pmr_impl_theap_format_none(NONE); }

/* ---- the resource ------------------------------------------------------- */

/* The class of a pooled request, or -1. */
static int class_of(const tc_state *s, size_t bytes, size_t alignment) {
  size_t sz = pmr_impl_pool_block_size(bytes, alignment);
  if (sz > s->largest || alignment > PMR_IMPL_POOL_MAX_BLOCK_ALIGN) return -1;
  return (int)pmr_impl_pool_class_of(sz);
}

/* The calling thread's heap, or NULL when it has none. */
static pmr_impl_theap *find_heap(const tc_state *s) {
  pmr_impl_theap *t = (pmr_impl_theap *)pmr_impl_slots_mine(&s->slots);
  return t != NONE ? t : (pmr_impl_theap *)pmr_impl_slots_find(&s->slots);
}

static void *allocate_slow(tc_state *s, size_t bytes, size_t alignment) {
  int cls = class_of(s, bytes, alignment);
  if (cls < 0)
    return pmr_impl_big_alloc(&s->big, &s->big_lock, s->heaps.src.upstream,
                              &s->heaps.src, bytes, alignment);
  pmr_impl_theap *t = find_heap(s);
  if (t == NULL &&
      (t = (pmr_impl_theap *)pmr_impl_slots_get(&s->slots)) == NULL)
    return NULL; /* errno: malloc's ENOMEM */
  pmr_impl_page_class *k = &t->heap.classes[cls];
  void *p = pmr_impl_heap_pop(k);
  return p != NULL ? p : pmr_impl_theap_alloc(t, k);
}

/* errno is kept on success. */
PMR_NOINLINE static void *tc_allocate_slow(pmr_mem_resource *self, size_t bytes,
                                           size_t alignment) {
  int saved = errno;
  tc_state *s = state_of(self);
  void *p = allocate_slow(s, bytes, alignment);
  if (p != NULL) errno = saved;
#ifdef PMR_DEBUG
  if (p != NULL)
    pmr_impl_pool_debug_add_locked(s->debug, &s->big_lock, p, bytes, alignment);
#endif
  return p;
}

/* A pooled block p whose page's heap is not the calling thread's (or the
 * thread's slot is beyond the direct ones): pushed locally if it is the
 * thread's after all, else onto the page's remote list. */
static void free_pooled(tc_state *s, void *p) {
  pmr_impl_page *pg = pmr_impl_page_of(&s->heaps.src, p);
  pmr_impl_theap *t = find_heap(s);
  if (t != NULL && pg->heap == &t->heap) {
    if (pmr_impl_page_push(pg, p)) pmr_impl_theap_free_slow(t, pg);
    return;
  }
  pmr_impl_heap_free_remote(pg, p);
}

/* Deallocation never fails, never calls upstream and leaves errno alone. */
PMR_NOINLINE static void tc_deallocate_slow(pmr_mem_resource *self, void *p,
                                            size_t bytes, size_t alignment) {
  int saved = errno;
  tc_state *s = state_of(self);
  bool pooled = class_of(s, bytes, alignment) >= 0;
#ifdef PMR_DEBUG
  if (!pmr_impl_pool_debug_free_locked(s->debug, &s->big_lock, "thread_cache",
                                       self, p, bytes, alignment, pooled))
    return;
#endif
  if (pooled)
    free_pooled(s, p);
  else
    pmr_impl_big_free(&s->big, &s->big_lock, s->heaps.src.upstream, p, bytes,
                      alignment);
  errno = saved;
}

#ifndef PMR_DEBUG
/* The page event of a free on the fast path (the page was full, or its
 * last block came back): the caller owns pg's heap. */
PMR_NOINLINE static void tc_free_event(pmr_impl_page *pg) {
  pmr_impl_theap_free_slow((pmr_impl_theap *)(void *)pg->heap, pg);
}
#endif

/* The fast paths: the calling thread's heap (the stand-in, whose classes
 * have no block and which owns no page, when it has none), its class's
 * current page, that page's free list. Every other case goes to the slow
 * path. Debug builds check every call there. */
static void *tc_allocate(pmr_mem_resource *self, size_t bytes,
                         size_t alignment) {
#ifndef PMR_DEBUG
  const tc_state *s = state_of(self);
  size_t key = pmr_impl_heap_key(bytes, alignment);
  if (PMR_LIKELY(key < s->small_limit)) {
    char *h = (char *)pmr_impl_slots_mine(&s->slots);
    void *b = pmr_impl_heap_pop(
        (pmr_impl_page_class *)(void *)(h + (size_t)s->small_off[key] * 8));
    if (PMR_LIKELY(b != NULL)) return b;
  }
#endif
  return tc_allocate_slow(self, bytes, alignment);
}

static void tc_deallocate(pmr_mem_resource *self, void *p, size_t bytes,
                          size_t alignment) {
#ifndef PMR_DEBUG
  const tc_state *s = state_of(self);
  if (PMR_LIKELY(pmr_impl_heap_key(bytes, alignment) < s->small_limit)) {
    pmr_impl_page *pg = pmr_impl_page_of(&s->heaps.src, p);
    if (PMR_LIKELY((void *)pg->heap == pmr_impl_slots_mine(&s->slots))) {
      if (PMR_UNLIKELY(pmr_impl_page_push(pg, p))) tc_free_event(pg);
      return;
    }
  }
#endif
  tc_deallocate_slow(self, p, bytes, alignment);
}

/* In place when both sizes fall in one pooled class: the block already has
 * the class's size. */
static bool tc_try_resize(pmr_mem_resource *self, void *p, size_t old_bytes,
                          size_t new_bytes, size_t alignment) {
  tc_state *s = state_of(self);
  int a = class_of(s, old_bytes, alignment);
  if (a < 0 || a != class_of(s, new_bytes, alignment)) return false;
#ifdef PMR_DEBUG
  if (!pmr_impl_pool_debug_free_locked(s->debug, &s->big_lock, "thread_cache",
                                       self, p, old_bytes, alignment, true))
    return false;
  pmr_impl_pool_debug_add_locked(s->debug, &s->big_lock, p, new_bytes,
                                 alignment);
#else
  (void)p;
#endif
  return true;
}

static const pmr_mem_resource_ops tc_ops = {
    .allocate = tc_allocate,
    .deallocate = tc_deallocate,
    .try_resize = tc_try_resize,
};

/* A destroyed instance: allocation fails, deallocation and resize do
 * nothing (every block went back with destroy). */
static void *dead_allocate(pmr_mem_resource *self, size_t bytes,
                           size_t alignment) {
  (void)bytes;
  (void)alignment;
#ifdef PMR_DEBUG
  pmr_report_misuse("thread_cache %p: allocate after destroy", (void *)self);
#else
  (void)self;
#endif
  errno = EINVAL;
  return NULL;
}
static void dead_deallocate(pmr_mem_resource *self, void *p, size_t bytes,
                            size_t alignment) {
  (void)bytes;
  (void)alignment;
#ifdef PMR_DEBUG
  pmr_report_misuse("thread_cache %p: deallocate %p after destroy",
                    (void *)self, p);
#else
  (void)self;
  (void)p;
#endif
}
static const pmr_mem_resource_ops dead_ops = {
    .allocate = dead_allocate,
    .deallocate = dead_deallocate,
};

static pmr_mem_resource *upstream_of(const pmr_mem_resource *r) {
  return pmr_thread_cache_upstream((const pmr_thread_cache *)r);
}
static const pmr_impl_pool_kind kind = {PMR_IMPL_KIND_THREAD_CACHE, &tc_ops,
                                        upstream_of};

static bool reject_null(const pmr_thread_cache *tc, const char *what) {
  if (tc != NULL) return false;
#ifdef PMR_DEBUG
  pmr_report_misuse("pmr_thread_cache_%s: NULL thread cache", what);
#else
  (void)what;
#endif
  return true;
}

bool pmr_thread_cache_init(pmr_thread_cache *tc,
                           const pmr_thread_cache_options *opts,
                           pmr_mem_resource *upstream) {
  if (reject_null(tc, "init")) return false;
  tc_state *s = state_of(&tc->base);
  if (pmr_impl_slots_is_live(&s->slots)) {
    /* Init over a live instance: the old one is destroyed first, so no
     * thread keeps a heap pointing into the new one's memory. */
#ifdef PMR_DEBUG
    pmr_report_misuse(
        "thread_cache %p: initialised again while live (not destroyed); "
        "destroying it first",
        (void *)tc);
#endif
    pmr_thread_cache_destroy(tc);
  }
  pmr_impl_os_register_pool(&kind);
  memset(s, 0, sizeof *s);
  pmr_thread_cache_options o;
  memset(&o, 0, sizeof o);
  if (opts != NULL) o = *opts;
  o.pool = pmr_impl_heap_options(&o.pool);
  o.max_cached_blocks = pmr_impl_clamp_option(
      o.max_cached_blocks, PMR_THREAD_CACHE_DEFAULT_MAX_CACHED_BLOCKS,
      MAX_CACHED_BLOCKS);
  o.max_cached_bytes = pmr_impl_clamp_option(
      o.max_cached_bytes, PMR_THREAD_CACHE_DEFAULT_MAX_CACHED_BYTES, SIZE_MAX);
  s->opts = o;
  s->largest = o.pool.largest_required_pool_block;
  s->small_limit = pmr_impl_pool_small_limit(s->largest);
  for (size_t key = 0; key < s->small_limit; ++key) {
    /* The stand-in's classes have no block either: every heap's offsets. */
    size_t off = offsetof(pmr_impl_theap, heap.classes) +
                 pmr_impl_pool_class_of(key + 1) * sizeof(pmr_impl_page_class);
    s->small_off[key] = (uint8_t)(off / 8);
  }
  pmr_impl_theaps_init(&s->heaps, upstream, &o.pool);
  atomic_init(&s->big_lock, 0);
  pmr_impl_big_init(&s->big, s->heaps.src.upstream, o.pool.max_free_bytes);
  s->slots.ops = &slot_ops;
  if (!pmr_impl_slots_register(&s->slots, format_none)) {
    tc->base.ops = &dead_ops;
    return false;
  }
#ifdef PMR_DEBUG
  s->debug = pmr_impl_track_new();
#endif
  s->live = true;
  tc->base.ops = &tc_ops;
  return true;
}

void pmr_thread_cache_release(pmr_thread_cache *tc) {
  if (reject_null(tc, "release")) return;
  tc_state *s = state_of(&tc->base);
  if (!s->live) return;                   /* destroyed, or init failed */
  pmr_impl_slots_clear(&s->slots, false); /* every heap freed */
  pmr_impl_source_release(&s->heaps.src);
  pmr_impl_big_release(&s->big, s->heaps.src.upstream);
  pmr_impl_track_clear(s->debug);
}

void pmr_thread_cache_destroy(pmr_thread_cache *tc) {
  if (reject_null(tc, "destroy")) return;
  tc_state *s = state_of(&tc->base);
  if (!s->live) return; /* destroyed already, or init failed */
  pmr_impl_slots_clear(&s->slots, true);
  pmr_impl_source_release(&s->heaps.src);
  pmr_impl_big_release(&s->big, s->heaps.src.upstream);
  pmr_impl_track_delete(s->debug);
  s->debug = NULL;
  s->live = false;
  tc->base.ops = &dead_ops;
}

size_t pmr_thread_cache_trim(pmr_thread_cache *tc) {
  if (reject_null(tc, "trim")) return 0;
  tc_state *s = state_of(&tc->base);
  if (!s->live) return 0;
  pmr_impl_theaps_trim_heaps(&s->heaps, find_heap(s));
  size_t given =
      pmr_impl_big_trim(&s->big, &s->big_lock, s->heaps.src.upstream);
  return given + pmr_impl_source_trim(&s->heaps.src, 0);
}

/* Under the registry's mutex: no heap is made or abandoned meanwhile. */
static void count_heaps(pmr_impl_slot_owner *o, void *arg) {
  tc_state *s = state_of_owner(o);
  pmr_thread_cache_stats *st = (pmr_thread_cache_stats *)arg;
  st->threads = s->heaps.owned;
  size_t held;
  pmr_impl_theaps_page_counts(&s->heaps, &held, &st->pages_taken,
                              &st->pages_returned);
  st->thread_page_bytes = held * PMR_IMPL_PAGE_SIZE;
}

pmr_thread_cache_stats pmr_thread_cache_get_stats(const pmr_thread_cache *tc) {
  pmr_thread_cache_stats st;
  memset(&st, 0, sizeof st);
  if (reject_null(tc, "get_stats")) return st;
  /* Locks are taken: the state is changed through a cast. */
  tc_state *s =
      (tc_state *)(void *)((pmr_thread_cache *)tc)->pmr_impl_state.bytes;
  if (!s->live) return st;
  pmr_impl_slots_locked(&s->slots, count_heaps, &st);
  pmr_impl_spin_lock(&s->big_lock);
  st.held_bytes = s->big.live.size + s->big.kept;
  st.free_oversize_bytes = s->big.kept;
  pmr_impl_spin_unlock(&s->big_lock);
  pmr_impl_spin_lock(&s->heaps.src.lock);
  st.held_bytes += s->heaps.src.segment_bytes;
  st.free_page_bytes = s->heaps.src.free_count * PMR_IMPL_PAGE_SIZE;
  pmr_impl_spin_unlock(&s->heaps.src.lock);
  return st;
}

pmr_thread_cache_options pmr_thread_cache_get_options(
    const pmr_thread_cache *tc) {
  return cstate_of(tc)->opts;
}

pmr_mem_resource *pmr_thread_cache_upstream(const pmr_thread_cache *tc) {
  return cstate_of(tc)->heaps.src.upstream;
}
