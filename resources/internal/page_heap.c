/* The page core's heaps: size classes and the pages that serve them (see
 * page_heap.h). */
#include "resources/internal/page_heap.h"

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "resources/internal/platform.h"

pmr_pool_options pmr_impl_heap_options(const pmr_pool_options *opts) {
  pmr_pool_options o = pmr_impl_pool_effective_options(opts);
  if (o.largest_required_pool_block > PMR_IMPL_HEAP_LARGEST)
    o.largest_required_pool_block = PMR_IMPL_HEAP_LARGEST;
  return o;
}

/* ---- heap: classes and their pages -------------------------------------- */

static uint32_t start_check_of(size_t block) {
  return (uint32_t)(((uint64_t)1 << 32) / block +
                    ((((uint64_t)1 << 32) % block) != 0));
}

#ifdef PMR_SECURE
/* A random number for the carve's order: splitmix64 of a shared counter. */
static uint64_t secure_random(void) {
  static _Atomic uint64_t counter;
  uint64_t z = atomic_fetch_add_explicit(&counter, 0x9e3779b97f4a7c15u,
                                         memory_order_relaxed) +
               (uint64_t)pmr_impl_free_mark_value;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}
#endif

void pmr_impl_heap_reset(pmr_impl_page_heap *h) {
  memset(&h->no_page, 0, sizeof h->no_page);
  h->no_page.state = PMR_IMPL_PAGE_FULL;
  atomic_init(&h->no_page.remote, NULL);
  for (unsigned i = 0; i < PMR_IMPL_HEAP_CLASSES; ++i) {
    h->classes[i].free = NULL;
    h->classes[i].current = &h->no_page;
    h->classes[i].partial = NULL;
  }
  h->empty.free = NULL;
  h->empty.current = &h->no_page;
  h->empty.partial = NULL;
  atomic_init(&h->delayed, NULL);
#ifdef PMR_SECURE
  if (h->delay != NULL) memset(h->delay, 0, sizeof *h->delay);
#endif
}

void pmr_impl_heap_init(pmr_impl_page_heap *h, pmr_impl_page_source *src,
                        size_t largest, bool give_back) {
  pmr_impl_free_mark_init();
  h->src = src;
  h->largest =
      largest < PMR_IMPL_HEAP_LARGEST ? largest : PMR_IMPL_HEAP_LARGEST;
  h->give_back = give_back;
  atomic_init(&h->pages_taken, 0);
  atomic_init(&h->pages_returned, 0);
  for (unsigned i = 0; i < PMR_IMPL_HEAP_CLASSES; ++i) {
    uint32_t block = (uint32_t)pmr_impl_pool_class_size(i);
    h->classes[i].block = block;
    h->classes[i].index = (uint8_t)i;
    h->classes[i].carve_bytes =
        (uint16_t)(block >= PMR_IMPL_CARVE_BYTES
                       ? block
                       : PMR_IMPL_CARVE_BYTES / block * block);
  }
  memset(&h->empty, 0, sizeof h->empty);
  memset(h->full_sums, 0, sizeof h->full_sums);
#ifdef PMR_SECURE
  h->delay = NULL; /* the owner sets it: thread_heap.h */
#endif
  pmr_impl_heap_reset(h);
}

_Static_assert((offsetof(pmr_impl_page_heap, classes) +
                PMR_IMPL_HEAP_SMALL_CLASSES * sizeof(pmr_impl_page_class)) /
                       8 <=
                   UINT8_MAX,
               "a small map entry holds a class's offset / 8");
_Static_assert(PMR_IMPL_HEAP_CLASSES <= UINT8_MAX + 1 &&
                   PMR_IMPL_PAGE_SIZE / 8 <= UINT16_MAX,
               "class indexes fit the page's cls and the class's index; a "
               "page's blocks fit its carved count");
_Static_assert(PMR_IMPL_HEAP_LARGEST <= UINT16_MAX &&
                   PMR_IMPL_CARVE_BYTES <= UINT16_MAX,
               "a class's carve_bytes fits 16 bits");
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

/* Blocks of pg out of its hands (see pmr_impl_page's count). */
static uint32_t page_used(const pmr_impl_page *pg) {
  if (pg->state == PMR_IMPL_PAGE_CURRENT)
    return pg->count - PMR_IMPL_PAGE_CURRENT_BIAS;
  return pg->state == PMR_IMPL_PAGE_FULL ? pg->capacity : pg->count;
}

