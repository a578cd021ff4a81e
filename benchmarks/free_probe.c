/* Benchmark C's free phase, taken apart (benchmarks/README.md, "C's free
 * phase: the work between a block's address and its push"). One process
 * allocates n blocks from each row's allocator, writes each, then frees
 * them all in one fixed shuffled order; rows take turns round after round
 * (the order reversed every other round), so a change of the host's speed
 * falls on all of them. It prints each row's median free time per block and
 * the median, over rounds, of its time divided by mimalloc's in the same
 * round.
 *
 * Sizes: "64" (the default) makes every block 64 bytes; "mixed" draws C's
 * sizes, 64/128/256/512 bytes 4:3:2:1. The caller keeps each block's size
 * beside its pointer.
 *
 * Rows: mimalloc (mi_malloc / mi_free, found with dlopen; absent: the ratios
 * are to the synchronized pool); the synchronized and unsynchronized pools
 * and the thread cache through pmr_allocate / pmr_deallocate; and three rows
 * that free a synchronized pool's blocks without its deallocate: the descriptor
 * found from the block's address with the geometry held in registers, then the
 * owner's push (page_heap.h) and, when the page needs it, its slow path. "bare
 * push" is that alone, in the loop; "called" puts it in a function of its own,
 * called once per block as mi_free is; "+ a global load" adds to that function
 * one load of a global whose value nothing uses. They use the pool's memory,
 * descriptors and page life; only the path differs. Single-threaded: the
 * calling thread owns every page.
 *
 * Fewer rows take turns faster, so a row and mimalloc run closer in time:
 * `rows` picks them by number (0-6, in the order above; mimalloc and the
 * synchronized pool, the references, always).
 *
 *   bazel run -c opt //benchmarks:free_probe -- [blocks [rounds [64|mixed
 *       [rows, e.g. 1,3]]]]
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchmarks/probe.h"
#include "resources/internal/page_heap.h"
#include "resources/internal/page_map.h"
#include "resources/internal/page_source.h"
#include "resources/pmr_synchronized_pool.h"
#include "resources/pmr_thread_cache.h"
#include "resources/pmr_unsynchronized_pool.h"

enum { ALIGN = 16, MAX_ROUNDS = 1000 };
enum {
  MIMALLOC,
  SYNC,
  UNSYNC,
  TCACHE,
  BARE,
  BARE_CALL,
  BARE_CALL_GLOBAL,
  ROWS
};

static const char *const kNames[ROWS] = {
    "mimalloc (mi_free)",         "pmr_synchronized_pool",
    "pmr_unsynchronized_pool",    "pmr_thread_cache",
    "sync pool pages, bare push", "  the same, called",
    "  called, + a global load",
};

/* A block as the caller holds it: its size beside its pointer. */
typedef struct held {
  void *p;
  size_t size;
} held;

static void *(*mi_malloc_fn)(size_t);
static void (*mi_free_fn)(void *);
static pmr_synchronized_pool sync_pool, bare_pool;
static pmr_unsynchronized_pool unsync_pool;
static pmr_thread_cache tcache;
/* Read once per block by "called, + a global load". */
volatile size_t probe_global = 1;

static pmr_mem_resource *resource_of(int row) {
  switch (row) {
    case SYNC:
      return &sync_pool.base;
    case UNSYNC:
      return &unsync_pool.base;
    case TCACHE:
      return &tcache.base;
    default:
      return &bare_pool.base;
  }
}

static void *alloc_row(int row, size_t size) {
  return row == MIMALLOC ? mi_malloc_fn(size)
                         : pmr_allocate(resource_of(row), size, ALIGN);
}

/* The bare rows' free: the descriptor from the address (the geometry in
 * registers), the push, the page's slow path when it needs one. */
static inline void bare_free(uintptr_t frame_mask, uint32_t color_mask,
                             void *p) {
  uintptr_t a = (uintptr_t)p;
  uint32_t slot = ((uint32_t)a >> PMR_IMPL_PAGE_OF_SHIFT) & color_mask;
  pmr_impl_page *pg = (pmr_impl_page *)((a & frame_mask) + slot);
  if (pmr_impl_page_push(pg, p)) pmr_impl_heap_free_slow(pg);
}

/* bare_free as a function of its own, as a free called per block is. */
__attribute__((noinline)) static void bare_free_called(uintptr_t frame_mask,
                                                       uint32_t color_mask,
                                                       void *p) {
  bare_free(frame_mask, color_mask, p);
}

__attribute__((noinline)) static void bare_free_called_load(
    uintptr_t frame_mask, uint32_t color_mask, void *p) {
  size_t v = probe_global;
  __asm__ volatile("" : "+r"(v));
  bare_free(frame_mask, color_mask, p);
}

