/* The thread-safe pool resource over per-thread page heaps (see
 * heap_resource.h). */
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

static void *allocate_slow(pmr_impl_heap_resource *s, size_t bytes,
                           size_t alignment) {
  int cls = class_of(s, bytes, alignment);
  if (cls < 0)
    return pmr_impl_oversize_alloc(&s->oversize, &s->oversize_lock,
                                   s->heaps.src.upstream, &s->heaps.src, bytes,
                                   alignment);
  pmr_impl_thread_heap *t = find_heap(s);
  if (t == NULL &&
      (t = (pmr_impl_thread_heap *)pmr_impl_slots_get(&s->slots)) == NULL)
    return NULL; /* errno: malloc's ENOMEM */
  pmr_impl_page_class *k = &t->heap.classes[cls];
  void *p = pmr_impl_heap_pop_checked(k);
  if (p == NULL && (p = pmr_impl_thread_heap_alloc(t, k)) == NULL &&
      pmr_impl_oversize_give_back(&s->oversize, &s->oversize_lock,
                                  s->heaps.src.upstream, NULL) != 0)
    p = pmr_impl_thread_heap_alloc(t, k); /* kept blocks went back */
  return p;
}

/* errno is kept on success. */
PMR_NOINLINE static void *heap_resource_allocate_slow(pmr_mem_resource *self,
                                                      size_t bytes,
                                                      size_t alignment) {
  int saved = errno;
  pmr_impl_heap_resource *s = state_of(self);
  void *p = allocate_slow(s, bytes, alignment);
  if (p != NULL) errno = saved;
#ifdef PMR_DEBUG
  if (p != NULL)
    pmr_impl_track_add_locked(s->debug, &s->oversize_lock, p, bytes, alignment);
#endif
  return p;
}

/* A pooled block p (debug builds: checked): pushed locally when its page's
 * heap is the calling thread's, else onto the page's remote list. */
static void free_pooled(pmr_impl_heap_resource *s, void *p) {
  pmr_impl_heap_resource_free_pooled(pmr_impl_page_of(&s->heaps.src, p), p);
}

/* Deallocation never fails, never calls upstream and leaves errno alone. */
PMR_NOINLINE static void heap_resource_deallocate_slow(pmr_mem_resource *self,
                                                       void *p, size_t bytes,
                                                       size_t alignment) {
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
    free_pooled(s, p);
  else
    pmr_impl_oversize_free(&s->oversize, &s->oversize_lock,
                           s->heaps.src.upstream, p, bytes, alignment);
  errno = saved;
}

#ifndef PMR_DEBUG
/* A failed pop's first resort, with the fast path's arguments: the class's
 * next page in the thread's heap (the stand-in has none), else the slow
 * path. */
PMR_NOINLINE static void *heap_resource_allocate_next(pmr_mem_resource *self,
                                                      size_t bytes,
                                                      size_t alignment) {
  pmr_impl_heap_resource *s = state_of(self);
  size_t key = pmr_impl_heap_key(bytes, alignment);
  pmr_impl_page_heap *h = (pmr_impl_page_heap *)pmr_impl_slots_mine(&s->slots);
  void *b =
      pmr_impl_heap_alloc_local(h, pmr_impl_heap_small(h, s->small_off, key));
  if (b == NULL) return heap_resource_allocate_slow(self, bytes, alignment);
  if (PMR_UNLIKELY(pmr_impl_source_waits(&s->heaps.src)))
    pmr_impl_source_shrink(&s->heaps.src);
  return b;
}
#endif

/* The fast paths: the calling thread's heap (the stand-in, whose classes
 * have no block and which owns no page, when it has none), its class's
 * current page, that page's free list. Every other case goes to the slow
 * path. Debug builds check every call there. */
void *pmr_impl_heap_resource_allocate(pmr_mem_resource *self, size_t bytes,
                                      size_t alignment) {
#ifndef PMR_DEBUG
  const pmr_impl_heap_resource *s = state_of(self);
  size_t key = pmr_impl_heap_key(bytes, alignment);
  if (PMR_LIKELY(key < s->small_limit)) {
    pmr_impl_page_heap *h =
        (pmr_impl_page_heap *)pmr_impl_slots_mine(&s->slots);
    void *b = pmr_impl_heap_pop(pmr_impl_heap_small(h, s->small_off, key));
    if (PMR_LIKELY(b != NULL)) return b;
    return heap_resource_allocate_next(self, bytes, alignment);
  }
#endif
  return heap_resource_allocate_slow(self, bytes, alignment);
}

