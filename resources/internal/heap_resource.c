/* The engine's resource, in its two shapes (see heap_resource.h). */
#include "resources/internal/heap_resource.h"
#include "resources/pmr_segment_cache.h"

#include <errno.h>
#include <string.h>

#include "resources/internal/debug_track.h"
#include "resources/internal/fork_guard.h"
#include "resources/internal/platform.h"

_Static_assert(
    offsetof(pmr_impl_thread_heap, heap) == 0,
    "the small map's offsets are from the heap, at the thread heap's start");

static pmr_impl_heap_resource *state_of(pmr_mem_resource *self) {
  return (pmr_impl_heap_resource *)(void *)((char *)self +
                                            PMR_IMPL_HEAP_RESOURCE_OFFSET);
}
static pmr_impl_heap_resource *state_of_owner(pmr_impl_slot_owner *o) {
  return (pmr_impl_heap_resource *)(void *)((char *)o -
                                            offsetof(pmr_impl_heap_resource,
                                                     slots));
}

#define NONE ((pmr_impl_thread_heap *)(void *)pmr_impl_slot_none)

/* ---- the slot owner: heaps made, given back, freed; fork -------------- */

static void *make_heap(pmr_impl_slot_owner *o) {
  return pmr_impl_thread_heap_acquire(&state_of_owner(o)->heaps);
}

static void heap_gone(pmr_impl_slot_owner *o, void *obj, bool vanished) {
  (void)o;
  if (vanished)
    pmr_impl_thread_heap_lose((pmr_impl_thread_heap *)obj);
  else
    pmr_impl_thread_heap_abandon((pmr_impl_thread_heap *)obj);
}

static void heaps_cleared(pmr_impl_slot_owner *o) {
  pmr_impl_thread_heaps_clear(&state_of_owner(o)->heaps);
}

static bool fork_take(pmr_impl_slot_owner *o) {
  pmr_impl_heap_resource *s = state_of_owner(o);
  if (!pmr_impl_thread_heaps_fork_take(&s->heaps)) return false;
  if (pmr_impl_fork_spin_take(&s->oversize_lock)) return true;
  pmr_impl_thread_heaps_fork_release(&s->heaps);
  return false;
}

static void fork_release(pmr_impl_slot_owner *o) {
  pmr_impl_heap_resource *s = state_of_owner(o);
  pmr_impl_spin_unlock(&s->oversize_lock);
  pmr_impl_thread_heaps_fork_release(&s->heaps);
}

static void fork_child(pmr_impl_slot_owner *o) {
  pmr_impl_heap_resource *s = state_of_owner(o);
  pmr_impl_spin_unlock(&s->oversize_lock);
  pmr_impl_thread_heaps_fork_child(&s->heaps);
}

static const pmr_impl_slot_ops slot_ops = {
    make_heap, heap_gone, heaps_cleared, fork_take, fork_release, fork_child};

static void format_none(void) { pmr_impl_thread_heap_format_none(NONE); }

/* ---- the resource ------------------------------------------------------- */

/* Every function below with a `shared` parameter is inlined into callers
 * that pass a constant: the shape (heap_resource.h) costs the single one
 * nothing. */

/* The calling thread's heap: shared, the one its slot holds (the stand-in,
 * whose classes have no block and which owns no page, when it has none);
 * single, the one heap. */
static inline pmr_impl_page_heap *my_heap(const pmr_impl_heap_resource *s,
                                          bool shared) {
  if (shared) return (pmr_impl_page_heap *)pmr_impl_slots_mine(&s->slots);
  return &((pmr_impl_heap_resource_single *)(uintptr_t)s)->heap;
}

/* The oversize list's lock: none in the single shape. */
static inline pmr_impl_spin *lock_of(pmr_impl_heap_resource *s, bool shared) {
  return shared ? &s->oversize_lock : NULL;
}

/* The class of a pooled request, or -1. */
static int class_of(const pmr_impl_heap_resource *s, size_t bytes,
                    size_t alignment) {
  return pmr_impl_pool_class_for(pmr_impl_pool_block_size(bytes, alignment),
                                 alignment, s->largest);
}

