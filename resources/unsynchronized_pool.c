/* pmr_unsynchronized_pool: a pool core, an oversize list, and (debug builds)
 * a table of live blocks. */
#include "resources/pmr_unsynchronized_pool.h"

#include "resources/internal/debug_track.h"
#include "resources/internal/pool_core.h"

typedef struct {
  pmr_impl_pool_core core;
  pmr_impl_big_block big;
  pmr_impl_track *debug; /* PMR_DEBUG builds only; NULL otherwise */
} state;

_Static_assert(sizeof(state) <=
                   sizeof(((pmr_unsynchronized_pool *)0)->pmr_impl_state),
               "pmr_unsynchronized_pool.pmr_impl_state is too small");

static state *state_of(pmr_mem_resource *self) {
  return (state *)(void *)((pmr_unsynchronized_pool *)self)
      ->pmr_impl_state.bytes;
}
static const state *cstate_of(const pmr_unsynchronized_pool *p) {
  return (const state *)(const void *)p->pmr_impl_state.bytes;
}

/* Everything but the fast path: refills, sizes above 1024, 0 bytes,
 * oversize requests. Out of line so the fast path stays a leaf. */
PMR_NOINLINE static void *unsync_allocate_slow(state *s, size_t bytes,
                                               size_t alignment) {
  pmr_impl_pool_class *k =
      pmr_impl_pool_find_nonzero(&s->core, bytes, alignment);
  if (k == &s->core.empty)
    return pmr_impl_big_alloc(&s->big, NULL, s->core.upstream, bytes,
                              alignment);
  void *p = pmr_impl_pool_take(k);
  return p != NULL ? p : pmr_impl_pool_core_refill(&s->core, k);
}

static void *unsync_allocate(pmr_mem_resource *self, size_t bytes,
                             size_t alignment) {
  state *s = state_of(self);
  void *p = NULL;
  pmr_impl_pool_class *k = pmr_impl_pool_find_small(&s->core, bytes, alignment);
  if (PMR_LIKELY(k != NULL)) p = pmr_impl_pool_take(k);
  if (PMR_UNLIKELY(p == NULL)) p = unsync_allocate_slow(s, bytes, alignment);
#ifdef PMR_DEBUG
  if (p != NULL) pmr_impl_track_add(s->debug, p, bytes, alignment);
#endif
  return p;
}

PMR_NOINLINE static void unsync_deallocate_slow(state *s, void *p, size_t bytes,
                                                size_t alignment) {
  pmr_impl_pool_class *k =
      pmr_impl_pool_find_nonzero(&s->core, bytes, alignment);
  if (k != &s->core.empty)
    pmr_impl_pool_put(k, p);
  else
    pmr_impl_big_free(NULL, s->core.upstream, p, bytes, alignment);
}

static void unsync_deallocate(pmr_mem_resource *self, void *p, size_t bytes,
                              size_t alignment) {
  state *s = state_of(self);
#ifdef PMR_DEBUG
  bool pooled =
      pmr_impl_pool_find_nonzero(&s->core, bytes, alignment) != &s->core.empty;
  if (!pmr_impl_pool_debug_free(s->debug, "unsynchronized_pool", self, p, bytes,
                                alignment, pooled))
    return;
#endif
  pmr_impl_pool_class *k = pmr_impl_pool_find_small(&s->core, bytes, alignment);
  if (PMR_LIKELY(k != NULL && k != &s->core.empty))
    pmr_impl_pool_put(k, p);
  else
    unsync_deallocate_slow(s, p, bytes, alignment);
}

static const pmr_mem_resource_ops unsync_ops = {
    .allocate = unsync_allocate,
    .deallocate = unsync_deallocate,
};

bool pmr_unsynchronized_pool_init(pmr_unsynchronized_pool *p,
                                  const pmr_pool_options *opts,
                                  pmr_mem_resource *upstream) {
  p->base.ops = &unsync_ops;
  state *s = state_of(&p->base);
  pmr_impl_pool_core_init(&s->core, opts, upstream);
  pmr_impl_big_init(&s->big);
#ifdef PMR_DEBUG
  s->debug = pmr_impl_track_new();
#else
  s->debug = NULL;
#endif
  return true;
}

void pmr_unsynchronized_pool_release(pmr_unsynchronized_pool *p) {
  state *s = state_of(&p->base);
  pmr_impl_big_release(&s->big, s->core.upstream);
  pmr_impl_pool_core_release(&s->core);
  pmr_impl_track_clear(s->debug);
}

void pmr_unsynchronized_pool_destroy(pmr_unsynchronized_pool *p) {
  pmr_unsynchronized_pool_release(p);
  state *s = state_of(&p->base);
  pmr_impl_track_delete(s->debug);
  s->debug = NULL;
}

pmr_pool_options pmr_unsynchronized_pool_get_options(
    const pmr_unsynchronized_pool *p) {
  const state *s = cstate_of(p);
  pmr_pool_options o = {s->core.max_blocks, s->core.largest};
  return o;
}

pmr_mem_resource *pmr_unsynchronized_pool_upstream(
    const pmr_unsynchronized_pool *p) {
  return cstate_of(p)->core.upstream;
}
