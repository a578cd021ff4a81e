/* The page core's misuse checks (page_heap.h, "misuse"): the key, what a
 * suspect free turns out to be, the walks of a page's free list, and the
 * reports. */
#include "resources/internal/page_heap.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "resources/internal/platform.h"

uintptr_t pmr_impl_free_mark_value;
static atomic_bool misuse_stop;

void pmr_impl_misuse_set_stop(bool stop) {
  atomic_store_explicit(&misuse_stop, stop, memory_order_relaxed);
}

bool pmr_impl_misuse_stops(void) {
  return atomic_load_explicit(&misuse_stop, memory_order_relaxed);
}

/* The key: random, odd (an encoded NULL is no aligned pointer). */
static void free_mark_make(void) {
  uintptr_t v = 0;
  if (!pmr_impl_os_random(&v, sizeof v)) {
    int local; /* no OS source: the addresses ASLR gives */
    v = ((uintptr_t)&local ^ (uintptr_t)&pmr_impl_free_mark_value) *
        (uintptr_t)0x9e3779b97f4a7c15u;
  }
  pmr_impl_free_mark_value = v | 1;
}

static pthread_once_t free_mark_once = PTHREAD_ONCE_INIT;

void pmr_impl_free_mark_init(void) {
  pthread_once(&free_mark_once, free_mark_make);
}

/* Whether p is on `list` (blocks of one page, at most limit + 1 of them;
 * the walk stops at a link out of the page). */
static bool on_list(void *list, const void *p, size_t limit) {
  for (size_t n = 0; list != NULL && n <= limit; ++n) {
    if (list == p) return true;
    void *next = pmr_impl_link_peek(list);
    if (next != NULL &&
        (((uintptr_t)next ^ (uintptr_t)list) >> PMR_IMPL_PAGE_SHIFT) != 0)
      return false;
    list = next;
  }
  return false;
}

void pmr_impl_heap_broken(const char *what, size_t block, const void *at) {
  bool stop = pmr_impl_misuse_stops();
  pmr_report_misuse("%s (a size class of %zu bytes, at %p); %s", what, block,
                    at, stop ? "stopping" : "dropped");
  if (stop) abort();
}

void *pmr_impl_heap_pop_broken(pmr_impl_page_class *k, void *b) {
  k->free = NULL;
  pmr_impl_heap_broken(
      "a free list holds a block whose link is not a free block's: a double "
      "free (the block was handed out already), or a write after free",
      k->block, b);
  return NULL;
}

#ifdef PMR_SECURE
void pmr_impl_heap_fill_broken(pmr_impl_page_class *k, void *b) {
  pmr_impl_heap_broken(
      "a free block was written after it was freed (or overflowed into)",
      k->block, b);
}

/* With no early exit: an intact block (the common case) is read whole
 * anyway. 32 bytes at a time in two vector registers where the compiler
 * has vector types (SSE2 on x86-64), then words, then bytes. */
bool pmr_impl_fill_intact(const void *b, size_t block) {
  const unsigned char *c = (const unsigned char *)b;
  const uint64_t fill = UINT64_MAX / 0xff * PMR_IMPL_FREE_FILL;
  uint64_t diff = 0;
  size_t i = sizeof(void *);
#if defined(__GNUC__) || defined(__clang__)
  typedef uint64_t pair __attribute__((vector_size(16)));
  const pair f2 = {fill, fill};
  pair d2 = {0, 0};
  for (; i + 2 * sizeof(pair) <= block; i += 2 * sizeof(pair)) {
    pair x, y;
    __builtin_memcpy(&x, c + i, sizeof x);
    __builtin_memcpy(&y, c + i + sizeof x, sizeof y);
    d2 |= (x ^ f2) | (y ^ f2);
  }
  diff = d2[0] | d2[1];
#endif
  for (; i + sizeof(uint64_t) <= block; i += sizeof(uint64_t)) {
    uint64_t w;
    __builtin_memcpy(&w, c + i, sizeof w);
    diff |= w ^ fill;
  }
  for (; i < block; ++i) diff |= (uint64_t)(c[i] ^ PMR_IMPL_FREE_FILL);
  return diff == 0;
}

/* The gaps around the table in pg's page, for its class's layout:
 * [*g1, *g1 + *n1) below it, [*g2, *g2 + *n2) above it (up to the first
 * block past it, or the page's end); false when the page holds no table. */