/* The calling thread's heap, or NULL when it has none. */
static pmr_impl_thread_heap *find_heap(const pmr_impl_heap_resource *s) {
  pmr_impl_thread_heap *t =
      (pmr_impl_thread_heap *)pmr_impl_slots_mine(&s->slots);
  return t != NONE ? t : (pmr_impl_thread_heap *)pmr_impl_slots_find(&s->slots);
}

/* The calling thread's heap, made when it has none; NULL when out of
 * memory. */
static inline pmr_impl_page_heap *get_heap(pmr_impl_heap_resource *s,
                                           bool shared) {
  if (!shared) return my_heap(s, false);
  pmr_impl_thread_heap *t = find_heap(s);
  if (t == NULL) t = (pmr_impl_thread_heap *)pmr_impl_slots_get(&s->slots);
  return t != NULL ? &t->heap : NULL;
}

/* A block of class k of heap h, the calling thread's, after its current
 * page had none: remote frees, other pages, the source, upstream. */
static inline void *refill(pmr_impl_page_heap *h, pmr_impl_page_class *k,
                           bool shared) {
  void *p = pmr_impl_heap_pop_checked(k);
  if (p != NULL) return p;
  return shared ? pmr_impl_thread_heap_alloc((pmr_impl_thread_heap *)h, k)
                : pmr_impl_heap_alloc_slow(h, k);
}

static inline void *allocate_pooled(pmr_impl_heap_resource *s, int cls,
                                    bool shared) {
  pmr_impl_page_heap *h = get_heap(s, shared);
  if (h == NULL) return NULL; /* errno: malloc's ENOMEM */
  pmr_impl_page_class *k = &h->classes[cls];
  void *p = refill(h, k, shared);
  if (p == NULL &&
      pmr_impl_oversize_give_back(&s->oversize, lock_of(s, shared),
                                  s->heaps.src.upstream, NULL) != 0)
    p = refill(h, k, shared); /* kept blocks went back */
  return p;
}

/* Every request the fast paths did not serve; then the source's shrink
 * when it waits for one (page_source.h), with no lock held. */
static inline void *allocate_slow(pmr_impl_heap_resource *s, size_t bytes,
                                  size_t alignment, bool shared) {
  int cls = class_of(s, bytes, alignment);
  void *p = cls >= 0 ? allocate_pooled(s, cls, shared)
                     : pmr_impl_oversize_alloc(&s->oversize, lock_of(s, shared),
                                               s->heaps.src.upstream,
                                               &s->heaps.src, bytes, alignment);
  if (PMR_UNLIKELY(pmr_impl_source_waits(&s->heaps.src)))
    pmr_impl_source_shrink(&s->heaps.src);
  return p;
}

/* errno is kept on success. */
static inline void *allocate_checked(pmr_mem_resource *self, size_t bytes,
                                     size_t alignment, bool shared) {
  int saved = errno;
  pmr_impl_heap_resource *s = state_of(self);
  void *p = allocate_slow(s, bytes, alignment, shared);
  if (p != NULL) errno = saved;
#ifdef PMR_DEBUG
  if (p != NULL)
    pmr_impl_track_add_locked(s->debug, &s->oversize_lock, p, bytes, alignment);
#endif
  return p;
}

PMR_NOINLINE static void *allocate_slow_shared(pmr_mem_resource *self,
                                               size_t bytes, size_t alignment) {
  return allocate_checked(self, bytes, alignment, true);
}

PMR_NOINLINE static void *allocate_slow_single(pmr_mem_resource *self,
                                               size_t bytes, size_t alignment) {
  return allocate_checked(self, bytes, alignment, false);
}

#ifndef PMR_DEBUG
/* A failed pop's first resort, with the fast path's arguments: the class's
 * next page in the thread's heap (the stand-in has none), else the slow
 * path. */
static inline void *allocate_next(pmr_mem_resource *self, size_t bytes,
                                  size_t alignment, bool shared) {
  pmr_impl_heap_resource *s = state_of(self);
  size_t key = pmr_impl_heap_key(bytes, alignment);
  pmr_impl_page_heap *h = my_heap(s, shared);
  void *b =
      pmr_impl_heap_alloc_local(h, pmr_impl_heap_small(h, s->small_off, key));
  if (b == NULL)
    return shared ? allocate_slow_shared(self, bytes, alignment)
                  : allocate_slow_single(self, bytes, alignment);
  if (PMR_UNLIKELY(pmr_impl_source_waits(&s->heaps.src)))
    pmr_impl_source_shrink(&s->heaps.src);
  return b;
}

