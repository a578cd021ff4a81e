/* pmr_unsynchronized_pool: one page heap over its own page source, an
 * oversize list, and (debug builds) a table of live blocks. */
#include "resources/pmr_unsynchronized_pool.h"

#include <errno.h>

#include "resources/internal/debug_track.h"
#include "resources/internal/live_registry.h"
#include "resources/internal/oversize.h"
#include "resources/internal/page_heap.h"
#include "resources/internal/platform.h"
#include "resources/pmr_segment_cache.h"

typedef struct {
  pmr_impl_page_heap heap;
  pmr_impl_page_source src;
  pmr_impl_oversize_list oversize;
  pmr_pool_options opts; /* effective */
  size_t small_limit;    /* min(largest, table limit): keys below it are fast */
  uint8_t small[PMR_IMPL_POOL_TABLE_LIMIT]; /* their classes (page_heap.h) */
  pmr_impl_track *debug; /* PMR_DEBUG builds only; NULL otherwise */
  bool live;
} state;

_Static_assert(sizeof(state) <=
                   sizeof(((pmr_unsynchronized_pool *)0)->pmr_impl_state),
               "pmr_unsynchronized_pool.pmr_impl_state is too small");

/* Debug builds: the live unsynchronized pools, to report init over one. */
static pmr_impl_live_registry registry =
    PMR_IMPL_LIVE_REGISTRY("unsynchronized_pool", NULL, NULL);

static state *state_of(pmr_mem_resource *self) {
  return (state *)(void *)((pmr_unsynchronized_pool *)self)
      ->pmr_impl_state.bytes;
}
static const state *cstate_of(const pmr_unsynchronized_pool *p) {
  return (const state *)(const void *)p->pmr_impl_state.bytes;
}

#ifdef PMR_DEBUG
#define TRACK(s, p, bytes, alignment) \
  ((p) != NULL ? pmr_impl_track_add((s)->debug, p, bytes, alignment) : (void)0)
#else
#define TRACK(s, p, bytes, alignment) ((void)0)
#endif

/* Everything but the fast path: page changes, sizes above 1024, 0 bytes,
 * oversize requests. Out of line so the fast path stays a leaf; it finds
 * the class again, so that the fast path passes on what it got and keeps
 * no class pointer for the call. */
PMR_NOINLINE static void *unsync_allocate_slow(pmr_mem_resource *self,
                                               size_t bytes, size_t alignment) {
  state *s = state_of(self);
  void *p = NULL;
  size_t key = pmr_impl_heap_key(bytes, alignment);
  if (key < s->small_limit) /* first the class's next page */
    p = pmr_impl_heap_alloc_local(&s->heap,
                                  pmr_impl_heap_small(&s->heap, s->small, key));
  if (PMR_UNLIKELY(pmr_impl_source_waits(&s->src)))
    pmr_impl_source_shrink(&s->src);
  if (p != NULL) {
    TRACK(s, p, bytes, alignment);
    return p;
  }
  pmr_impl_page_class *k = pmr_impl_heap_class(&s->heap, bytes, alignment);
  if (k == &s->heap.empty)
    p = pmr_impl_oversize_alloc(&s->oversize, NULL, s->src.upstream, &s->src,
                                bytes, alignment);
  else if ((p = pmr_impl_heap_alloc(&s->heap, k)) == NULL) {
    /* No segment from upstream: the kept oversize blocks go back, and the
     * request is tried once more. */
    int saved = errno;
    if (pmr_impl_oversize_give_back(&s->oversize, NULL, s->src.upstream,
                                    NULL) != 0 &&
        (p = pmr_impl_heap_alloc(&s->heap, k)) != NULL)
      errno = saved;
  }
  TRACK(s, p, bytes, alignment);
  return p;
}