/* Frees blocks[order[j]] for every j; returns ns per block. */
static double free_row(int row, const held *blocks, const uint32_t *order,
                       size_t n) {
  uintptr_t frame_mask = 0;
  uint32_t color_mask = 0;
  if (row >= BARE) {
    const pmr_impl_page_source *src = pmr_impl_page_map_get(blocks[0].p);
    frame_mask = src->frame_mask;
    color_mask = src->color_mask;
  }
  pmr_mem_resource *r = resource_of(row);
  uint64_t t0 = probe_now_ns();
  switch (row) {
    case MIMALLOC:
      for (size_t j = 0; j < n; ++j) mi_free_fn(blocks[order[j]].p);
      break;
    case SYNC:
    case UNSYNC:
    case TCACHE:
      for (size_t j = 0; j < n; ++j) {
        const held *b = &blocks[order[j]];
        pmr_deallocate(r, b->p, b->size, ALIGN);
      }
      break;
    case BARE:
      for (size_t j = 0; j < n; ++j)
        bare_free(frame_mask, color_mask, blocks[order[j]].p);
      break;
    case BARE_CALL:
      for (size_t j = 0; j < n; ++j)
        bare_free_called(frame_mask, color_mask, blocks[order[j]].p);
      break;
    case BARE_CALL_GLOBAL:
      for (size_t j = 0; j < n; ++j)
        bare_free_called_load(frame_mask, color_mask, blocks[order[j]].p);
      break;
  }
  return (double)(probe_now_ns() - t0) / (double)n;
}

static uint64_t next(uint64_t *x) { /* xorshift: the same in every run */
  *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
  return *x;
}

int main(int argc, char **argv) {
  size_t n = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 1000000;
  int rounds = argc > 2 ? atoi(argv[2]) : 15;
  const char *mode = argc > 3 ? argv[3] : "64";
  const bool mixed = strcmp(mode, "mixed") == 0;
  bool run[ROWS];
  for (int row = 0; row < ROWS; ++row)
    run[row] = argc <= 4 || row == MIMALLOC || row == SYNC;
  for (const char *c = argc > 4 ? argv[4] : ""; *c != '\0'; ++c)
    if (*c >= '0' && *c < '0' + ROWS) run[*c - '0'] = true;
  if (n < 2 || n > UINT32_MAX || rounds < 1 || rounds > MAX_ROUNDS ||
      (!mixed && strcmp(mode, "64") != 0)) {
    fprintf(
        stderr,
        "usage: free_probe [blocks >= 2 [rounds 1..%d [64|mixed [rows]]]]\n",
        MAX_ROUNDS);
    return 2;
  }
  const bool have_mi = probe_find_mimalloc(&mi_malloc_fn, &mi_free_fn);
  pmr_synchronized_pool_init(&sync_pool, NULL, NULL);
  pmr_synchronized_pool_init(&bare_pool, NULL, NULL);
  pmr_unsynchronized_pool_init(&unsync_pool, NULL, NULL);
  pmr_thread_cache_init(&tcache, NULL, NULL);

  held *blocks = malloc(n * sizeof *blocks);
  uint16_t *sizes = malloc(n * sizeof *sizes);
  uint32_t *order = malloc(n * sizeof *order);
  static double ns[ROWS][MAX_ROUNDS], ratio[ROWS][MAX_ROUNDS];
  if (blocks == NULL || sizes == NULL || order == NULL) return 1;
  uint64_t x = 0xC0FFEEu;
  for (size_t i = 0; i < n; ++i) {
    unsigned d = (unsigned)(next(&x) % 10); /* C's 4:3:2:1 */
    sizes[i] = !mixed ? 64 : d < 4 ? 64 : d < 7 ? 128 : d < 9 ? 256 : 512;
    order[i] = (uint32_t)i;
  }
  for (size_t i = n - 1; i > 0; --i) {
    size_t j = (size_t)(next(&x) % (i + 1));
    uint32_t t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  const int first = have_mi ? MIMALLOC : SYNC;
  for (int r = -1; r < rounds; ++r) { /* round -1 warms up */
    for (int k = 0; k < ROWS - first; ++k) {
      int row = r % 2 ? ROWS - 1 - k : first + k;
      if (!run[row]) continue;
      for (size_t i = 0; i < n; ++i) {
        void *p = alloc_row(row, sizes[i]);
        if (p == NULL) return 1;
        memcpy(p, &i, sizeof i);
        blocks[i].p = p;
        blocks[i].size = sizes[i];
      }
      double t = free_row(row, blocks, order, n);
      if (r >= 0) ns[row][r] = t;
    }
  }
  const int ref = first; /* mimalloc, else the synchronized pool */
  printf(
      "free phase: %zu blocks of %s B, freed in a shuffled order; "
      "%d rounds, rows in turn\n",
      n, mixed ? "64/128/256/512 (4:3:2:1)" : "64", rounds);
  printf("%-28s %10s   %s\n", "row", "ns/block",
         have_mi ? "vs mimalloc (median of the rounds' ratios)"
                 : "vs pmr_synchronized_pool (mimalloc not installed)");
  for (int row = first; row < ROWS; ++row) {
    if (!run[row]) continue;
    for (int r = 0; r < rounds; ++r) ratio[row][r] = ns[row][r] / ns[ref][r];
    double q = probe_median(ratio[row], rounds);
    printf("%-28s %10.1f   %.2f\n", kNames[row], probe_median(ns[row], rounds),
           q);
  }
  pmr_thread_cache_destroy(&tcache);
  pmr_unsynchronized_pool_destroy(&unsync_pool);
  pmr_synchronized_pool_destroy(&bare_pool);
  pmr_synchronized_pool_destroy(&sync_pool);
  free(order);
  free(sizes);
  free(blocks);
  return 0;
}
