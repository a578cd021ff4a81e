/* The engine's resource's statistics (see heap_resource.h). */
#include <string.h>

#include "resources/internal/heap_resource.h"

/* Under the registry's mutex: no heap is made or abandoned meanwhile. */
static void count_heaps(pmr_impl_slot_owner *o, void *arg) {
  pmr_impl_heap_resource *s =
      (pmr_impl_heap_resource *)(void *)((char *)o -
                                         offsetof(pmr_impl_heap_resource,
                                                  slots));
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
  if (s->shared) pmr_impl_slots_locked(&s->slots, count_heaps, &st);
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

pmr_pool_stats pmr_impl_heap_resource_pool_stats(pmr_impl_heap_resource *s) {
  pmr_impl_heap_resource_stats h = pmr_impl_heap_resource_get_stats(s);
  pmr_pool_stats st;
  st.oversize_bytes = h.oversize_bytes + h.run_bytes;
  st.free_oversize_bytes = h.free_oversize_bytes;
  st.free_page_bytes = h.free_page_bytes;
  st.held_bytes = h.segment_bytes + h.oversize_bytes + h.free_oversize_bytes;
  return st;
}
