/* Benchmark E's churn with the rows in one process (benchmarks/README.md,
 * "R, B2 and E"). Each row fills 10,000 live blocks of 16..256 bytes, then
 * runs the same steps: free a random live block, allocate a random size in
 * its place, write 16 bytes of it; the caller keeps each block's size beside
 * its pointer. Rows take turns round after round (the order reversed every
 * other round), so a change of the host's speed falls on all of them; each
 * row's figure is its median time per step and the median, over rounds, of
 * its time divided by mimalloc's in the same round.
 *
 * Rows: mimalloc (mi_malloc / mi_free, found with dlopen; absent: the ratios
 * are to the synchronized pool), the synchronized pool, the thread cache
 * and the unsynchronized pool through pmr_allocate / pmr_deallocate, over
 * the default upstream.
 *
 *   bazel run -c opt //benchmarks:churn_probe -- [steps [rounds]]
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchmarks/probe.h"
#include "resources/pmr_synchronized_pool.h"
#include "resources/pmr_thread_cache.h"
#include "resources/pmr_unsynchronized_pool.h"

enum { LIVE = 10000, ALIGN = 16, MAX_ROUNDS = 1000 };
enum { MIMALLOC, SYNC, TCACHE, UNSYNC, ROWS };

static const char *const kNames[ROWS] = {
    "mimalloc (mi_malloc/mi_free)",
    "pmr_synchronized_pool",
    "pmr_thread_cache",
    "pmr_unsynchronized_pool",
};

/* A block as the caller holds it: its size beside its pointer. */
typedef struct held {
  void *p;
  size_t size;
} held;

static void *(*mi_malloc_fn)(size_t);
static void (*mi_free_fn)(void *);
static pmr_synchronized_pool sync_pool;
static pmr_thread_cache tcache;
static pmr_unsynchronized_pool unsync_pool;
static held live[LIVE];
static uint16_t live_size[LIVE];
static uint32_t *step_index;
static uint16_t *step_size;
static volatile uint64_t sink;

static pmr_mem_resource *resource_of(int row) {
  switch (row) {
    case SYNC:
      return &sync_pool.base;
    case TCACHE:
      return &tcache.base;
    default:
      return &unsync_pool.base;
  }
}

static void *alloc_row(int row, pmr_mem_resource *r, size_t size) {
  void *p = row == MIMALLOC ? mi_malloc_fn(size) : pmr_allocate(r, size, ALIGN);
  if (p == NULL) {
    fprintf(stderr, "churn_probe: %s: out of memory\n", kNames[row]);
    exit(1);
  }
  return p;
}

/* Fills, churns (timed), drains; returns ns per step. */
static double run_row(int row, size_t steps) {
  pmr_mem_resource *r = row == MIMALLOC ? NULL : resource_of(row);
  for (size_t k = 0; k < LIVE; ++k) {
    void *p = alloc_row(row, r, live_size[k]);
    memset(p, (int)k, 16);
    live[k] = (held){p, live_size[k]};
  }
  uint64_t t0 = probe_now_ns();
  if (row == MIMALLOC) {
    for (size_t s = 0; s < steps; ++s) {
      held *b = &live[step_index[s]];
      mi_free_fn(b->p);
      void *p = alloc_row(row, r, step_size[s]);
      memset(p, (int)s, 16);
      *b = (held){p, step_size[s]};
    }
  } else {
    for (size_t s = 0; s < steps; ++s) {
      held *b = &live[step_index[s]];
      pmr_deallocate(r, b->p, b->size, ALIGN);
      void *p = alloc_row(row, r, step_size[s]);
      memset(p, (int)s, 16);
      *b = (held){p, step_size[s]};
    }
  }
  double t = (double)(probe_now_ns() - t0) / (double)steps;
  uint64_t acc = 0;
  for (size_t k = 0; k < LIVE; ++k) {
    acc += *(const unsigned char *)live[k].p;
    if (row == MIMALLOC)
      mi_free_fn(live[k].p);
    else
      pmr_deallocate(r, live[k].p, live[k].size, ALIGN);
  }
  sink += acc;
  return t;
}

static uint64_t next(uint64_t *x) { /* xorshift: the same in every run */
  *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
  return *x;
}

int main(int argc, char **argv) {
  size_t steps = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 2000000;
  int rounds = argc > 2 ? atoi(argv[2]) : 15;
  if (steps < 1 || rounds < 1 || rounds > MAX_ROUNDS) {
    fprintf(stderr, "usage: churn_probe [steps >= 1 [rounds 1..%d]]\n",
            MAX_ROUNDS);
    return 2;
  }
  const bool have_mi = probe_find_mimalloc(&mi_malloc_fn, &mi_free_fn);
  if (!pmr_synchronized_pool_init(&sync_pool, NULL, NULL) ||
      !pmr_thread_cache_init(&tcache, NULL, NULL) ||
      !pmr_unsynchronized_pool_init(&unsync_pool, NULL, NULL))
    return 1;
  step_index = malloc(steps * sizeof *step_index);
  step_size = malloc(steps * sizeof *step_size);
  if (step_index == NULL || step_size == NULL) return 1;
  uint64_t x = 0xC0FFEEu;
  for (size_t k = 0; k < LIVE; ++k)
    live_size[k] = (uint16_t)(16 + next(&x) % 241);
  for (size_t s = 0; s < steps; ++s) {
    step_index[s] = (uint32_t)(next(&x) % LIVE);
    step_size[s] = (uint16_t)(16 + next(&x) % 241);
  }
  static double ns[ROWS][MAX_ROUNDS], ratio[ROWS][MAX_ROUNDS];
  const int first = have_mi ? MIMALLOC : SYNC;
  for (int r = -1; r < rounds; ++r) { /* round -1 warms up */
    for (int k = 0; k < ROWS - first; ++k) {
      int row = r % 2 ? ROWS - 1 - k : first + k;
      double t = run_row(row, steps);
      if (r >= 0) ns[row][r] = t;
    }
  }
  printf(
      "churn: %d live blocks of 16..256 B, %zu steps of (free a random one, "
      "allocate a random size); %d rounds, rows in turn\n",
      LIVE, steps, rounds);
  printf("%-30s %8s   %s\n", "row", "ns/step",
         have_mi ? "vs mimalloc (median of the rounds' ratios)"
                 : "vs pmr_synchronized_pool (mimalloc not installed)");
  for (int row = first; row < ROWS; ++row) {
    for (int r = 0; r < rounds; ++r) ratio[row][r] = ns[row][r] / ns[first][r];
    printf("%-30s %8.1f   %.2f\n", kNames[row], probe_median(ns[row], rounds),
           probe_median(ratio[row], rounds));
  }
  pmr_unsynchronized_pool_destroy(&unsync_pool);
  pmr_thread_cache_destroy(&tcache);
  pmr_synchronized_pool_destroy(&sync_pool);
  free(step_size);
  free(step_index);
  return 0;
}