static void *unsync_allocate(pmr_mem_resource *self, size_t bytes,
                             size_t alignment) {
  state *s = state_of(self);
  size_t key = pmr_impl_heap_key(bytes, alignment);
  if (PMR_LIKELY(key < s->small_limit)) {
    void *b = pmr_impl_heap_pop(pmr_impl_heap_small(&s->heap, s->small, key));
    if (PMR_LIKELY(b != NULL)) {
      TRACK(s, b, bytes, alignment);
      return b;
    }
  }
  return unsync_allocate_slow(self, bytes, alignment);
}

/* Takes what the fast path got, as it got it: the call is a jump. */
PMR_NOINLINE static void unsync_deallocate_slow(pmr_mem_resource *self, void *p,
                                                size_t bytes,
                                                size_t alignment) {
  state *s = state_of(self);
  if (pmr_impl_heap_class(&s->heap, bytes, alignment) != &s->heap.empty)
    pmr_impl_heap_free(&s->src, p);
  else
    pmr_impl_oversize_free(&s->oversize, NULL, s->src.upstream, p, bytes,
                           alignment);
}

/* seg: the source's frames are segments (page_source.h: seg_frames), so
 * its geometry is known (pmr_impl_page_of_seg) and not read. fixed (with
 * seg): the fast path serves every size up to PMR_IMPL_POOL_TABLE_LIMIT,
 * so the size bound is a constant too and the free reads nothing of the
 * pool. */
static inline void deallocate(pmr_mem_resource *self, void *p, size_t bytes,
                              size_t alignment, bool seg, bool fixed) {
  state *s = state_of(self);
#ifdef PMR_DEBUG
  bool pooled =
      pmr_impl_heap_class(&s->heap, bytes, alignment) != &s->heap.empty;
  if (!pmr_impl_track_check_free(s->debug, "unsynchronized_pool", self, p,
                                 bytes, alignment, pooled))
    return;
#endif
  size_t limit = fixed ? PMR_IMPL_POOL_TABLE_LIMIT : s->small_limit;
  if (PMR_LIKELY(pmr_impl_heap_key(bytes, alignment) < limit)) {
    pmr_impl_page *pg =
        seg ? pmr_impl_page_of_seg(p) : pmr_impl_page_of(&s->src, p);
    if (pmr_impl_page_push(pg, p)) pmr_impl_heap_free_slow(pg);
  } else {
    unsync_deallocate_slow(self, p, bytes, alignment);
  }
}

static void unsync_deallocate(pmr_mem_resource *self, void *p, size_t bytes,
                              size_t alignment) {
  deallocate(self, p, bytes, alignment, false, false);
}

static void unsync_deallocate_seg(pmr_mem_resource *self, void *p, size_t bytes,
                                  size_t alignment) {
  deallocate(self, p, bytes, alignment, true, false);
}

static void unsync_deallocate_fixed(pmr_mem_resource *self, void *p,
                                    size_t bytes, size_t alignment) {
  deallocate(self, p, bytes, alignment, true, true);
}

/* In place when the new size stays in the block's class, or both sizes
 * are oversize and the block has room (pmr_impl_oversize_try_resize). */
static bool unsync_try_resize(pmr_mem_resource *self, void *p, size_t old_bytes,
                              size_t new_bytes, size_t alignment) {
  state *s = state_of(self);
  pmr_impl_page_class *k = pmr_impl_heap_class(&s->heap, old_bytes, alignment);
  bool pooled = k != &s->heap.empty;
  if (k != pmr_impl_heap_class(&s->heap, new_bytes, alignment)) return false;
#ifdef PMR_DEBUG
  if (!pmr_impl_track_check_free(s->debug, "unsynchronized_pool", self, p,
                                 old_bytes, alignment, pooled))
    return false;
#endif
  bool done =
      pooled || pmr_impl_oversize_try_resize(&s->oversize, NULL, &s->src, p,
                                             old_bytes, new_bytes);
#ifdef PMR_DEBUG
  pmr_impl_track_add(s->debug, p, done ? new_bytes : old_bytes, alignment);
#endif
  return done;
}

/* Not thread-safe; keeps freed blocks; maps its large blocks where its
 * upstream lets it (platform.h). */