PMR_NOINLINE static void *allocate_next_shared(pmr_mem_resource *self,
                                               size_t bytes, size_t alignment) {
  return allocate_next(self, bytes, alignment, true);
}

PMR_NOINLINE static void *allocate_next_single(pmr_mem_resource *self,
                                               size_t bytes, size_t alignment) {
  return allocate_next(self, bytes, alignment, false);
}
#endif

/* The fast path: the calling thread's heap, its class's current page, that
 * page's free list. Every other case goes to the slow path. Debug builds
 * check every call there. */
static inline void *allocate(pmr_mem_resource *self, size_t bytes,
                             size_t alignment, bool shared) {
#ifndef PMR_DEBUG
  const pmr_impl_heap_resource *s = state_of(self);
  size_t key = pmr_impl_heap_key(bytes, alignment);
  if (PMR_LIKELY(key < s->small_limit)) {
    pmr_impl_page_heap *h = my_heap(s, shared);
    void *b = pmr_impl_heap_pop(pmr_impl_heap_small(h, s->small_off, key));
    if (PMR_LIKELY(b != NULL)) return b;
    return shared ? allocate_next_shared(self, bytes, alignment)
                  : allocate_next_single(self, bytes, alignment);
  }
#endif
  return shared ? allocate_slow_shared(self, bytes, alignment)
                : allocate_slow_single(self, bytes, alignment);
}

void *pmr_impl_heap_resource_allocate(pmr_mem_resource *self, size_t bytes,
                                      size_t alignment) {
  return allocate(self, bytes, alignment, true);
}

static void *allocate_single(pmr_mem_resource *self, size_t bytes,
                             size_t alignment) {
  return allocate(self, bytes, alignment, false);
}

/* A pooled block p (debug builds: checked). */
static inline void free_pooled(pmr_impl_heap_resource *s, void *p,
                               bool shared) {
  pmr_impl_heap_resource_free_pooled(pmr_impl_page_of(&s->heaps.src, p), p,
                                     shared);
}

/* Deallocation never fails, never calls upstream and leaves errno alone. */
static inline void deallocate_checked(pmr_mem_resource *self, void *p,
                                      size_t bytes, size_t alignment,
                                      bool shared) {
  int saved = errno;
  pmr_impl_heap_resource *s = state_of(self);
  bool pooled = class_of(s, bytes, alignment) >= 0;
#ifdef PMR_DEBUG
  if (!pmr_impl_track_check_free_locked(s->debug, &s->oversize_lock,
                                        s->type_name, self, p, bytes, alignment,
                                        pooled))
    return;
#endif
  if (pooled)
    free_pooled(s, p, shared);
  else
    pmr_impl_oversize_free(&s->oversize, lock_of(s, shared),
                           s->heaps.src.upstream, p, bytes, alignment);
  errno = saved;
}

/* Takes what the fast path got, as it got it: the call is a jump. */
PMR_NOINLINE static void deallocate_slow_shared(pmr_mem_resource *self, void *p,
                                                size_t bytes,
                                                size_t alignment) {
  deallocate_checked(self, p, bytes, alignment, true);
}

PMR_NOINLINE static void deallocate_slow_single(pmr_mem_resource *self, void *p,
                                                size_t bytes,
                                                size_t alignment) {
  deallocate_checked(self, p, bytes, alignment, false);
}

/* The deallocation fast path: a pooled size, the block's page, a push
 * (pmr_impl_heap_resource_free_pooled). seg: the source's frames are
 * segments (page_source.h: seg_frames, as over the malloc resource or a
 * pool over it), so its geometry is known (pmr_impl_page_of_seg) and not
 * read. fixed (with seg): the fast path serves every size up to
 * PMR_IMPL_POOL_TABLE_LIMIT, so the size bound is a constant too and the
 * free reads nothing of the resource. */
