/* The page core's heaps: size classes and the pages that serve them (see
 * page_heap.h). */
#include "resources/internal/page_heap.h"

#include <stddef.h>
#include <string.h>

pmr_pool_options pmr_impl_heap_options(const pmr_pool_options *opts) {
  pmr_pool_options o = pmr_impl_pool_effective_options(opts);
  if (o.largest_required_pool_block > PMR_IMPL_HEAP_LARGEST)
    o.largest_required_pool_block = PMR_IMPL_HEAP_LARGEST;
  return o;
}

/* ---- heap: classes and their pages -------------------------------------- */

static size_t block_alignment(size_t block) {
  size_t a = block & (~block + 1);
  if (a < PMR_MAX_ALIGN) a = PMR_MAX_ALIGN;
  return a > PMR_IMPL_POOL_MAX_BLOCK_ALIGN ? PMR_IMPL_POOL_MAX_BLOCK_ALIGN : a;
}

void pmr_impl_heap_reset(pmr_impl_page_heap *h) {
  memset(&h->no_page, 0, sizeof h->no_page);
  h->no_page.state = PMR_IMPL_PAGE_FULL;
  atomic_init(&h->no_page.remote, NULL);
  for (unsigned i = 0; i < PMR_IMPL_HEAP_CLASSES; ++i) {
    h->classes[i].current = &h->no_page;
    h->classes[i].partial = NULL;
  }
  h->empty.current = &h->no_page;
  h->empty.partial = NULL;
  atomic_init(&h->delayed, NULL);
}

void pmr_impl_heap_init(pmr_impl_page_heap *h, pmr_impl_page_source *src,
                        size_t largest, bool give_back) {
  h->src = src;
  h->largest =
      largest < PMR_IMPL_HEAP_LARGEST ? largest : PMR_IMPL_HEAP_LARGEST;
  h->give_back = give_back;
  atomic_init(&h->pages_taken, 0);
  atomic_init(&h->pages_returned, 0);
  for (unsigned i = 0; i < PMR_IMPL_HEAP_CLASSES; ++i) {
    uint32_t block = (uint32_t)pmr_impl_pool_class_size(i);
    h->classes[i].block = block;
    h->classes[i].index = i;
    h->classes[i].carve_bytes = block >= PMR_IMPL_CARVE_BYTES
                                    ? block
                                    : PMR_IMPL_CARVE_BYTES / block * block;
  }
  memset(&h->empty, 0, sizeof h->empty);
  pmr_impl_heap_reset(h);
}

_Static_assert((offsetof(pmr_impl_page_heap, classes) +
                PMR_IMPL_HEAP_SMALL_CLASSES * sizeof(pmr_impl_page_class)) /
                       8 <=
                   UINT8_MAX,
               "a small map entry holds a class's offset / 8");
_Static_assert(offsetof(pmr_impl_page_heap, classes) % 8 == 0 &&
                   sizeof(pmr_impl_page_class) % 8 == 0,
               "classes lie at multiples of 8");

void pmr_impl_heap_small_map(uint8_t map[PMR_IMPL_POOL_TABLE_LIMIT],
                             size_t limit) {
  for (size_t key = 0; key < limit; ++key) {
    size_t off = offsetof(pmr_impl_page_heap, classes) +
                 pmr_impl_pool_class_of(key + 1) * sizeof(pmr_impl_page_class);
    map[key] = (uint8_t)(off / 8);
  }
}

/* pg, full until now, joins the end of k's partial ring. */
static void partial_push(pmr_impl_page_class *k, pmr_impl_page *pg) {
  pmr_impl_page *first = k->partial;
  pg->state = PMR_IMPL_PAGE_PARTIAL;
  if (first == NULL) {
    pg->prev = pg->next = pg;
    k->partial = pg;
    return;
  }
  pg->prev = first->prev;
  pg->next = first;
  first->prev->next = pg;
  first->prev = pg;
}

static void partial_remove(pmr_impl_page_class *k, pmr_impl_page *pg) {
  if (pg->next == pg) {
    k->partial = NULL;
    return;
  }
  pg->prev->next = pg->next;
  pg->next->prev = pg->prev;
  if (k->partial == pg) k->partial = pg->next;
}

/* pg has no block in use and is not current: back to the source. */
static void retire(pmr_impl_page_heap *h, pmr_impl_page *pg) {
  if (pg->state == PMR_IMPL_PAGE_PARTIAL)
    partial_remove(&h->classes[pg->cls], pg);
  pmr_impl_page_noaccess(h->src, pg);
  pg->block = 0;
  pg->heap = NULL;
  pmr_impl_count_up(&h->pages_returned);
  pmr_impl_source_give_page(h->src, pg, h->give_back);
}

/* The page was full, became empty, or (capacity <= 2) anything. */
void pmr_impl_heap_free_slow(pmr_impl_page *pg) {
  pmr_impl_page_heap *h = pg->heap;
  if (pmr_impl_page_used(pg) == 0 && pg->state != PMR_IMPL_PAGE_CURRENT) {
    retire(h, pg);
  } else if (pg->state == PMR_IMPL_PAGE_FULL) {
    partial_push(&h->classes[pg->cls], pg);
  }
}

