/* pmr_synchronized_pool: the per-thread page heaps of heap_resource.h,
 * with std's pool options and statistics. */
#include "resources/pmr_synchronized_pool.h"

#include <string.h>

#include "resources/internal/heap_resource.h"
#include "resources/internal/live_registry.h"

typedef struct state {
  pmr_impl_heap_resource core; /* first: heap_resource.h */
  pmr_pool_options opts;       /* effective */
} state;

PMR_IMPL_STATE_FITS(pmr_synchronized_pool, state);
_Static_assert(offsetof(pmr_synchronized_pool, pmr_impl_state) ==
                   PMR_IMPL_HEAP_RESOURCE_OFFSET,
               "the state lies where heap_resource.c looks for it");

static state *state_of(const pmr_synchronized_pool *p) {
  return (state *)(void *)((pmr_synchronized_pool *)(uintptr_t)p)
      ->pmr_impl_state.bytes;
}

/* A destroyed pool's: every call fails (live_registry.h). */
PMR_IMPL_DESTROYED_OPS(destroyed_ops, "synchronized_pool");

bool pmr_synchronized_pool_init(pmr_synchronized_pool *p,
                                const pmr_pool_options *opts,
                                pmr_mem_resource *upstream) {
  PMR_IMPL_CHECK_NOT_NULL(p, "synchronized_pool", false);
  state *s = state_of(p);
  pmr_pool_options o = pmr_impl_heap_options(opts);
  bool ok =
      pmr_impl_heap_resource_init(&s->core, &o, upstream, "synchronized_pool");
  s->opts = o;
  p->base.ops = ok ? pmr_impl_heap_resource_ops_of(&s->core) : &destroyed_ops;
  return ok;
}

void pmr_synchronized_pool_release(pmr_synchronized_pool *p) {
  PMR_IMPL_CHECK_NOT_NULL(p, "synchronized_pool", );
  pmr_impl_heap_resource_release(&state_of(p)->core);
}

void pmr_synchronized_pool_destroy(pmr_synchronized_pool *p) {
  PMR_IMPL_CHECK_NOT_NULL(p, "synchronized_pool", );
  if (pmr_impl_heap_resource_destroy(&state_of(p)->core))
    p->base.ops = &destroyed_ops;
}

size_t pmr_synchronized_pool_trim(pmr_synchronized_pool *p) {
  PMR_IMPL_CHECK_NOT_NULL(p, "synchronized_pool", 0);
  return pmr_impl_heap_resource_trim(&state_of(p)->core);
}

pmr_pool_stats pmr_synchronized_pool_get_stats(const pmr_synchronized_pool *p) {
  PMR_IMPL_CHECK_NOT_NULL(p, "synchronized_pool", (pmr_pool_stats){0});
  return pmr_impl_heap_resource_pool_stats(&state_of(p)->core);
}

pmr_pool_options pmr_synchronized_pool_get_options(
    const pmr_synchronized_pool *p) {
  PMR_IMPL_CHECK_NOT_NULL(p, "synchronized_pool", (pmr_pool_options){0});
  return state_of(p)->opts;
}

pmr_mem_resource *pmr_synchronized_pool_upstream(
    const pmr_synchronized_pool *p) {
  PMR_IMPL_CHECK_NOT_NULL(p, "synchronized_pool", NULL);
  return state_of(p)->core.heaps.src.upstream;
}