static inline void deallocate(pmr_mem_resource *self, void *p, size_t bytes,
                              size_t alignment, bool shared, bool seg,
                              bool fixed) {
#ifndef PMR_DEBUG
  const pmr_impl_heap_resource *s = state_of(self);
  size_t limit = fixed ? PMR_IMPL_POOL_TABLE_LIMIT : s->small_limit;
  if (PMR_LIKELY(pmr_impl_heap_key(bytes, alignment) < limit)) {
    pmr_impl_heap_resource_free_pooled(
        seg ? pmr_impl_page_of_seg(p) : pmr_impl_page_of(&s->heaps.src, p), p,
        shared);
    return;
  }
#else
  (void)seg;
  (void)fixed;
#endif
  if (shared)
    deallocate_slow_shared(self, p, bytes, alignment);
  else
    deallocate_slow_single(self, p, bytes, alignment);
}

void pmr_impl_heap_resource_deallocate(pmr_mem_resource *self, void *p,
                                       size_t bytes, size_t alignment) {
  deallocate(self, p, bytes, alignment, true, false, false);
}

/* The other shapes' deallocations (the tables below). */
#define DEALLOCATE(name, shared, seg, fixed)                      \
  static void name(pmr_mem_resource *self, void *p, size_t bytes, \
                   size_t alignment) {                            \
    deallocate(self, p, bytes, alignment, shared, seg, fixed);    \
  }
DEALLOCATE(deallocate_shared_seg, true, true, false)
DEALLOCATE(deallocate_shared_fixed, true, true, true)
DEALLOCATE(deallocate_single, false, false, false)
DEALLOCATE(deallocate_single_seg, false, true, false)
DEALLOCATE(deallocate_single_fixed, false, true, true)
#undef DEALLOCATE

/* Pooled blocks only (the page tells the size); 0 for the rest. */
static inline size_t free_unsized(pmr_mem_resource *self, void *p,
                                  bool shared) {
  pmr_impl_heap_resource *s = state_of(self);
  pmr_impl_page *pg;
  size_t block;
  if (!pmr_impl_source_class_page(&s->heaps.src, p, &pg, &block))
    return 0; /* a run, or no page of ours serving a class */
#ifndef PMR_DEBUG
  pmr_impl_heap_resource_free_pooled(pg, p, shared);
#else
  /* Alignment 1: the block's size is its class's, a multiple of any
   * alignment it was asked with, so it names the same class. */
  deallocate_checked(self, p, block, 1, shared);
#endif
  return block;
}

size_t pmr_impl_heap_resource_free_unsized(pmr_mem_resource *self, void *p) {
  return free_unsized(self, p, true);
}

/* Pooled blocks only (the page tells the size; alignment names no other
 * class); 0 for the rest. Debug builds: checked against the table with
 * the alignment only. */
static inline size_t deallocate_unsized(pmr_mem_resource *self, void *p,
                                        size_t alignment, bool shared) {
#ifndef PMR_DEBUG
  (void)alignment;
  return free_unsized(self, p, shared);
#else
  pmr_impl_heap_resource *s = state_of(self);
  size_t block = pmr_impl_source_usable_size(&s->heaps.src, p);
  if (block != 0 && pmr_impl_track_check_free_locked(
                        s->debug, &s->oversize_lock, s->type_name, self, p,
                        PMR_IMPL_TRACK_ANY_BYTES, alignment, true))
    free_pooled(s, p, shared);
  return block;
#endif
}

static size_t deallocate_unsized_shared(pmr_mem_resource *self, void *p,
                                        size_t alignment) {
  return deallocate_unsized(self, p, alignment, true);
}

static size_t deallocate_unsized_single(pmr_mem_resource *self, void *p,
                                        size_t alignment) {
  return deallocate_unsized(self, p, alignment, false);
}

/* In place when both sizes fall in one pooled class (the block already has
 * the class's size), or both are oversize and the block has room
 * (pmr_impl_oversize_try_resize). */
static bool heap_resource_try_resize(pmr_mem_resource *self, void *p,
                                     size_t old_bytes, size_t new_bytes,
                                     size_t alignment) {
  pmr_impl_heap_resource *s = state_of(self);
  int a = class_of(s, old_bytes, alignment);
  if (a != class_of(s, new_bytes, alignment)) return false;
#ifdef PMR_DEBUG
  if (!pmr_impl_track_check_free_locked(s->debug, &s->oversize_lock,
                                        s->type_name, self, p, old_bytes,
                                        alignment, a >= 0))
    return false;
#endif
  bool done = a >= 0 || pmr_impl_oversize_try_resize(
                            &s->oversize, lock_of(s, s->shared), &s->heaps.src,
                            p, old_bytes, new_bytes);
#ifdef PMR_DEBUG
  pmr_impl_track_add_locked(s->debug, &s->oversize_lock, p,
                            done ? new_bytes : old_bytes, alignment);
#endif
  return done;
}