static bool table_gaps(const pmr_impl_page *pg, unsigned char **g1, size_t *n1,
                       unsigned char **g2, size_t *n2) {
  const pmr_impl_page_source *src = pg->heap->src;
  char *base, *table, *past, *start, *after;
  pmr_impl_page_span(src, pg, &base, &table, &past);
  if (table == past) return false;
  size_t before, n_after;
  pmr_impl_page_layout(src, pg, pg->block, src->max_blocks, &start, &before,
                       &after, &n_after);
  char *lo = start + before * pg->block, *end = base + PMR_IMPL_PAGE_SIZE;
  *g1 = (unsigned char *)lo;
  *n1 = (size_t)(table - lo);
  *g2 = (unsigned char *)past;
  *n2 = (size_t)((after < end ? after : end) - past);
  return true;
}

void pmr_impl_page_gaps_fill(const pmr_impl_page *pg) {
  unsigned char *g1, *g2;
  size_t n1, n2;
  if (!table_gaps(pg, &g1, &n1, &g2, &n2)) return;
  memset(g1, PMR_IMPL_FREE_FILL, n1);
  memset(g2, PMR_IMPL_FREE_FILL, n2);
}

void pmr_impl_fill(void *b, size_t block) {
  if (block > sizeof(void *))
    memset((char *)b + sizeof(void *), PMR_IMPL_FREE_FILL,
           block - sizeof(void *));
}

/* b leaves h's delay for its page, unless its first two words (a
 * dangling pointer's likeliest target) were written while it waited: then
 * reported, and dropped (its page counts it in use for good). A write
 * further in is found when the page's list hands b out (the fill's check
 * of pmr_impl_heap_pop): checking the whole fill twice would double the
 * cost. */
static void delay_release(pmr_impl_page_heap *h, void *b) {
  pmr_impl_page *pg = pmr_impl_page_of(h->src, b);
  if (pmr_impl_link_peek(b) != NULL ||
      (pg->block > sizeof(void *) && !pmr_impl_block_filled(pg, b))) {
    pmr_impl_heap_broken(
        "a freed block was written while its reuse was delayed (a write "
        "after free)",
        pg->block, b);
    return;
  }
  if (pmr_impl_page_push_now(pg, b)) pmr_impl_heap_free_slow(pg);
}

void pmr_impl_heap_delay_push(pmr_impl_page *pg, void *p) {
  pmr_impl_page_heap *h = pg->heap;
  pmr_impl_heap_delay *d = h->delay;
  pmr_impl_fill(p, pg->block);
  pmr_impl_link_set(p, NULL); /* looks free: a second free is told */
  void *oldest = d->blocks[d->next];
  d->blocks[d->next] = p;
  d->next = (d->next + 1) % PMR_IMPL_DELAY_BLOCKS;
  if (oldest != NULL) delay_release(h, oldest);
}

bool pmr_impl_heap_delayed(const pmr_impl_page_heap *h, const void *p) {
  if (h->delay == NULL) return false;
  for (unsigned i = 0; i < PMR_IMPL_DELAY_BLOCKS; ++i)
    if (h->delay->blocks[i] == p) return true;
  return false;
}

bool pmr_impl_heap_delay_flush(pmr_impl_page_heap *h) {
  bool any = false;
  if (h->delay == NULL) return false;
  for (unsigned i = 0; i < PMR_IMPL_DELAY_BLOCKS; ++i) {
    void *b = h->delay->blocks[i];
    h->delay->blocks[i] = NULL;
    if (b != NULL) delay_release(h, b);
    any |= b != NULL;
  }
  return any;
}

#endif

#ifdef PMR_SECURE
#define DELAYED(h, p) pmr_impl_heap_delayed(h, p)
#else
#define DELAYED(h, p) false
#endif

bool pmr_impl_page_misuse(pmr_impl_page *pg, void *p, bool owner) {
  pmr_impl_page_heap *h = pg->heap;
  size_t block = pg->block;
  const char *what = NULL;
  if (pg->start_check == 0 || h == NULL) {
    what =
        "which lies in a page of the pool that serves no size class "
        "(a block freed twice, or not from this pool)";
    block = 0;
  } else {
    char *start, *after, *c = (char *)p;
    size_t before, past;
    pmr_impl_page_layout(h->src, pg, block, h->src->max_blocks, &start, &before,
                         &after, &past);
    bool starts = (c >= start && c < start + before * block &&
                   (size_t)(c - start) % block == 0) ||
                  (c >= after && c < after + past * block &&
                   (size_t)(c - after) % block == 0);
    if (!starts) {
      what = "which is not the start of a block";
    } else if (owner && pmr_impl_block_uncarved(pg, p)) {
      what = "a block never handed out";
    } else if (owner && p == pg->free) {
      what = "a double free: the block is free already";
    } else if (pmr_impl_block_looks_free(p)) {
      pmr_impl_page_class *k = &h->classes[pg->cls];
      if (!owner || on_list(pg->free, p, pg->capacity) || DELAYED(h, p) ||
          (k->current == pg && on_list(k->free, p, pg->capacity)) ||
          on_list(atomic_load_explicit(&pg->remote, memory_order_acquire), p,
                  pg->capacity))
        what = "a double free: the block is free already";
    }
  }
  if (what == NULL) return false;
  bool stop = pmr_impl_misuse_stops();
  if (block != 0)
    pmr_report_misuse("free of %p, %s (a size class of %zu bytes); %s", p, what,
                      block, stop ? "stopping" : "ignored");
  else
    pmr_report_misuse("free of %p, %s; %s", p, what,
                      stop ? "stopping" : "ignored");
  if (stop) abort();
  return true;
}

