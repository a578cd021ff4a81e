#include "containers/pmr_hashmap.h"

/* The number of distinct values in xs[0, n), or -1 when out of memory. Its hash
 * set takes its memory from `mem`, whatever the caller chose. */
long count_distinct(const uint64_t *xs, size_t n, pmr_mem_resource *mem) {
  pmr_hashmap seen; /* a set: keys only (value size 0) */
  if (!pmr_hashmap_init(&seen, sizeof(uint64_t), _Alignof(uint64_t), 0, 1, mem))
    return -1;
  long distinct = 0;
  for (size_t i = 0; i < n && distinct >= 0; ++i) {
    pmr_hashmap_status st = pmr_hashmap_insert(&seen, &xs[i], NULL, NULL);
    distinct =
        st == PMR_HASHMAP_NOMEM ? -1 : distinct + (st == PMR_HASHMAP_INSERTED);
  }
  pmr_hashmap_destroy(&seen);
  return distinct;
}