/* Keeps freed blocks; thread-safe in the shared shape; maps its large
 * blocks where its upstream lets it (platform.h). */
static unsigned heap_resource_traits(const pmr_mem_resource *self) {
  const pmr_impl_heap_resource *s =
      state_of((pmr_mem_resource *)(uintptr_t)self);
  return (s->shared ? PMR_TRAIT_THREAD_SAFE : 0) | PMR_TRAIT_KEEPS_FREED |
         (pmr_impl_os_maps_large(s->heaps.src.upstream) ? PMR_TRAIT_MAPS_LARGE
                                                        : 0);
}

/* Pooled blocks: the class size, from the page (no header, no lock). */
static size_t heap_resource_usable_size(const pmr_mem_resource *self,
                                        const void *p, size_t bytes,
                                        size_t alignment) {
  const pmr_impl_heap_resource *s =
      state_of((pmr_mem_resource *)(uintptr_t)self);
  if (p != NULL) return pmr_impl_source_usable_size(&s->heaps.src, p);
  size_t key = pmr_impl_heap_key(bytes, alignment);
  if (key < s->small_limit) /* the fast paths' sizes: key + 1 rounded */
    return pmr_impl_pool_class_size(pmr_impl_pool_class_of(key + 1));
  int cls = class_of(s, bytes, alignment);
  return cls < 0 ? 0 : pmr_impl_pool_class_size((unsigned)cls);
}

#define OPS(allocate_fn, deallocate_fn, unsized_fn)                            \
  {                                                                            \
    .allocate = allocate_fn, .deallocate = deallocate_fn,                      \
    .try_resize = heap_resource_try_resize, .traits = heap_resource_traits,    \
    .usable_size = heap_resource_usable_size, .deallocate_unsized = unsized_fn \
  }
/* By shape (single, shared), then by source: any, segments, segments with
 * the fast path up to PMR_IMPL_POOL_TABLE_LIMIT. */
static const pmr_mem_resource_ops heap_resource_ops[2][3] = {
    {OPS(allocate_single, deallocate_single, deallocate_unsized_single),
     OPS(allocate_single, deallocate_single_seg, deallocate_unsized_single),
     OPS(allocate_single, deallocate_single_fixed, deallocate_unsized_single)},
    {OPS(pmr_impl_heap_resource_allocate, pmr_impl_heap_resource_deallocate,
         deallocate_unsized_shared),
     OPS(pmr_impl_heap_resource_allocate, deallocate_shared_seg,
         deallocate_unsized_shared),
     OPS(pmr_impl_heap_resource_allocate, deallocate_shared_fixed,
         deallocate_unsized_shared)}};
#undef OPS

const pmr_mem_resource_ops *pmr_impl_heap_resource_ops_of(
    const pmr_impl_heap_resource *s) {
  unsigned source = !s->heaps.src.seg_frames                      ? 0
                    : s->small_limit == PMR_IMPL_POOL_TABLE_LIMIT ? 2
                                                                  : 1;
  return &heap_resource_ops[s->shared][source];
}

/* What both shapes' inits share; the source is initialised. */
static void init_common(pmr_impl_heap_resource *s, const pmr_pool_options *opts,
                        const char *type_name, bool shared) {
  s->type_name = type_name;
  s->shared = shared;
  s->largest = opts->largest_required_pool_block;
  s->small_limit = pmr_impl_pool_small_limit(s->largest);
  /* The stand-in's classes have no block either: one map for all heaps. */
  pmr_impl_heap_small_map(s->small_off, s->small_limit);
  atomic_init(&s->oversize_lock, 0);
  pmr_impl_oversize_init(&s->oversize, s->heaps.src.upstream,
                         opts->max_free_bytes);
  pmr_impl_oversize_attach(&s->oversize, lock_of(s, shared), &s->heaps.src);
}

