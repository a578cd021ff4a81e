#include "examples/example_resource.h"

#include <string.h>

enum {
  KIND_MALLOC,
  KIND_MONOTONIC,
  KIND_UNSYNC,
  KIND_SYNC,
  KIND_CACHE,
  KIND_STATS,
  KIND_DEBUG
};

const char *const example_resource_names[] = {"malloc",
                                              "monotonic",
                                              "unsynchronized_pool",
                                              "synchronized_pool",
                                              "thread_cache",
                                              "statistics",
                                              "debug",
                                              NULL};

void example_resource_print_unknown(FILE *f, const char *name) {
  fprintf(f, "unknown resource %s; one of:", name);
  for (int i = 0; example_resource_names[i] != NULL; ++i)
    fprintf(f, "%s %s", i == 0 ? "" : ",", example_resource_names[i]);
  fputc('\n', f);
}

bool example_resource_open(example_resource *e, const char *name) {
  int kind = -1;
  for (int i = 0; example_resource_names[i] != NULL; ++i)
    if (strcmp(name, example_resource_names[i]) == 0) kind = i;
  pmr_mem_resource *heap = pmr_malloc_resource();
  pmr_mem_resource *r = heap;
  bool ok = true;
  switch (kind) {
    case KIND_MALLOC:
      break;
    case KIND_MONOTONIC:
      ok = pmr_monotonic_buffer_init(&e->u.monotonic, heap);
      r = &e->u.monotonic.base;
      break;
    case KIND_UNSYNC:
      ok = pmr_unsynchronized_pool_init(&e->u.unsync, NULL, heap);
      r = &e->u.unsync.base;
      break;
    case KIND_SYNC:
      ok = pmr_synchronized_pool_init(&e->u.sync, NULL, heap);
      r = &e->u.sync.base;
      break;
    case KIND_CACHE:
      ok = pmr_thread_cache_init(&e->u.cache, NULL, heap);
      r = &e->u.cache.base;
      break;
    case KIND_STATS:
      ok = pmr_statistics_init(&e->u.stats, heap);
      r = &e->u.stats.base;
      break;
    case KIND_DEBUG: {
      pmr_debug_resource_options opts = {0};
      opts.name = "example";
      ok = pmr_debug_resource_init(&e->u.debug, &opts, heap);
      r = &e->u.debug.base;
      break;
    }
    default:
      return false;
  }
  if (!ok) return false;
  e->kind = kind;
  pmr_statistics_init(&e->counter, r);
  return true;
}

pmr_mem_resource *example_resource_get(example_resource *e) {
  return &e->counter.base;
}

size_t example_resource_blocks_in_use(const example_resource *e) {
  return pmr_statistics_get_stats(&e->counter).blocks_in_use;
}

size_t example_resource_bytes_in_use(const example_resource *e) {
  return pmr_statistics_get_stats(&e->counter).bytes_in_use;
}

size_t example_resource_total_bytes(const example_resource *e) {
  return (size_t)pmr_statistics_get_stats(&e->counter).total_bytes_allocated;
}

size_t example_resource_peak_bytes(const example_resource *e) {
  return pmr_statistics_get_stats(&e->counter).peak_bytes_in_use;
}

size_t example_resource_close(example_resource *e) {
  size_t leaks = 0;
  pmr_statistics_destroy(&e->counter);
  switch (e->kind) {
    case KIND_MONOTONIC:
      pmr_monotonic_buffer_destroy(&e->u.monotonic);
      break;
    case KIND_UNSYNC:
      pmr_unsynchronized_pool_destroy(&e->u.unsync);
      break;
    case KIND_SYNC:
      pmr_synchronized_pool_destroy(&e->u.sync);
      break;
    case KIND_CACHE:
      pmr_thread_cache_destroy(&e->u.cache);
      break;
    case KIND_STATS:
      pmr_statistics_destroy(&e->u.stats);
      break;
    case KIND_DEBUG:
      leaks = pmr_debug_resource_destroy(&e->u.debug);
      break;
    default:
      break;
  }
  return leaks;
}
