/* Page heaps owned by threads (see thread_heap.h). */
#include "resources/internal/thread_heap.h"

#include <stdlib.h>
#include <string.h>

#include "resources/internal/fork_guard.h"
#include "resources/internal/meta_mem.h"
#include "resources/internal/thread_slots.h"

_Static_assert(sizeof(pmr_impl_thread_heap) <= PMR_IMPL_SLOT_NONE_BYTES,
               "the stand-in heap fits pmr_impl_slot_none");

#if !PMR_IMPL_TLS_FS
PMR_IMPL_THREAD_LOCAL char pmr_impl_thread_heap_mark;
#endif

void pmr_impl_thread_heaps_init(pmr_impl_thread_heaps *hs, pmr_mem_resource *up,
                                const pmr_pool_options *opts) {
  pmr_impl_source_init(&hs->src, up, opts->max_blocks_per_chunk,
                       opts->max_free_bytes, true);
  atomic_init(&hs->lock, 0);
  hs->all = NULL;
  atomic_init(&hs->abandoned, NULL);
  hs->owned = 0;
  hs->largest = opts->largest_required_pool_block;
  hs->gone_taken = hs->gone_returned = 0;
#ifdef PMR_SECURE
  hs->delay_reuse = false;
#endif
}

void pmr_impl_thread_heap_format_none(void *mem) {
  pmr_impl_thread_heap *t = (pmr_impl_thread_heap *)mem;
  pmr_impl_page_heap *h = &t->heap;
  /* Every class's current page (no_page) has no free block. */
  memset(&h->empty, 0, sizeof h->empty);
  for (unsigned i = 0; i < PMR_IMPL_HEAP_CLASSES; ++i)
    memset(&h->classes[i], 0, sizeof h->classes[i]);
  pmr_impl_heap_reset(h);
}

pmr_impl_thread_heap *pmr_impl_thread_heap_acquire(pmr_impl_thread_heaps *hs) {
  pmr_impl_spin_lock(&hs->lock);
  pmr_impl_thread_heap *t =
      atomic_load_explicit(&hs->abandoned, memory_order_relaxed);
  if (t != NULL) {
    atomic_store_explicit(&hs->abandoned, t->next_abandoned,
                          memory_order_relaxed);
    atomic_store_explicit(&t->owner, pmr_impl_thread_heap_owner_id(),
                          memory_order_relaxed);
    hs->owned++;
  }
  pmr_impl_spin_unlock(&hs->lock);
  if (t != NULL) return t;
  /* Lines of its own (meta_mem.h): another thread's heap next to it would
   * share the lines at their ends (the owners write them). */
  t = (pmr_impl_thread_heap *)pmr_impl_meta_alloc(sizeof *t);
  if (t == NULL) return NULL;
  t->hs = hs;
  atomic_init(&t->owner, pmr_impl_thread_heap_owner_id());
  pmr_impl_heap_init(&t->heap, &hs->src, hs->largest, false);
#ifdef PMR_SECURE
  if (hs->delay_reuse) {
    memset(&t->delay, 0, sizeof t->delay);
    t->heap.delay = &t->delay;
  }
#endif
  pmr_impl_spin_lock(&hs->lock);
  t->next_all = hs->all;
  hs->all = t;
  hs->owned++;
  pmr_impl_spin_unlock(&hs->lock);
  return t;
}

void pmr_impl_thread_heap_abandon(pmr_impl_thread_heap *t) {
  pmr_impl_thread_heaps *hs = t->hs;
#ifdef PMR_SECURE
  pmr_impl_heap_delay_flush(&t->heap);
#endif
  pmr_impl_heap_trim(&t->heap); /* still its owner's */
  /* Before the thread's id can be another's (its thread exits). */
  atomic_store_explicit(&t->owner, 0, memory_order_relaxed);
  pmr_impl_spin_lock(&hs->lock);
  t->next_abandoned =
      atomic_load_explicit(&hs->abandoned, memory_order_relaxed);
  atomic_store_explicit(&hs->abandoned, t, memory_order_relaxed);
  hs->owned--;
  pmr_impl_spin_unlock(&hs->lock);
}

void pmr_impl_thread_heap_lose(pmr_impl_thread_heap *t) {
  pmr_impl_thread_heaps *hs = t->hs;
  /* A thread made in the child may get the vanished thread's id. */
  atomic_store_explicit(&t->owner, 0, memory_order_relaxed);
  hs->owned--; /* fork's child: one thread, no lock needed */
}

