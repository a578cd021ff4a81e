/* PRIVATE: page heaps owned by threads, over one shared page source: the
 * core of the thread cache.
 *
 * Each thread that uses an instance owns one page heap (page_heap.h): per
 * size class a current page and partial pages, each page with its own free
 * list. The owner allocates from its current pages and frees into its own
 * pages with no lock and no atomic instruction. A block freed by any other
 * thread goes onto its page's atomic remote list (one compare-and-swap),
 * and the page is queued once on its heap's `delayed` list; the owner
 * collects it in its allocation slow path. A page whose blocks are all
 * free leaves its heap for the shared free pages (any class of any thread
 * takes it), except a class's current page, which stays until its heap
 * needs memory: a thread keeps at most one page with no block in use per
 * class.
 *
 * When a thread exits, its heap (with its pages that still hold blocks in
 * use) is abandoned: remote frees keep landing in it, and the next thread
 * that needs a heap adopts it whole. Before the source asks upstream for
 * a segment, the abandoned heaps' remote frees are collected, so their
 * pages that became free serve first.
 *
 * Locks: a heap has none: only its owner changes it, and an abandoned one
 * only under the instance's lock (adoption takes it too). The shared
 * source has its own. Order: the instance's lock, then the source's;
 * upstream is called with none held. fork() takes both; in the child, the
 * heaps of the threads that do not exist there are lost: one may have been
 * half changed, so it is never touched again (its pages that hold free
 * blocks stay unused until release or destroy). Heaps are freed only by
 * pmr_impl_thread_heaps_clear, so a remote free always finds its page's heap.
 */
#ifndef PMR_IMPL_THREAD_HEAP_H
#define PMR_IMPL_THREAD_HEAP_H

#include "resources/internal/page_heap.h"
#include "resources/internal/platform.h"
#include "resources/internal/spin_lock.h"

struct pmr_impl_thread_heaps;

typedef struct pmr_impl_thread_heap {
  pmr_impl_page_heap heap; /* first: a page's heap is its thread heap */
  struct pmr_impl_thread_heaps *hs;
  struct pmr_impl_thread_heap *next_all;       /* every heap of the instance */
  struct pmr_impl_thread_heap *next_abandoned; /* while abandoned */
  /* The owning thread's pmr_impl_thread_heap_owner_id, 0 while the heap has no
   * owner (abandoned, lost): a thread tells its own pages by it, with no
   * load of its own heap. Written only by the thread that takes or gives
   * up the heap; a thread reads its own id only in the heaps it owns. */
  _Atomic(uintptr_t) owner;
#ifdef PMR_SECURE
  pmr_impl_heap_delay delay; /* heap.delay's, when the heaps delay reuse */
#endif
} pmr_impl_thread_heap;

/* The calling thread's id for pmr_impl_thread_heap.owner: never 0, and no two
 * live threads share one. On x86-64 Linux (platform.h: PMR_IMPL_TLS_FS) the
 * thread pointer, one load; elsewhere the address of a thread-local. */
#if PMR_IMPL_TLS_FS
static inline uintptr_t pmr_impl_thread_heap_owner_id(void) {
  return pmr_impl_thread_ptr();
}
#else
extern PMR_IMPL_THREAD_LOCAL char pmr_impl_thread_heap_mark;
static inline uintptr_t pmr_impl_thread_heap_owner_id(void) {
  return (uintptr_t)&pmr_impl_thread_heap_mark;
}
#endif

/* Whether the calling thread owns the heap of page pg, a page that serves
 * a class and holds a block in use. */
static inline bool pmr_impl_thread_heap_mine(const pmr_impl_page *pg) {
  const pmr_impl_thread_heap *t =
      (const pmr_impl_thread_heap *)(const void *)pg->heap;
  return atomic_load_explicit(&t->owner, memory_order_relaxed) ==
         pmr_impl_thread_heap_owner_id();
}

typedef struct pmr_impl_thread_heaps {
  pmr_impl_page_source src;
  pmr_impl_spin lock; /* all, abandoned, owned */
  pmr_impl_thread_heap *all;
  _Atomic(pmr_impl_thread_heap *)
      abandoned;  /* read without the lock as a hint */
  size_t owned;   /* heaps that a thread owns */
  size_t largest; /* largest pooled size */
  /* Of heaps freed by clear: their pages_taken and pages_returned. */
  size_t gone_taken, gone_returned;
#ifdef PMR_SECURE
  /* Heaps made from now on delay the reuse of their owner's frees
   * (page_heap.h, "delayed reuse"): the drop-in sets it before its first
   * allocation. */
  bool delay_reuse;
#endif
} pmr_impl_thread_heaps;

/* opts: effective options (pmr_impl_heap_options). Never calls upstream. */
void pmr_impl_thread_heaps_init(pmr_impl_thread_heaps *hs, pmr_mem_resource *up,
                                const pmr_pool_options *opts);

/* Sets up `mem` (PMR_IMPL_SLOT_NONE_BYTES, zeroed) as the stand-in heap of
 * threads without one: every class's current page has no free block, and
 * no page belongs to it. */
void pmr_impl_thread_heap_format_none(void *mem);

/* A heap for the calling thread: an abandoned one if any, else a new one
 * (from malloc). NULL when out of memory. */
pmr_impl_thread_heap *pmr_impl_thread_heap_acquire(pmr_impl_thread_heaps *hs);

/* t's thread is exiting (it calls this): t's empty current pages go back
 * to the source, and t waits, abandoned, for the next thread. */
void pmr_impl_thread_heap_abandon(pmr_impl_thread_heap *t);

/* In fork's child: t's thread does not exist there; t is never touched
 * again (it may be half changed). */
void pmr_impl_thread_heap_lose(pmr_impl_thread_heap *t);

/* Frees every heap (no thread may use one any more); the pages stay with
 * the source, for its release. */
void pmr_impl_thread_heaps_clear(pmr_impl_thread_heaps *hs);

/* A block of class k of t (owned by the calling thread), after the fast
 * path found none: remote frees, other pages, free pages, the abandoned
 * heaps' frees, then a segment from upstream. NULL when upstream fails. */
void *pmr_impl_thread_heap_alloc(pmr_impl_thread_heap *t,
                                 pmr_impl_page_class *k);

/* The calling thread's heap: its empty current pages and what other
 * threads freed into it back to the source; then the same for every
 * abandoned heap. t may be NULL (the thread has none). */
void pmr_impl_thread_heaps_trim_heaps(pmr_impl_thread_heaps *hs,
                                      pmr_impl_thread_heap *t);

/* Pages that heaps hold now and, since init, took and gave back (a
 * snapshot of counters their owners keep). */
void pmr_impl_thread_heaps_page_counts(pmr_impl_thread_heaps *hs, size_t *held,
                                       size_t *taken, size_t *returned);

/* For fork: takes (pmr_impl_fork_spin_take) or releases the instance's
 * lock and the source's; false (none held) when one stays busy.
 * fork_child makes them free. */
bool pmr_impl_thread_heaps_fork_take(pmr_impl_thread_heaps *hs);
void pmr_impl_thread_heaps_fork_release(pmr_impl_thread_heaps *hs);
void pmr_impl_thread_heaps_fork_child(pmr_impl_thread_heaps *hs);

#endif /* PMR_IMPL_THREAD_HEAP_H */