/* The deallocation fast path: the block's page's heap is the calling
 * thread's (pmr_impl_thread_heap_mine: no load of the thread's heap), else one
 * push onto the page's remote list, which leaves errno alone. fixed: the
 * source's frames are segments (page_source.h: seg_frames, as over the
 * malloc resource or a pool over it) and the fast path serves every size
 * up to PMR_IMPL_POOL_TABLE_LIMIT (pmr_impl_heap_resource_ops_of), so neither
 * the geometry (pmr_impl_page_of_seg) nor the size bound is read: the free
 * reads nothing of the resource. */
static inline void heap_resource_deallocate(pmr_mem_resource *self, void *p,
                                            size_t bytes, size_t alignment,
                                            bool fixed) {
#ifndef PMR_DEBUG
  const pmr_impl_heap_resource *s = state_of(self);
  size_t limit = fixed ? PMR_IMPL_POOL_TABLE_LIMIT : s->small_limit;
  if (PMR_LIKELY(pmr_impl_heap_key(bytes, alignment) < limit)) {
    pmr_impl_heap_resource_free_pooled(
        fixed ? pmr_impl_page_of_seg(p) : pmr_impl_page_of(&s->heaps.src, p),
        p);
    return;
  }
#else
  (void)fixed;
#endif
  heap_resource_deallocate_slow(self, p, bytes, alignment);
}

void pmr_impl_heap_resource_deallocate(pmr_mem_resource *self, void *p,
                                       size_t bytes, size_t alignment) {
  heap_resource_deallocate(self, p, bytes, alignment, false);
}

static void heap_resource_deallocate_fixed(pmr_mem_resource *self, void *p,
                                           size_t bytes, size_t alignment) {
  heap_resource_deallocate(self, p, bytes, alignment, true);
}

size_t pmr_impl_heap_resource_free_unsized(pmr_mem_resource *self, void *p) {
  pmr_impl_heap_resource *s = state_of(self);
  pmr_impl_page *pg;
  size_t block;
  if (!pmr_impl_source_class_page(&s->heaps.src, p, &pg, &block))
    return 0; /* a run, or no page of ours serving a class */
#ifndef PMR_DEBUG
  pmr_impl_heap_resource_free_pooled(pg, p);
#else
  /* Alignment 1: the block's size is its class's, a multiple of any
   * alignment it was asked with, so it names the same class. */
  heap_resource_deallocate_slow(self, p, block, 1);
#endif
  return block;
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
                            &s->oversize, &s->oversize_lock, &s->heaps.src, p,
                            old_bytes, new_bytes);
#ifdef PMR_DEBUG
  pmr_impl_track_add_locked(s->debug, &s->oversize_lock, p,
                            done ? new_bytes : old_bytes, alignment);
#endif
  return done;
}

