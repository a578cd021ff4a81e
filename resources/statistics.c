/* pmr_statistics: relaxed atomic counters around an upstream. */
#include "resources/pmr_statistics.h"

#include "resources/internal/live_registry.h"

#include <inttypes.h>
#include <stdatomic.h>

typedef struct {
  pmr_mem_resource *upstream;
  _Atomic uint64_t allocations, failed, deallocations, resizes, total_bytes;
  atomic_size_t blocks, bytes, peak;
  _Atomic uint64_t histogram[PMR_STATISTICS_BUCKETS];
} state;

PMR_IMPL_STATE_FITS(pmr_statistics, state);

static state *state_of(pmr_mem_resource *self) {
  return (state *)(void *)((pmr_statistics *)self)->pmr_impl_state.bytes;
}
static const state *cstate_of(const pmr_statistics *s) {
  return (const state *)(const void *)s->pmr_impl_state.bytes;
}

/* Each counter is independent: nothing is published through them, so
 * relaxed order is enough (and atomicity alone makes totals exact). */
#define ADD(x, n) atomic_fetch_add_explicit(&(x), (n), memory_order_relaxed)
#define SUB(x, n) atomic_fetch_sub_explicit(&(x), (n), memory_order_relaxed)
#define LOAD(x) atomic_load_explicit(&(x), memory_order_relaxed)

unsigned pmr_statistics_bucket_of(size_t bytes) {
  if (bytes <= 8) return 0;
  if (bytes > ((size_t)1 << 20)) return PMR_STATISTICS_BUCKETS - 1;
  /* ceil(log2(bytes)) - 3, with bytes in 9 .. 2^20. */
  unsigned bits = 0;
  for (size_t v = bytes - 1; v != 0; v >>= 1) ++bits;
  return bits - 3;
}

size_t pmr_statistics_bucket_limit(unsigned i) {
  if (i >= PMR_STATISTICS_BUCKETS - 1) return SIZE_MAX;
  return (size_t)8 << i;
}

/* Raises the peak to at least now; a CAS loop since no atomic max exists. */
static void raise_peak(state *s, size_t now) {
  size_t peak = LOAD(s->peak);
  while (now > peak && !atomic_compare_exchange_weak_explicit(
                           &s->peak, &peak, now, memory_order_relaxed,
                           memory_order_relaxed)) {
  }
}

static void *stats_allocate(pmr_mem_resource *self, size_t bytes,
                            size_t alignment) {
  state *s = state_of(self);
  void *p = pmr_allocate(s->upstream, bytes, alignment);
  if (p == NULL) {
    ADD(s->failed, 1); /* atomics leave errno as upstream set it */
    return NULL;
  }
  ADD(s->allocations, 1);
  ADD(s->total_bytes, bytes);
  ADD(s->histogram[pmr_statistics_bucket_of(bytes)], 1);
  ADD(s->blocks, 1);
  raise_peak(s, ADD(s->bytes, bytes) + bytes);
  return p;
}

static void stats_deallocate(pmr_mem_resource *self, void *p, size_t bytes,
                             size_t alignment) {
  state *s = state_of(self);
  /* Counted before forwarding: once upstream has the block, another thread
   * may get it back, and counting that allocation before this free would
   * overstate the peak. */
  ADD(s->deallocations, 1);
  SUB(s->blocks, 1);
  SUB(s->bytes, bytes);
  pmr_deallocate(s->upstream, p, bytes, alignment);
}

static bool stats_try_resize(pmr_mem_resource *self, void *p, size_t old_bytes,
                             size_t new_bytes, size_t alignment) {
  state *s = state_of(self);
  if (!pmr_try_resize(s->upstream, p, old_bytes, new_bytes, alignment))
    return false;
  ADD(s->resizes, 1);
  if (new_bytes >= old_bytes) {
    size_t grow = new_bytes - old_bytes;
    ADD(s->total_bytes, grow);
    raise_peak(s, ADD(s->bytes, grow) + grow);
  } else {
    SUB(s->bytes, old_bytes - new_bytes);
  }
  return true;
}

/* Thread-safe; blocks pass through unchanged, so what upstream says of
 * keeping and mapping them holds here too. */
static unsigned stats_traits(const pmr_mem_resource *self) {
  return PMR_TRAIT_THREAD_SAFE |
         (pmr_resource_traits(pmr_statistics_upstream(
              (const pmr_statistics *)(const void *)self)) &
          (PMR_TRAIT_KEEPS_FREED | PMR_TRAIT_MAPS_LARGE));
}

/* Blocks pass through unchanged: upstream's answers hold here too. */
static size_t stats_usable_size(const pmr_mem_resource *self, const void *p,
                                size_t bytes, size_t alignment) {
  const pmr_mem_resource *up =
      pmr_statistics_upstream((const pmr_statistics *)(const void *)self);
  return p == NULL ? pmr_good_size(up, bytes, alignment)
                   : pmr_usable_size(up, p, alignment);
}