/* pg, with `used` blocks out of its hands, becomes its class's current
 * page, whose frees need no slow path. */
static void make_current(pmr_impl_page *pg, uint32_t used) {
  pg->state = PMR_IMPL_PAGE_CURRENT;
  pg->count = used + PMR_IMPL_PAGE_CURRENT_BIAS;
  pg->free_sum = 0; /* kept only for pages not current */
}

/* pg, full until now, with `used` (> 0) blocks out of its hands, joins the
 * end of k's partial ring. */
static void partial_push(pmr_impl_page_class *k, pmr_impl_page *pg,
                         uint32_t used) {
  pmr_impl_page *first = k->partial;
  pg->state = PMR_IMPL_PAGE_PARTIAL;
  pg->count = used;
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
  pg->start_check = 0;
  pg->heap = NULL;
  pmr_impl_count_up(&h->pages_returned);
  pmr_impl_source_give_page(h->src, pg, h->give_back);
}

/* pg, not current, looks empty by its count: whether it is (its list holds
 * every block, each once). When it is not (a double free brought the count
 * down early), the list is checked, what it found reported, and pg keeps
 * the blocks out of its list as used: then false. */
static bool empty_checked(pmr_impl_page_heap *h, pmr_impl_page *pg) {
  if (pg->free_sum == pmr_impl_page_full_sum(h, pg)) return true;
  uint32_t used = pg->capacity - pmr_impl_page_list_check(pg);
  if (used == 0) return true;
  if (pg->state == PMR_IMPL_PAGE_FULL) {
    partial_push(&h->classes[pg->cls], pg, used);
  } else {
    pg->count = used;
  }
  return false;
}

/* The count reached 0: the page was full (used is now capacity - 1) or
 * partial with its last block back. */
void pmr_impl_heap_free_slow(pmr_impl_page *pg) {
  pmr_impl_page_heap *h = pg->heap;
  if (pg->state == PMR_IMPL_PAGE_FULL && pg->capacity > 1)
    partial_push(&h->classes[pg->cls], pg, pg->capacity - 1);
  else if (empty_checked(h, pg))
    retire(h, pg);
}

void pmr_impl_heap_free_remote(pmr_impl_page *pg, void *p) {
  if (PMR_UNLIKELY(pmr_impl_block_suspect(pg, p)) &&
      pmr_impl_page_misuse(pg, p, false))
    return;
#ifdef PMR_SECURE
  pmr_impl_fill(p, pg->block);
#endif
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

/* Puts `list` (non-empty, blocks of pg, freed by other threads) in front
 * of pg's free list; returns how many blocks it held. A link that leads out
 * of the page, or a block never handed out (another thread cannot tell
 * one), is reported, and the list is cut there: the rest is never followed,
 * and never counted free. */
static uint32_t give_list(pmr_impl_page *pg, void *list) {
  uint32_t n = 0;
  uint64_t sum = 0;
  void *tail = NULL;
  for (void *b = list; b != NULL;) {
    if (pmr_impl_block_uncarved(pg, b)) {
      pmr_impl_heap_broken("another thread freed a block never handed out",
                           pg->block, b);
      break;
    }
    if (n == pg->carved) { /* more blocks than laid out: a loop */
      n = pmr_impl_page_list_cut_loop(pg, list, &tail);
      break;
    }
    ++n;
    sum += pmr_impl_free_hash(b);
    tail = b;
    void *next = pmr_impl_link_peek(b);
    if (next != NULL &&
        (((uintptr_t)next ^ (uintptr_t)b) >> PMR_IMPL_PAGE_SHIFT) != 0) {
      pmr_impl_heap_broken(
          "a free list's link leads out of its page: a write after free "
          "or an overflow",
          pg->block, b);
      break;
    }
    b = next;
  }
  if (tail == NULL) return 0;
  pmr_impl_link_set(tail, pg->free);
  pg->free = list;
  pg->free_sum += sum;
  return n;
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
    uint32_t n = give_list(pg, list);
    uint32_t used = page_used(pg);
    used = n >= used ? 0 : used - n; /* more: a double free, checked below */
    if (pg->state == PMR_IMPL_PAGE_CURRENT) {
      pg->count -= n; /* stays, empty or not */
    } else if (used == 0) {
      if (empty_checked(h, pg)) {
        retire(h, pg);
        ++retired;
      }
    } else if (pg->state == PMR_IMPL_PAGE_FULL) {
      partial_push(&h->classes[pg->cls], pg, used);
    } else {
      pg->count = used;
    }
    pg = next;
  }
  return retired;
}