static unsigned unsync_traits(const pmr_mem_resource *self) {
  const state *s = state_of((pmr_mem_resource *)(uintptr_t)self);
  return PMR_TRAIT_KEEPS_FREED |
         (pmr_impl_os_maps_large(s->src.upstream) ? PMR_TRAIT_MAPS_LARGE : 0);
}

/* Pooled blocks: the class size, from the page (no header). */
static size_t unsync_usable_size(const pmr_mem_resource *self, const void *p,
                                 size_t bytes, size_t alignment) {
  const state *s = state_of((pmr_mem_resource *)(uintptr_t)self);
  if (p != NULL) return pmr_impl_source_usable_size(&s->src, p);
  size_t key = pmr_impl_heap_key(bytes, alignment);
  if (key < s->small_limit) /* the fast paths' sizes: key + 1 rounded */
    return pmr_impl_pool_class_size(pmr_impl_pool_class_of(key + 1));
  const pmr_impl_page_class *k = pmr_impl_heap_class(
      (pmr_impl_page_heap *)(uintptr_t)&s->heap, bytes, alignment);
  return k == &s->heap.empty ? 0 : k->block;
}

/* Pooled blocks only (the page tells the size); 0 for the rest. Debug
 * builds: checked against the table with the alignment only. */
static size_t unsync_deallocate_unsized(pmr_mem_resource *self, void *p,
                                        size_t alignment) {
  state *s = state_of(self);
  pmr_impl_page *pg;
  size_t block;
  if (!pmr_impl_source_class_page(&s->src, p, &pg, &block))
    return 0; /* a run, or no page of ours serving a class */
#ifdef PMR_DEBUG
  if (!pmr_impl_track_check_free(s->debug, "unsynchronized_pool", self, p,
                                 PMR_IMPL_TRACK_ANY_BYTES, alignment, true))
    return block;
#else
  (void)alignment;
#endif
  if (pmr_impl_page_push(pg, p)) pmr_impl_heap_free_slow(pg);
  return block;
}

static const pmr_mem_resource_ops unsync_ops = {
    .allocate = unsync_allocate,
    .deallocate = unsync_deallocate,
    .try_resize = unsync_try_resize,
    .traits = unsync_traits,
    .usable_size = unsync_usable_size,
    .deallocate_unsized = unsync_deallocate_unsized,
};

/* For a source that maps its segments. */
static const pmr_mem_resource_ops unsync_ops_seg = {
    .allocate = unsync_allocate,
    .deallocate = unsync_deallocate_seg,
    .try_resize = unsync_try_resize,
    .traits = unsync_traits,
    .usable_size = unsync_usable_size,
    .deallocate_unsized = unsync_deallocate_unsized,
};

/* The same, with a fast path up to PMR_IMPL_POOL_TABLE_LIMIT. */
static const pmr_mem_resource_ops unsync_ops_fixed = {
    .allocate = unsync_allocate,
    .deallocate = unsync_deallocate_fixed,
    .try_resize = unsync_try_resize,
    .traits = unsync_traits,
    .usable_size = unsync_usable_size,
    .deallocate_unsized = unsync_deallocate_unsized,
};

/* A destroyed pool's: every call fails (live_registry.h). */
PMR_IMPL_DESTROYED_OPS(destroyed_ops, "unsynchronized_pool");