bool pmr_impl_heap_resource_init(pmr_impl_heap_resource *s,
                                 const pmr_pool_options *opts,
                                 pmr_mem_resource *upstream,
                                 const char *type_name) {
  if (pmr_impl_slots_is_live(&s->slots)) {
    /* Init over a live instance: the old one is destroyed first, so no
     * thread keeps a heap pointing into the new one's memory. */
#ifdef PMR_DEBUG
    pmr_report_misuse(
        "%s %p: initialised again while live (not destroyed); destroying it "
        "first",
        type_name, (void *)((char *)s - PMR_IMPL_HEAP_RESOURCE_OFFSET));
#endif
    pmr_impl_heap_resource_destroy(s);
  }
  memset(s, 0, sizeof *s);
  pmr_impl_thread_heaps_init(&s->heaps, upstream, opts);
  init_common(s, opts, type_name, true);
#ifdef PMR_DEBUG
  const pmr_mem_resource *up = s->heaps.src.upstream;
  if (up->ops->traits != NULL &&
      (up->ops->traits(up) & PMR_TRAIT_THREAD_SAFE) == 0)
    pmr_report_misuse(
        "%s %p: upstream %p is not thread-safe (it declares traits without "
        "PMR_TRAIT_THREAD_SAFE), yet this resource calls it from any thread",
        type_name, (void *)((char *)s - PMR_IMPL_HEAP_RESOURCE_OFFSET),
        (const void *)up);
#endif
  s->slots.ops = &slot_ops;
  if (!pmr_impl_slots_register(&s->slots, format_none)) return false;
#ifdef PMR_DEBUG
  s->debug = pmr_impl_track_new();
#endif
  s->live = true;
  return true;
}

void pmr_impl_heap_resource_init_single(pmr_impl_heap_resource_single *one,
                                        const pmr_pool_options *opts,
                                        pmr_mem_resource *upstream,
                                        const char *type_name) {
  pmr_impl_heap_resource *s = &one->r;
  memset(s, 0, sizeof *s);
  /* A source no other thread shares: no segment cache lock-outs to wait
   * for, so it never asks for a slow path to shrink it for others. */
  pmr_impl_source_init(&s->heaps.src, upstream, opts->max_blocks_per_chunk,
                       opts->max_free_bytes, false);
  init_common(s, opts, type_name, false);
  pmr_impl_heap_init(&one->heap, &s->heaps.src,
                     opts->largest_required_pool_block, true);
#ifdef PMR_DEBUG
  s->debug = pmr_impl_track_new();
#endif
  s->live = true;
}

/* Every heap taken back: shared, freed (unregister: the slots too);
 * single, reset. */
static void heaps_clear(pmr_impl_heap_resource *s, bool unregister) {
  if (s->shared) pmr_impl_slots_clear(&s->slots, unregister);
}

void pmr_impl_heap_resource_release(pmr_impl_heap_resource *s) {
  if (!s->live) return; /* destroyed, or init failed */
  heaps_clear(s, false);
  pmr_impl_oversize_release(&s->oversize, s->heaps.src.upstream);
  pmr_impl_source_release(&s->heaps.src);
  if (!s->shared) pmr_impl_heap_reset(my_heap(s, false));
  pmr_impl_track_clear(s->debug);
}

bool pmr_impl_heap_resource_destroy(pmr_impl_heap_resource *s) {
  if (!s->live) return false; /* destroyed already, or init failed */
  heaps_clear(s, true);
  pmr_impl_oversize_release(&s->oversize, s->heaps.src.upstream);
  pmr_impl_source_release(&s->heaps.src);
  if (!s->shared) pmr_impl_heap_reset(my_heap(s, false));
  pmr_impl_track_delete(s->debug);
  s->debug = NULL;
  s->live = false;
  return true;
}

size_t pmr_impl_heap_resource_trim(pmr_impl_heap_resource *s) {
  if (!s->live) return 0;
  size_t before = pmr_impl_source_released(&s->heaps.src);
  if (s->shared)
    pmr_impl_thread_heaps_trim_heaps(&s->heaps, find_heap(s));
  else
    pmr_impl_heap_trim(my_heap(s, false));
  size_t given = pmr_impl_oversize_trim(&s->oversize, lock_of(s, s->shared),
                                        s->heaps.src.upstream);
  /* The process's freed large memory too: a trim gives back what it can. */
  given += pmr_large_reservoir_trim();
  pmr_impl_source_trim(&s->heaps.src, 0);
  /* Segments that went back meanwhile by any path count (another thread's
   * give-back too). */
  return given + (pmr_impl_source_released(&s->heaps.src) - before);
}