void pmr_impl_heap_free_remote(pmr_impl_page *pg, void *p) {
  PMR_IMPL_NOACCESS(p, pg->block);
  void *head = atomic_load_explicit(&pg->remote, memory_order_relaxed);
  do {
    pmr_impl_link_set(p, head);
  } while (!atomic_compare_exchange_weak_explicit(
      &pg->remote, &head, p, memory_order_acq_rel, memory_order_relaxed));
  /* acq_rel: when the list was empty, the owner's last collect (which read
   * delayed_next before emptying it) happens before the write below. */
  if (head != NULL) return; /* the page is queued already */
  pmr_impl_page_heap *h = pg->heap;
  pmr_impl_page *top = atomic_load_explicit(&h->delayed, memory_order_relaxed);
  do {
    pg->delayed_next = top;
  } while (!atomic_compare_exchange_weak_explicit(
      &h->delayed, &top, pg, memory_order_release, memory_order_relaxed));
}

/* Takes the remote frees of every queued page into its free list; returns
 * the pages that became free. */
static size_t collect(pmr_impl_page_heap *h) {
  size_t retired = 0;
  pmr_impl_page *pg =
      atomic_exchange_explicit(&h->delayed, NULL, memory_order_acquire);
  while (pg != NULL) {
    pmr_impl_page *next = pg->delayed_next;
    void *list =
        atomic_exchange_explicit(&pg->remote, NULL, memory_order_acq_rel);
    uint32_t n = 1;
    void *tail = list;
    for (void *b; (b = pmr_impl_link_get(tail)) != NULL; tail = b) ++n;
    pmr_impl_link_set(tail, pg->free);
    void *had = pg->free;
    pg->free = list;
    pg->used_minus_1 -= n;
    if (pmr_impl_page_used(pg) == 0 && pg->state != PMR_IMPL_PAGE_CURRENT) {
      retire(h, pg);
      ++retired;
    } else if (had == NULL && pg->state == PMR_IMPL_PAGE_FULL) {
      partial_push(&h->classes[pg->cls], pg);
    }
    pg = next;
  }
  return retired;
}

/* Where blocks of size `block` lie in pg's page: n_before from the page
 * start (below its frame's table, if it holds it), then n_after from *after
 * on; at most max_blocks in all (at least one). */
static void page_layout(const pmr_impl_page_source *src,
                        const pmr_impl_page *pg, size_t block,
                        size_t max_blocks, char **start, size_t *n_before,
                        char **after, size_t *n_after) {
  char *base, *table, *past;
  pmr_impl_page_span(src, pg, &base, &table, &past);
  size_t align = block_alignment(block);
  uintptr_t a = ((uintptr_t)past + align - 1) & ~(uintptr_t)(align - 1);
  char *end = base + PMR_IMPL_PAGE_SIZE;
  size_t before = (size_t)(table - base) / block;
  size_t n_past = a < (uintptr_t)end ? (size_t)(end - (char *)a) / block : 0;
  if (max_blocks == 0) max_blocks = 1;
  if (before > max_blocks) before = max_blocks;
  if (n_past > max_blocks - before) n_past = max_blocks - before;
  *start = base;
  *n_before = before;
  *after = (char *)a;
  *n_after = n_past;
}

/* pg becomes its class's current page, whose frees need no slow path. */
static void make_current(pmr_impl_page *pg) {
  pg->state = PMR_IMPL_PAGE_CURRENT;
  pg->limit = PMR_IMPL_PAGE_NO_LIMIT;
}

static void page_start(pmr_impl_page_heap *h, pmr_impl_page_class *k,
                       pmr_impl_page *pg) {
  pg->heap = h;
  pmr_impl_count_up(&h->pages_taken);
  pg->block = k->block;
  pg->cls = (uint8_t)k->index;
  pg->used_minus_1 = UINT32_MAX; /* none */
  make_current(pg);
  /* Carved again even for the class it last served: its old free list is
   * in the order the blocks were freed, and handing a page out in address
   * order keeps the next allocations sequential (prefetch, TLB). */
  size_t before, past;
  char *start, *after;
  page_layout(h->src, pg, k->block, h->src->max_blocks, &start, &before, &after,
              &past);
  pg->edges = (uint32_t)(before + past) - 2; /* wraps below 2: always slow */
  pg->free = NULL;
  if (before != 0) {
    pg->carve = start;
    pg->end = start + before * k->block;
  } else {
    pg->carve = after;
    pg->end = after + past * k->block;
  }
}

/* Up to k->carve_bytes of new blocks (at least one) onto pg's free list,
 * in address order; moves past the frame's table when the region below it
 * is used up. The lines the next carve will write are asked for now: a
 * carve writes one link per block into memory long out of cache, and
 * with every such store waiting for its line the core stalls, where the
 * same lines fetched ahead arrive while the caller uses this region's
 * blocks. Prefetching never faults, so untouched memory stays untouched. */
