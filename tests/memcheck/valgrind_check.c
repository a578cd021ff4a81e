/* Run under valgrind by valgrind_check_test.sh. With PMR_VALGRIND, the
 * resources mark free blocks and unused memory no-access, so memcheck reports
 * a use after free into a pool or into rewound arena memory, which it could
 * not see otherwise (the memory still belongs to a malloc'd chunk).
 *   valgrind_check SCENARIO   (clean | pool | sync_pool | thread_cache |
 *                              monotonic_rewind | monotonic_unused) */
#include <stdio.h>
#include <string.h>

#include "resources/pmr_monotonic_buffer.h"
#include "resources/pmr_synchronized_pool.h"
#include "resources/pmr_thread_cache.h"
#include "resources/pmr_unsynchronized_pool.h"

static volatile char sink;

static void use_after_free(pmr_mem_resource *r) {
  char *p = (char *)pmr_allocate(r, 64, 8);
  memset(p, 1, 64);
  pmr_deallocate(r, p, 64, 8);
  p[40] = 7; /* the bug */
}

int main(int argc, char **argv) {
  const char *s = argc > 1 ? argv[1] : "clean";
  if (strcmp(s, "clean") == 0) {
    pmr_unsynchronized_pool pool;
    pmr_unsynchronized_pool_init(&pool, NULL, NULL);
    pmr_monotonic_buffer m;
    pmr_monotonic_buffer_init(&m, &pool.base);
    for (int i = 0; i < 1000; ++i) {
      char *p = (char *)pmr_allocate(&pool.base, (size_t)(8 + i % 300), 8);
      memset(p, i, (size_t)(8 + i % 300));
      char *q = (char *)pmr_allocate(&m.base, 100, 8);
      memset(q, i, 100);
      sink = (char)(p[3] + q[99]);
      pmr_deallocate(&pool.base, p, (size_t)(8 + i % 300), 8);
    }
    pmr_monotonic_marker mk = pmr_monotonic_buffer_mark(&m);
    memset(pmr_allocate(&m.base, 5000, 8), 1, 5000);
    pmr_monotonic_buffer_rewind(&m, mk);
    pmr_monotonic_buffer_destroy(&m);
    pmr_unsynchronized_pool_destroy(&pool);
    pmr_thread_cache tc;
    pmr_thread_cache_init(&tc, NULL, NULL);
    for (int i = 0; i < 1000; ++i) {
      char *p = (char *)pmr_allocate(&tc.base, 48, 8);
      memset(p, i, 48);
      pmr_deallocate(&tc.base, p, 48, 8);
    }
    pmr_thread_cache_destroy(&tc);
  } else if (strcmp(s, "pool") == 0) {
    pmr_unsynchronized_pool pool;
    pmr_unsynchronized_pool_init(&pool, NULL, NULL);
    use_after_free(&pool.base);
    pmr_unsynchronized_pool_destroy(&pool);
  } else if (strcmp(s, "sync_pool") == 0) {
    pmr_synchronized_pool pool;
    pmr_synchronized_pool_init(&pool, NULL, NULL);
    use_after_free(&pool.base);
    pmr_synchronized_pool_destroy(&pool);
  } else if (strcmp(s, "thread_cache") == 0) {
    pmr_thread_cache tc;
    pmr_thread_cache_init(&tc, NULL, NULL);
    use_after_free(&tc.base);
    pmr_thread_cache_destroy(&tc);
  } else if (strcmp(s, "monotonic_rewind") == 0) {
    pmr_monotonic_buffer m;
    pmr_monotonic_buffer_init(&m, NULL);
    pmr_monotonic_marker mk = pmr_monotonic_buffer_mark(&m);
    char *p = (char *)pmr_allocate(&m.base, 100, 8);
    pmr_monotonic_buffer_rewind(&m, mk);
    p[10] = 1; /* the bug: rewound memory */
    pmr_monotonic_buffer_destroy(&m);
  } else if (strcmp(s, "monotonic_unused") == 0) {
    pmr_monotonic_buffer m;
    pmr_monotonic_buffer_init(&m, NULL);
    char *p = (char *)pmr_allocate(&m.base, 100, 8);
    p[100 + 16] = 1; /* the bug: past the block, into unused chunk space */
    pmr_monotonic_buffer_destroy(&m);
  } else {
    fprintf(stderr, "unknown scenario %s\n", s);
    return 2;
  }
  return 0;
}