/* Every block lies at a multiple of its size from the page's start, past
 * the table too (which aligns it as its class needs), so that a free tells
 * a block's start by its offset alone (pmr_impl_block_starts). */
void pmr_impl_page_layout(const pmr_impl_page_source *src,
                          const pmr_impl_page *pg, size_t block,
                          size_t max_blocks, char **start, size_t *n_before,
                          char **after, size_t *n_after) {
  char *base, *table, *past;
  pmr_impl_page_span(src, pg, &base, &table, &past);
#ifdef PMR_SECURE
  /* Secure builds: a gap on either side of the table (page_heap.h,
   * pmr_impl_page_gaps_intact). */
  if (table != past) {
    table =
        table - base >= PMR_IMPL_TABLE_GAP ? table - PMR_IMPL_TABLE_GAP : base;
    past += PMR_IMPL_TABLE_GAP;
  }
#endif
  uintptr_t a =
      (uintptr_t)base + ((size_t)(past - base) + block - 1) / block * block;
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

static void page_start(pmr_impl_page_heap *h, pmr_impl_page_class *k,
                       pmr_impl_page *pg) {
  pg->heap = h;
  pmr_impl_count_up(&h->pages_taken);
  pg->block = k->block;
  pg->start_check = start_check_of(k->block);
  pg->cls = k->index;
  make_current(pg, 0);
  /* Carved again even for the class it last served: its old free list is
   * in the order the blocks were freed, and handing a page out in address
   * order keeps the next allocations sequential (prefetch, TLB). */
  size_t before, past;
  char *start, *after;
  pmr_impl_page_layout(h->src, pg, k->block, h->src->max_blocks, &start,
                       &before, &after, &past);
  pg->capacity = (uint32_t)(before + past);
  pg->carved = 0;
  pg->free = NULL;
#ifdef PMR_SECURE
  pmr_impl_page_gaps_fill(pg);
#endif
  if (before != 0) {
    pg->carve = start;
    pg->end = start + before * k->block;
  } else {
    pg->carve = after;
    pg->end = after + past * k->block;
  }
}

/* Up to k->carve_bytes of new blocks (at least one) of k's current page pg
 * as k's list (empty until now), in address order; moves past the frame's
 * table when the region below it is used up. No prefetch of the next
 * carve's lines: the hardware follows these ascending stores by itself, and
 * asking for a whole carve ahead measured slower (resources/README.md,
 * "Measured choices"). */
static void carve(pmr_impl_page *pg, pmr_impl_page_class *k) {
  size_t block = pg->block;
  char *b = pg->carve;
  size_t avail = (size_t)(pg->end - b);
  char *lim = b + (avail < k->carve_bytes ? avail : k->carve_bytes);
  /* Eight links a turn, to a bound computed once: the loop costs little
   * more than its stores. */
  char *last = lim - block, *q = b, *first = b;
#define CARVE_ONE(at, next) pmr_impl_link_set(at, next)
  if ((size_t)(last - q) >= 8 * block) {
    char *stop = last - 8 * block;
    do { /* each link is the address of the next store */
      char *n1 = q + block, *n2 = n1 + block, *n3 = n2 + block;
      char *n4 = n3 + block, *n5 = n4 + block, *n6 = n5 + block;
      char *n7 = n6 + block, *n8 = n7 + block;
      CARVE_ONE(q, n1);
      CARVE_ONE(n1, n2);
      CARVE_ONE(n2, n3);
      CARVE_ONE(n3, n4);
      CARVE_ONE(n4, n5);
      CARVE_ONE(n5, n6);
      CARVE_ONE(n6, n7);
      CARVE_ONE(n7, n8);
      q = n8;
    } while (q <= stop);
  }
  for (; q != last; q += block) CARVE_ONE(q, q + block);
  CARVE_ONE(last, NULL);
#undef CARVE_ONE
#ifdef PMR_SECURE
  /* Secure builds: the blocks in a random order (a program cannot tell
   * which block comes next from the last one's address), each filled. */
  {
    size_t n = (size_t)(lim - b) / block;
    uint16_t order[PMR_IMPL_CARVE_BYTES / 8];
    for (size_t i = 0; i < n; ++i) order[i] = (uint16_t)i;
    uint64_t r = secure_random();
    for (size_t i = n; i > 1; --i) {
      if ((i & 15) == 0) r = secure_random();
      size_t j = (size_t)(r % i);
      r /= i;
      uint16_t t = order[i - 1];
      order[i - 1] = order[j];
      order[j] = t;
    }
    for (size_t i = 0; i < n; ++i) {
      char *c = b + (size_t)order[i] * block;
      PMR_IMPL_UNDEFINED(c, block);
      pmr_impl_fill(c, block);
      PMR_IMPL_NOACCESS(c, block);
      pmr_impl_link_set(c, i + 1 < n ? b + (size_t)order[i + 1] * block : NULL);
    }
    first = b + (size_t)order[0] * block;
  }
#endif
  k->free = first;
  uint32_t n = (uint32_t)((size_t)(lim - b) / block);
  pg->carved = (uint16_t)(pg->carved + n);
  pg->count += n; /* out of the page's hands: in k's list */
  pg->carve = lim;
  /* The region below the frame's table is used up (pg, the table's first
   * descriptor, when pg's page holds the table; any other page lies wholly
   * above pg): on to the region past the table. */
  if (lim == pg->end && pg->end <= (char *)pg) {
    const pmr_impl_page_source *src = pg->heap->src;
    size_t before, past;
    char *start, *after;
    pmr_impl_page_layout(src, pg, block, src->max_blocks, &start, &before,
                         &after, &past);
    pg->carve = after;
    pg->end = after + past * block;
  }
}

void *pmr_impl_heap_alloc_local(pmr_impl_page_heap *h, pmr_impl_page_class *k) {
  if (atomic_load_explicit(&h->delayed, memory_order_relaxed) != NULL)
    collect(h);
  for (;;) {
    void *b = pmr_impl_heap_pop_checked(k);
    if (b != NULL) return b;
    pmr_impl_page *pg = k->current;
    if (pg != &h->no_page) {
      if (pg->free != NULL) { /* what was freed into it meanwhile */
        k->free = pg->free;
        pg->free = NULL;
        pg->count = pg->carved + PMR_IMPL_PAGE_CURRENT_BIAS; /* all out */
        continue;
      }
      if (pg->carve < pg->end) {
        carve(pg, k);
        continue;
      }
      /* Exhausted: every block is out (used == carved == capacity); frees
       * take the slow path again. */
      pg->state = PMR_IMPL_PAGE_FULL;
      pg->count = 1;
      pg->free_sum = 0;
      k->current = &h->no_page;
    }
    pg = k->partial;
    if (pg == NULL) return NULL;
    partial_remove(k, pg);
    make_current(pg, pg->count); /* a partial page's count is its used */
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
  void *b = pmr_impl_heap_pop(k);
  return b != NULL ? b : alloc_slow(h, k, false);
}

/* k's list back onto its current page pg (a trim, a thread's exit): the
 * page then tells whether any of its blocks is in use. */
static void list_back(pmr_impl_page_class *k, pmr_impl_page *pg) {
  if (k->free == NULL) return;
  pg->count -= give_list(pg, k->free);
  k->free = NULL;
}

size_t pmr_impl_heap_trim(pmr_impl_page_heap *h) {
  size_t retired = collect(h);
  for (unsigned i = 0; i < PMR_IMPL_HEAP_CLASSES; ++i) {
    pmr_impl_page_class *k = &h->classes[i];
    pmr_impl_page *pg = k->current;
    if (pg == &h->no_page) continue;
    list_back(k, pg);
    if (page_used(pg) == 0) {
      /* Its list checked whole before it goes: a double free may have
       * brought its count down early. */
      uint32_t n = pmr_impl_page_list_check(pg);
      if (n != pg->carved) {
        make_current(pg, pg->carved - n);
        continue;
      }
      k->current = &h->no_page;
      pg->state = PMR_IMPL_PAGE_FULL; /* in no list */
      retire(h, pg);
      ++retired;
    }
  }
  return retired;
}