void pmr_impl_thread_heaps_clear(pmr_impl_thread_heaps *hs) {
  for (pmr_impl_thread_heap *t = hs->all, *next; t != NULL; t = next) {
    next = t->next_all;
    hs->gone_taken +=
        atomic_load_explicit(&t->heap.pages_taken, memory_order_relaxed);
    hs->gone_returned +=
        atomic_load_explicit(&t->heap.pages_returned, memory_order_relaxed);
    pmr_impl_meta_free(t);
  }
  hs->all = NULL;
  atomic_store_explicit(&hs->abandoned, NULL, memory_order_relaxed);
  hs->owned = 0;
}

/* What other threads freed into the abandoned heaps' pages, and their
 * empty current pages, back to the source; true when a page went. The
 * instance's lock keeps every other thread from them (adoption takes it). */
static bool collect_abandoned(pmr_impl_thread_heaps *hs) {
  if (atomic_load_explicit(&hs->abandoned, memory_order_relaxed) == NULL)
    return false;
  bool any = false;
  pmr_impl_spin_lock(&hs->lock);
  for (pmr_impl_thread_heap *t =
           atomic_load_explicit(&hs->abandoned, memory_order_relaxed);
       t != NULL; t = t->next_abandoned)
    any |= pmr_impl_heap_trim(&t->heap) != 0;
  pmr_impl_spin_unlock(&hs->lock);
  return any;
}

void *pmr_impl_thread_heap_alloc(pmr_impl_thread_heap *t,
                                 pmr_impl_page_class *k) {
  pmr_impl_thread_heaps *hs = t->hs;
  void *b;
  for (bool first = true;; first = false) {
    b = pmr_impl_heap_alloc_held(&t->heap, k);
    /* Before new memory, the pages that the thread's other classes keep
     * current with no block in use. */
    if (b == NULL && first && pmr_impl_heap_trim(&t->heap) != 0)
      b = pmr_impl_heap_alloc_held(&t->heap, k);
    if (b != NULL) break;
    if (first && collect_abandoned(hs)) continue;
    if (!pmr_impl_source_grow(&hs->src)) { /* no lock held */
#ifdef PMR_SECURE
      /* Out of memory: the blocks waiting in the delay first. */
      if (pmr_impl_heap_delay_flush(&t->heap)) continue;
#endif
      return NULL;
    }
  }
  return b;
}

void pmr_impl_thread_heaps_trim_heaps(pmr_impl_thread_heaps *hs,
                                      pmr_impl_thread_heap *t) {
  if (t != NULL) {
#ifdef PMR_SECURE
    pmr_impl_heap_delay_flush(&t->heap);
#endif
    pmr_impl_heap_trim(&t->heap);
  }
  collect_abandoned(hs);
}

void pmr_impl_thread_heaps_page_counts(pmr_impl_thread_heaps *hs, size_t *held,
                                       size_t *taken, size_t *returned) {
  size_t tk = hs->gone_taken, rt = hs->gone_returned, h = 0;
  pmr_impl_spin_lock(&hs->lock);
  for (pmr_impl_thread_heap *t = hs->all; t != NULL; t = t->next_all) {
    /* Read in this order, a page counted returned is counted taken. */
    size_t r =
        atomic_load_explicit(&t->heap.pages_returned, memory_order_relaxed);
    size_t k = atomic_load_explicit(&t->heap.pages_taken, memory_order_relaxed);
    if (k < r) k = r;
    tk += k;
    rt += r;
    h += k - r;
  }
  pmr_impl_spin_unlock(&hs->lock);
  *held = h;
  *taken = tk;
  *returned = rt;
}

/* ---- fork ---------------------------------------------------------------
 * The instance's lock and the source's: no heap is adopted, collected or
 * made meanwhile, and the shared pages are consistent. A heap whose owner
 * was changing it at fork() is never touched again (pmr_impl_thread_heap_lose).
 */

bool pmr_impl_thread_heaps_fork_take(pmr_impl_thread_heaps *hs) {
  if (!pmr_impl_fork_spin_take(&hs->lock)) return false;
  if (pmr_impl_fork_spin_take(&hs->src.lock)) return true;
  pmr_impl_spin_unlock(&hs->lock);
  return false;
}

void pmr_impl_thread_heaps_fork_release(pmr_impl_thread_heaps *hs) {
  pmr_impl_spin_unlock(&hs->src.lock);
  pmr_impl_spin_unlock(&hs->lock);
}

void pmr_impl_thread_heaps_fork_child(pmr_impl_thread_heaps *hs) {
  pmr_impl_thread_heaps_fork_release(hs);
}