static void carve(pmr_impl_page *pg, const pmr_impl_page_class *k) {
  size_t block = pg->block;
  char *b = pg->carve;
  size_t avail = (size_t)(pg->end - b);
  char *lim = b + (avail < k->carve_bytes ? avail : k->carve_bytes);
  char *next =
      lim + (pg->end - lim < (ptrdiff_t)k->carve_bytes ? (size_t)(pg->end - lim)
                                                       : k->carve_bytes);
  size_t step = block < PMR_IMPL_CACHE_LINE ? PMR_IMPL_CACHE_LINE : block;
  char *x = lim;
  for (; (size_t)(next - x) >= 4 * step; x += 4 * step) {
    PMR_IMPL_PREFETCH_WRITE(x);
    PMR_IMPL_PREFETCH_WRITE(x + step);
    PMR_IMPL_PREFETCH_WRITE(x + 2 * step);
    PMR_IMPL_PREFETCH_WRITE(x + 3 * step);
  }
  for (; x < next; x += step) PMR_IMPL_PREFETCH_WRITE(x);
  char *last = lim - block, *q = b;
  /* Four links a turn: the loop costs little more than its stores. */
  for (size_t four = 4 * block; (size_t)(last - q) >= four; q += four) {
    pmr_impl_link_set(q, q + block);
    pmr_impl_link_set(q + block, q + 2 * block);
    pmr_impl_link_set(q + 2 * block, q + 3 * block);
    pmr_impl_link_set(q + 3 * block, q + four);
  }
  for (; q != last; q += block) pmr_impl_link_set(q, q + block);
  pmr_impl_link_set(last, NULL);
  pg->free = b;
  pg->carve = lim;
  /* The region below the frame's table is used up (pg, the table's first
   * descriptor, when pg's page holds the table; any other page lies wholly
   * above pg): on to the region past the table. */
  if (lim == pg->end && pg->end <= (char *)pg) {
    const pmr_impl_page_source *src = pg->heap->src;
    size_t before, past;
    char *start, *after;
    page_layout(src, pg, block, src->max_blocks, &start, &before, &after,
                &past);
    pg->carve = after;
    pg->end = after + past * block;
  }
}

void *pmr_impl_heap_alloc_local(pmr_impl_page_heap *h, pmr_impl_page_class *k) {
  if (atomic_load_explicit(&h->delayed, memory_order_relaxed) != NULL)
    collect(h);
  for (;;) {
    pmr_impl_page *pg = k->current;
    if (pg != &h->no_page) {
      if (pg->free == NULL && pg->carve < pg->end) carve(pg, k);
      if (pg->free != NULL) return pmr_impl_heap_pop(k);
      pg->state = PMR_IMPL_PAGE_FULL; /* exhausted */
      pg->limit = pg->edges;          /* frees take the slow path again */
      k->current = &h->no_page;
    }
    pg = k->partial;
    if (pg == NULL) return NULL;
    partial_remove(k, pg);
    make_current(pg);
    k->current = pg;
  }
}

static void *alloc_slow(pmr_impl_page_heap *h, pmr_impl_page_class *k,
                        bool grow) {
  if (k == &h->empty) return NULL;
  for (;;) {
    void *b = pmr_impl_heap_alloc_local(h, k);
    if (b != NULL) return b;
    /* Before new memory, the pages other classes keep current with no
     * block in use go back to the free set (a current page stays when it
     * empties, so a class freeing and allocating at a page boundary does
     * not bounce one). */
    pmr_impl_page *pg = pmr_impl_source_take_page(h->src, false);
    if (pg == NULL && grow) {
      pmr_impl_heap_trim(h);
      pg = pmr_impl_source_take_page(h->src,
                                     true); /* the free set first, then grow */
    }
    if (pg == NULL) return NULL;
    page_start(h, k, pg);
    k->current = pg;
  }
}

void *pmr_impl_heap_alloc_slow(pmr_impl_page_heap *h, pmr_impl_page_class *k) {
  return alloc_slow(h, k, true);
}

void *pmr_impl_heap_alloc_held(pmr_impl_page_heap *h, pmr_impl_page_class *k) {
  pmr_impl_page *pg = k->current;
  if (pg->free != NULL) return pmr_impl_heap_alloc(h, k);
  return alloc_slow(h, k, false);
}

size_t pmr_impl_heap_trim(pmr_impl_page_heap *h) {
  size_t retired = collect(h);
  for (unsigned i = 0; i < PMR_IMPL_HEAP_CLASSES; ++i) {
    pmr_impl_page_class *k = &h->classes[i];
    pmr_impl_page *pg = k->current;
    if (pg != &h->no_page && pmr_impl_page_used(pg) == 0) {
      k->current = &h->no_page;
      pg->state = PMR_IMPL_PAGE_FULL; /* in no list */
      retire(h, pg);
      ++retired;
    }
  }
  return retired;
}