bool pmr_unsynchronized_pool_init(pmr_unsynchronized_pool *p,
                                  const pmr_pool_options *opts,
                                  pmr_mem_resource *upstream) {
  PMR_IMPL_CHECK_NOT_NULL(p, "unsynchronized_pool", false);
  if (pmr_impl_live_debug_init(&registry, p))
    pmr_unsynchronized_pool_destroy(p);
  p->base.ops = &unsync_ops;
  state *s = state_of(&p->base);
  s->opts = pmr_impl_heap_options(opts);
  pmr_impl_source_init(&s->src, upstream, s->opts.max_blocks_per_chunk,
                       s->opts.max_free_bytes, false);
  pmr_impl_heap_init(&s->heap, &s->src, s->opts.largest_required_pool_block,
                     true);
  s->small_limit =
      pmr_impl_pool_small_limit(s->opts.largest_required_pool_block);
  if (s->src.seg_frames)
    p->base.ops = s->small_limit == PMR_IMPL_POOL_TABLE_LIMIT
                      ? &unsync_ops_fixed
                      : &unsync_ops_seg;
  pmr_impl_heap_small_map(s->small, s->small_limit);
  pmr_impl_oversize_init(&s->oversize, s->src.upstream, s->opts.max_free_bytes);
  pmr_impl_oversize_attach(&s->oversize, NULL, &s->src);
#ifdef PMR_DEBUG
  s->debug = pmr_impl_track_new();
#else
  s->debug = NULL;
#endif
  s->live = true;
  pmr_impl_live_debug_add(&registry, p);
  return true;
}

void pmr_unsynchronized_pool_release(pmr_unsynchronized_pool *p) {
  PMR_IMPL_CHECK_NOT_NULL(p, "unsynchronized_pool", );
  state *s = state_of(&p->base);
  if (!s->live) return;
  pmr_impl_oversize_release(&s->oversize, s->src.upstream);
  pmr_impl_source_release(&s->src);
  pmr_impl_heap_reset(&s->heap);
  pmr_impl_track_clear(s->debug);
}

void pmr_unsynchronized_pool_destroy(pmr_unsynchronized_pool *p) {
  PMR_IMPL_CHECK_NOT_NULL(p, "unsynchronized_pool", );
  state *s = state_of(&p->base);
  if (!s->live) return;
  pmr_impl_live_debug_remove(&registry, p);
  pmr_unsynchronized_pool_release(p);
  pmr_impl_track_delete(s->debug);
  s->debug = NULL;
  s->live = false;
  p->base.ops = &destroyed_ops;
}

size_t pmr_unsynchronized_pool_trim(pmr_unsynchronized_pool *p) {
  PMR_IMPL_CHECK_NOT_NULL(p, "unsynchronized_pool", 0);
  state *s = state_of(&p->base);
  if (!s->live) return 0;
  /* Segments that went back when their last page came back count too. */
  size_t before = pmr_impl_source_released(&s->src);
  pmr_impl_heap_trim(&s->heap);
  size_t given = pmr_impl_oversize_trim(&s->oversize, NULL, s->src.upstream);
  /* The process's freed large memory too: a trim gives back what it can. */
  given += pmr_large_reservoir_trim();
  pmr_impl_source_trim(&s->src, 0);
  return given + (pmr_impl_source_released(&s->src) - before);
}

pmr_pool_stats pmr_unsynchronized_pool_get_stats(
    const pmr_unsynchronized_pool *p) {
  PMR_IMPL_CHECK_NOT_NULL(p, "unsynchronized_pool", (pmr_pool_stats){0});
  const state *s = cstate_of(p);
  pmr_pool_stats st = {0, 0, 0, 0};
  if (!s->live) return st;
  st.oversize_bytes = s->oversize.live.size + s->src.run_bytes;
  st.free_oversize_bytes = s->oversize.kept;
  st.free_page_bytes = s->src.free_count * PMR_IMPL_PAGE_SIZE;
  st.held_bytes =
      s->src.segment_bytes + s->oversize.live.size + s->oversize.kept;
  return st;
}

pmr_pool_options pmr_unsynchronized_pool_get_options(
    const pmr_unsynchronized_pool *p) {
  PMR_IMPL_CHECK_NOT_NULL(p, "unsynchronized_pool", (pmr_pool_options){0});
  return cstate_of(p)->opts;
}

pmr_mem_resource *pmr_unsynchronized_pool_upstream(
    const pmr_unsynchronized_pool *p) {
  PMR_IMPL_CHECK_NOT_NULL(p, "unsynchronized_pool", NULL);
  return cstate_of(p)->src.upstream;
}