static unsigned heap_resource_traits(const pmr_mem_resource *self) {
  const pmr_impl_heap_resource *s =
      state_of((pmr_mem_resource *)(uintptr_t)self);
  return PMR_TRAIT_THREAD_SAFE | PMR_TRAIT_KEEPS_FREED |
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

/* Pooled blocks only (the page tells the size; alignment names no other
 * class); 0 for the rest. Debug builds: checked against the table with
 * the alignment only. */
static size_t heap_resource_deallocate_unsized(pmr_mem_resource *self, void *p,
                                               size_t alignment) {
#ifndef PMR_DEBUG
  (void)alignment;
  return pmr_impl_heap_resource_free_unsized(self, p);
#else
  pmr_impl_heap_resource *s = state_of(self);
  size_t block = pmr_impl_source_usable_size(&s->heaps.src, p);
  if (block != 0 && pmr_impl_track_check_free_locked(
                        s->debug, &s->oversize_lock, s->type_name, self, p,
                        PMR_IMPL_TRACK_ANY_BYTES, alignment, true))
    free_pooled(s, p);
  return block;
#endif
}

static const pmr_mem_resource_ops heap_resource_ops = {
    .allocate = pmr_impl_heap_resource_allocate,
    .deallocate = pmr_impl_heap_resource_deallocate,
    .try_resize = heap_resource_try_resize,
    .traits = heap_resource_traits,
    .usable_size = heap_resource_usable_size,
    .deallocate_unsized = heap_resource_deallocate_unsized,
};

static const pmr_mem_resource_ops heap_resource_ops_fixed = {
    .allocate = pmr_impl_heap_resource_allocate,
    .deallocate = heap_resource_deallocate_fixed,
    .try_resize = heap_resource_try_resize,
    .traits = heap_resource_traits,
    .usable_size = heap_resource_usable_size,
    .deallocate_unsized = heap_resource_deallocate_unsized,
};

const pmr_mem_resource_ops *pmr_impl_heap_resource_ops_of(
    const pmr_impl_heap_resource *s) {
  return s->heaps.src.seg_frames && s->small_limit == PMR_IMPL_POOL_TABLE_LIMIT
             ? &heap_resource_ops_fixed
             : &heap_resource_ops;
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
  s->type_name = type_name;
  s->largest = opts->largest_required_pool_block;
  s->small_limit = pmr_impl_pool_small_limit(s->largest);
  /* The stand-in's classes have no block either: one map for all heaps. */
  pmr_impl_heap_small_map(s->small_off, s->small_limit);
  pmr_impl_thread_heaps_init(&s->heaps, upstream, opts);
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
  atomic_init(&s->oversize_lock, 0);
  pmr_impl_oversize_init(&s->oversize, s->heaps.src.upstream,
                         opts->max_free_bytes);
  pmr_impl_oversize_attach(&s->oversize, &s->oversize_lock, &s->heaps.src);
  s->slots.ops = &slot_ops;
  if (!pmr_impl_slots_register(&s->slots, format_none)) return false;
#ifdef PMR_DEBUG
  s->debug = pmr_impl_track_new();
#endif
  s->live = true;
  return true;
}

void pmr_impl_heap_resource_release(pmr_impl_heap_resource *s) {
  if (!s->live) return;                   /* destroyed, or init failed */
  pmr_impl_slots_clear(&s->slots, false); /* every heap freed */
  pmr_impl_oversize_release(&s->oversize, s->heaps.src.upstream);
  pmr_impl_source_release(&s->heaps.src);
  pmr_impl_track_clear(s->debug);
}

bool pmr_impl_heap_resource_destroy(pmr_impl_heap_resource *s) {
  if (!s->live) return false; /* destroyed already, or init failed */
  pmr_impl_slots_clear(&s->slots, true);
  pmr_impl_oversize_release(&s->oversize, s->heaps.src.upstream);
  pmr_impl_source_release(&s->heaps.src);
  pmr_impl_track_delete(s->debug);
  s->debug = NULL;
  s->live = false;
  return true;
}

size_t pmr_impl_heap_resource_trim(pmr_impl_heap_resource *s) {
  if (!s->live) return 0;
  size_t before = pmr_impl_source_released(&s->heaps.src);
  pmr_impl_thread_heaps_trim_heaps(&s->heaps, find_heap(s));
  size_t given = pmr_impl_oversize_trim(&s->oversize, &s->oversize_lock,
                                        s->heaps.src.upstream);
  /* The process's freed large memory too: a trim gives back what it can. */
  given += pmr_large_reservoir_trim();
  pmr_impl_source_trim(&s->heaps.src, 0);
  /* Segments that went back meanwhile by any path count (another thread's
   * give-back too). */
  return given + (pmr_impl_source_released(&s->heaps.src) - before);
}

/* Under the registry's mutex: no heap is made or abandoned meanwhile. */
static void count_heaps(pmr_impl_slot_owner *o, void *arg) {
  pmr_impl_heap_resource *s = state_of_owner(o);
  pmr_impl_heap_resource_stats *st = (pmr_impl_heap_resource_stats *)arg;
  st->threads = s->heaps.owned;
  size_t held;
  pmr_impl_thread_heaps_page_counts(&s->heaps, &held, &st->pages_taken,
                                    &st->pages_returned);
  st->thread_page_bytes = held * PMR_IMPL_PAGE_SIZE;
}

pmr_impl_heap_resource_stats pmr_impl_heap_resource_get_stats(
    pmr_impl_heap_resource *s) {
  pmr_impl_heap_resource_stats st;
  memset(&st, 0, sizeof st);
  if (!s->live) return st;
  pmr_impl_slots_locked(&s->slots, count_heaps, &st);
  pmr_impl_spin_lock(&s->oversize_lock);
  st.oversize_bytes = s->oversize.live.size;
  st.free_oversize_bytes = s->oversize.kept;
  pmr_impl_spin_unlock(&s->oversize_lock);
  pmr_impl_spin_lock(&s->heaps.src.lock);
  st.segment_bytes = s->heaps.src.segment_bytes;
  st.run_bytes = s->heaps.src.run_bytes;
  st.free_page_bytes = s->heaps.src.free_count * PMR_IMPL_PAGE_SIZE;
  pmr_impl_spin_unlock(&s->heaps.src.lock);
  return st;
}
