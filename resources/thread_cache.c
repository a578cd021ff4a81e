/* pmr_thread_cache: the per-thread page heaps of heap_resource.h, with
 * the thread cache's options and statistics. */
#include "resources/pmr_thread_cache.h"

#include <string.h>

#include "resources/internal/heap_resource.h"
#include "resources/internal/live_registry.h"

typedef struct tc_state {
  pmr_impl_heap_resource core; /* first: heap_resource.h */
  pmr_thread_cache_options opts;
} tc_state;

PMR_IMPL_STATE_FITS(pmr_thread_cache, tc_state);
_Static_assert(offsetof(pmr_thread_cache, pmr_impl_state) ==
                   PMR_IMPL_HEAP_RESOURCE_OFFSET,
               "the state lies where heap_resource.c looks for it");

static tc_state *state_of(const pmr_thread_cache *tc) {
  return (tc_state *)(void *)((pmr_thread_cache *)(uintptr_t)tc)
      ->pmr_impl_state.bytes;
}

/* A destroyed instance's: every call fails (live_registry.h). */
PMR_IMPL_DESTROYED_OPS(destroyed_ops, "thread_cache");

bool pmr_thread_cache_init(pmr_thread_cache *tc,
                           const pmr_thread_cache_options *opts,
                           pmr_mem_resource *upstream) {
  PMR_IMPL_CHECK_NOT_NULL(tc, "thread_cache", false);
  tc_state *s = state_of(tc);
  pmr_thread_cache_options o;
  memset(&o, 0, sizeof o);
  if (opts != NULL) o = *opts;
  o.pool = pmr_impl_heap_options(&o.pool);
  bool ok =
      pmr_impl_heap_resource_init(&s->core, &o.pool, upstream, "thread_cache");
  s->opts = o;
  tc->base.ops = ok ? pmr_impl_heap_resource_ops_of(&s->core) : &destroyed_ops;
  return ok;
}

void pmr_thread_cache_release(pmr_thread_cache *tc) {
  PMR_IMPL_CHECK_NOT_NULL(tc, "thread_cache", );
  pmr_impl_heap_resource_release(&state_of(tc)->core);
}

void pmr_thread_cache_destroy(pmr_thread_cache *tc) {
  PMR_IMPL_CHECK_NOT_NULL(tc, "thread_cache", );
  if (pmr_impl_heap_resource_destroy(&state_of(tc)->core))
    tc->base.ops = &destroyed_ops;
}

size_t pmr_thread_cache_trim(pmr_thread_cache *tc) {
  PMR_IMPL_CHECK_NOT_NULL(tc, "thread_cache", 0);
  return pmr_impl_heap_resource_trim(&state_of(tc)->core);
}

pmr_thread_cache_stats pmr_thread_cache_get_stats(const pmr_thread_cache *tc) {
  pmr_thread_cache_stats st;
  memset(&st, 0, sizeof st);
  PMR_IMPL_CHECK_NOT_NULL(tc, "thread_cache", st);
  pmr_impl_heap_resource_stats h =
      pmr_impl_heap_resource_get_stats(&state_of(tc)->core);
  st.threads = h.threads;
  st.thread_page_bytes = h.thread_page_bytes;
  st.pages_taken = h.pages_taken;
  st.pages_returned = h.pages_returned;
  st.held_bytes = h.segment_bytes + h.oversize_bytes + h.free_oversize_bytes;
  st.free_page_bytes = h.free_page_bytes;
  st.free_oversize_bytes = h.free_oversize_bytes;
  return st;
}

pmr_thread_cache_options pmr_thread_cache_get_options(
    const pmr_thread_cache *tc) {
  pmr_thread_cache_options o;
  memset(&o, 0, sizeof o);
  PMR_IMPL_CHECK_NOT_NULL(tc, "thread_cache", o);
  return state_of(tc)->opts;
}

pmr_mem_resource *pmr_thread_cache_upstream(const pmr_thread_cache *tc) {
  PMR_IMPL_CHECK_NOT_NULL(tc, "thread_cache", NULL);
  return state_of(tc)->core.heaps.src.upstream;
}
