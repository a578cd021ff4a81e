/* pmr_unsynchronized_pool: heap_resource.h's single shape (one page heap,
 * no owner test), with std's pool options and statistics. */
#include "resources/pmr_unsynchronized_pool.h"

#include "resources/internal/heap_resource.h"
#include "resources/internal/live_registry.h"

typedef struct state {
  pmr_impl_heap_resource_single core; /* first: heap_resource.h */
  pmr_pool_options opts;              /* effective */
} state;

PMR_IMPL_STATE_FITS(pmr_unsynchronized_pool, state);
_Static_assert(offsetof(pmr_unsynchronized_pool, pmr_impl_state) ==
                   PMR_IMPL_HEAP_RESOURCE_OFFSET,
               "the state lies where heap_resource.c looks for it");

/* Debug builds: the live unsynchronized pools, to report init over one. */
static pmr_impl_live_registry registry =
    PMR_IMPL_LIVE_REGISTRY("unsynchronized_pool", NULL, NULL);

static state *state_of(const pmr_unsynchronized_pool *p) {
  return (state *)(void *)((pmr_unsynchronized_pool *)(uintptr_t)p)
      ->pmr_impl_state.bytes;
}

/* A destroyed pool's: every call fails (live_registry.h). */
PMR_IMPL_DESTROYED_OPS(destroyed_ops, "unsynchronized_pool");

bool pmr_unsynchronized_pool_init(pmr_unsynchronized_pool *p,
                                  const pmr_pool_options *opts,
                                  pmr_mem_resource *upstream) {
  PMR_IMPL_CHECK_NOT_NULL(p, "unsynchronized_pool", false);
  if (pmr_impl_live_debug_init(&registry, p))
    pmr_unsynchronized_pool_destroy(p);
  state *s = state_of(p);
  s->opts = pmr_impl_heap_options(opts);
  pmr_impl_heap_resource_init_single(&s->core, &s->opts, upstream,
                                     "unsynchronized_pool");
  p->base.ops = pmr_impl_heap_resource_ops_of(&s->core.r);
  pmr_impl_live_debug_add(&registry, p);
  return true;
}

void pmr_unsynchronized_pool_release(pmr_unsynchronized_pool *p) {
  PMR_IMPL_CHECK_NOT_NULL(p, "unsynchronized_pool", );
  pmr_impl_heap_resource_release(&state_of(p)->core.r);
}

void pmr_unsynchronized_pool_destroy(pmr_unsynchronized_pool *p) {
  PMR_IMPL_CHECK_NOT_NULL(p, "unsynchronized_pool", );
  if (!state_of(p)->core.r.live) return;
  pmr_impl_live_debug_remove(&registry, p);
  pmr_impl_heap_resource_destroy(&state_of(p)->core.r);
  p->base.ops = &destroyed_ops;
}

size_t pmr_unsynchronized_pool_trim(pmr_unsynchronized_pool *p) {
  PMR_IMPL_CHECK_NOT_NULL(p, "unsynchronized_pool", 0);
  return pmr_impl_heap_resource_trim(&state_of(p)->core.r);
}

pmr_pool_stats pmr_unsynchronized_pool_get_stats(
    const pmr_unsynchronized_pool *p) {
  PMR_IMPL_CHECK_NOT_NULL(p, "unsynchronized_pool", (pmr_pool_stats){0});
  return pmr_impl_heap_resource_pool_stats(&state_of(p)->core.r);
}

pmr_pool_options pmr_unsynchronized_pool_get_options(
    const pmr_unsynchronized_pool *p) {
  PMR_IMPL_CHECK_NOT_NULL(p, "unsynchronized_pool", (pmr_pool_options){0});
  return state_of(p)->opts;
}

pmr_mem_resource *pmr_unsynchronized_pool_upstream(
    const pmr_unsynchronized_pool *p) {
  PMR_IMPL_CHECK_NOT_NULL(p, "unsynchronized_pool", NULL);
  return state_of(p)->core.r.heaps.src.upstream;
}