void pmr_impl_page_free_suspect(pmr_impl_page *pg, void *p) {
  if (pmr_impl_page_misuse(pg, p, true)) return;
  if (pmr_impl_page_push_checked(pg, p)) pmr_impl_heap_free_slow(pg);
}

uint32_t pmr_impl_page_list_check(pmr_impl_page *pg) {
  uint64_t seen[PMR_IMPL_PAGE_SIZE / 8 / 64];
  size_t slots = PMR_IMPL_PAGE_SIZE / pg->block;
  memset(seen, 0, (slots + 63) / 64 * sizeof seen[0]);
  char *base, *table, *past;
  pmr_impl_page_span(pg->heap->src, pg, &base, &table, &past);
  uint32_t n = 0;
  uint64_t sum = 0;
  void *prev = NULL;
  for (void *b = pg->free; b != NULL;) {
    const char *what = NULL;
    uint32_t idx = 0;
    if ((((uintptr_t)b ^ (uintptr_t)base) >> PMR_IMPL_PAGE_SHIFT) != 0)
      what =
          "a free list's link leads out of its page: a write after free "
          "or an overflow";
    else if (!pmr_impl_block_starts(pg, b))
      what = "a free list's link is not the start of a block";
    else if (pmr_impl_block_uncarved(pg, b) || n >= pg->capacity)
      what = "a free list holds a block never handed out";
    else {
      idx = pmr_impl_block_index(pg, b);
      if (seen[idx / 64] & ((uint64_t)1 << (idx % 64)))
        what =
            "a double free: the block was freed twice (found on its page's "
            "free list)";
    }
    if (what != NULL) {
      pmr_impl_heap_broken(what, pg->block, b);
      if (prev == NULL)
        pg->free = NULL;
      else
        pmr_impl_link_set(prev, NULL);
      break;
    }
    seen[idx / 64] |= (uint64_t)1 << (idx % 64);
    ++n;
    sum += pmr_impl_free_hash(b);
    prev = b;
    b = pmr_impl_link_peek(b);
  }
  pg->free_sum = sum;
  return n;
}

uint32_t pmr_impl_page_list_cut_loop(pmr_impl_page *pg, void *list,
                                     void **tail) {
  uint64_t seen[PMR_IMPL_PAGE_SIZE / 8 / 64];
  memset(seen, 0, sizeof seen);
  uint32_t n = 0;
  for (void *b = list;;) {
    size_t i = ((uintptr_t)b & (PMR_IMPL_PAGE_SIZE - 1)) / pg->block;
    if (seen[i / 64] & ((uint64_t)1 << (i % 64))) {
      pmr_impl_heap_broken(
          "a double free: a list of freed blocks holds a block twice",
          pg->block, b);
      pmr_impl_link_set(*tail, NULL);
      return n;
    }
    seen[i / 64] |= (uint64_t)1 << (i % 64);
    ++n;
    *tail = b;
    b = pmr_impl_link_peek(b); /* in pg, as give_list checked: never NULL */
  }
}

/* A page whose blocks lie in one run from its start (no frame table among
 * them) takes its class's sum, computed once. */
uint64_t pmr_impl_page_full_sum(pmr_impl_page_heap *h,
                                const pmr_impl_page *pg) {
  char *start, *after;
  size_t before, past;
  pmr_impl_page_layout(h->src, pg, pg->block, h->src->max_blocks, &start,
                       &before, &after, &past);
  /* Its blocks one run from the page's start (no table between them). */
  bool plain = after == start + before * pg->block;
  if (plain && h->full_sums[pg->cls] != 0) return h->full_sums[pg->cls];
  uint64_t sum = 0;
  for (size_t i = 0; i < before; ++i)
    sum += pmr_impl_free_hash_at((uint32_t)(i * pg->block));
  size_t first = (size_t)(after - start);
  for (size_t i = 0; i < past; ++i)
    sum += pmr_impl_free_hash_at((uint32_t)(first + i * pg->block));
  if (plain) h->full_sums[pg->cls] = sum;
  return sum;
}