static const pmr_mem_resource_ops stats_ops = {
    .allocate = stats_allocate,
    .deallocate = stats_deallocate,
    .is_equal = NULL, /* identity only */
    .try_resize = stats_try_resize,
    .traits = stats_traits,
    .usable_size = stats_usable_size,
};

/* Debug builds: the live statistics resources, to report init over one. */
static pmr_impl_live_registry registry =
    PMR_IMPL_LIVE_REGISTRY("statistics", NULL, NULL);

bool pmr_statistics_init(pmr_statistics *s, pmr_mem_resource *upstream) {
  PMR_IMPL_CHECK_NOT_NULL(s, "statistics", false);
  /* Over a live instance: reported, nothing to destroy, listed already. */
  if (!pmr_impl_live_debug_init(&registry, s))
    pmr_impl_live_debug_add(&registry, s);
  s->base.ops = &stats_ops;
  state *st = state_of(&s->base);
  st->upstream = pmr_resource_or_default(upstream);
  atomic_init(&st->allocations, 0);
  atomic_init(&st->failed, 0);
  atomic_init(&st->deallocations, 0);
  atomic_init(&st->resizes, 0);
  atomic_init(&st->total_bytes, 0);
  atomic_init(&st->blocks, 0);
  atomic_init(&st->bytes, 0);
  atomic_init(&st->peak, 0);
  for (unsigned i = 0; i < PMR_STATISTICS_BUCKETS; ++i)
    atomic_init(&st->histogram[i], 0);
  return true;
}

/* Nothing to free: the counters live in s and the blocks belong to upstream. */
void pmr_statistics_destroy(pmr_statistics *s) {
  PMR_IMPL_CHECK_NOT_NULL(s, "statistics", );
  pmr_impl_live_debug_remove(&registry, s);
}

pmr_mem_resource *pmr_statistics_upstream(const pmr_statistics *s) {
  PMR_IMPL_CHECK_NOT_NULL(s, "statistics", NULL);
  return cstate_of(s)->upstream;
}

pmr_statistics_stats pmr_statistics_get_stats(const pmr_statistics *s) {
  PMR_IMPL_CHECK_NOT_NULL(s, "statistics", (pmr_statistics_stats){0});
  const state *st = cstate_of(s);
  pmr_statistics_stats c;
  c.allocations = LOAD(st->allocations);
  c.failed_allocations = LOAD(st->failed);
  c.deallocations = LOAD(st->deallocations);
  c.resizes = LOAD(st->resizes);
  c.blocks_in_use = LOAD(st->blocks);
  c.bytes_in_use = LOAD(st->bytes);
  c.peak_bytes_in_use = LOAD(st->peak);
  c.total_bytes_allocated = LOAD(st->total_bytes);
  for (unsigned i = 0; i < PMR_STATISTICS_BUCKETS; ++i)
    c.histogram[i] = LOAD(st->histogram[i]);
  return c;
}

void pmr_statistics_reset_peak(pmr_statistics *s) {
  PMR_IMPL_CHECK_NOT_NULL(s, "statistics", );
  state *st = state_of(&s->base);
  atomic_store_explicit(&st->peak, LOAD(st->bytes), memory_order_relaxed);
}

bool pmr_statistics_report(const pmr_statistics *s, FILE *out) {
  PMR_IMPL_CHECK_NOT_NULL(s, "statistics", false);
  PMR_IMPL_CHECK_NOT_NULL(out, "stream", false);
  pmr_statistics_stats c = pmr_statistics_get_stats(s);
  bool ok = true;
  ok &= fprintf(out, "pmr_statistics %p (upstream %p)\n", (const void *)s,
                (void *)cstate_of(s)->upstream) >= 0;
  ok &= fprintf(out,
                "  allocations:      %" PRIu64 " (failed: %" PRIu64
                ")\n"
                "  deallocations:    %" PRIu64
                "\n"
                "  resizes:          %" PRIu64
                "\n"
                "  in use:           %zu blocks, %zu bytes\n"
                "  peak in use:      %zu bytes\n"
                "  total allocated:  %" PRIu64 " bytes\n",
                c.allocations, c.failed_allocations, c.deallocations, c.resizes,
                c.blocks_in_use, c.bytes_in_use, c.peak_bytes_in_use,
                c.total_bytes_allocated) >= 0;
  ok &= fprintf(out, "  allocations by size (bytes):\n") >= 0;
  for (unsigned i = 0; i < PMR_STATISTICS_BUCKETS; ++i) {
    if (c.histogram[i] == 0) continue;
    if (i == PMR_STATISTICS_BUCKETS - 1)
      ok &= fprintf(out, "    %9s > %-9zu %" PRIu64 "\n", "",
                    pmr_statistics_bucket_limit(i - 1), c.histogram[i]) >= 0;
    else
      ok &= fprintf(out, "    %9zu - %-9zu %" PRIu64 "\n",
                    i == 0 ? (size_t)0 : pmr_statistics_bucket_limit(i - 1) + 1,
                    pmr_statistics_bucket_limit(i), c.histogram[i]) >= 0;
  }
  return ok && !ferror(out);
}
