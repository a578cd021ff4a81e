/* Helper of hashmap_flood_test: prints what a process's seeds decide, for
 * the test to compare between two processes. Line 1: the iteration order of
 * the keys 0..63 in a default-seeded uint64_t set; line 2: pmr_hash_bytes
 * and pmr_hash_u64 of fixed inputs (the per-process secret). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "containers/pmr_hashmap.h"

int main(void) {
  pmr_hashmap m;
  if (!pmr_hashmap_init(&m, sizeof(uint64_t), _Alignof(uint64_t), 0, 1, NULL))
    return 1;
  for (uint64_t k = 0; k < 64; ++k)
    if (pmr_hashmap_insert(&m, &k, NULL, NULL) < 0) return 1;
  pmr_hashmap_iter it = pmr_hashmap_iter_begin(&m);
  while (pmr_hashmap_iter_next(&it)) {
    uint64_t k;
    memcpy(&k, it.key, sizeof k);
    printf("%" PRIu64 " ", k);
  }
  printf("\n%016" PRIx64 " %016" PRIx64 "\n", pmr_hash_bytes("pmr", 3),
         pmr_hash_u64(3));
  pmr_hashmap_destroy(&m);
  return 0;
}
