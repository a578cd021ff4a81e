/* Every public header compiles as strict C11 (-std=c11 -pedantic -Werror
 * -Wredundant-decls) and the basics work from plain C. The other tests compile
 * the same headers as C++. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "containers/pmr_hashmap.h"
#include "containers/pmr_string.h"
#include "containers/pmr_vector.h"
#include "mem_resource/pmr_malloc_adapter.h"
#include "mem_resource/pmr_mem_resource.h"
#include "resources/pmr_debug_resource.h"
#include "resources/pmr_monotonic_buffer.h"
#include "resources/pmr_pool_options.h"
#include "resources/pmr_statistics.h"
#include "resources/pmr_synchronized_pool.h"
#include "resources/pmr_thread_cache.h"
#include "resources/pmr_unsynchronized_pool.h"

/* Typed maps (hashmap.h) from C. */
PMR_HASHMAP_TYPED(id_map, uint64_t, double)
PMR_HASHMAP_TYPED_STR(word_count, uint32_t)

static int failures = 0;
#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

int main(void) {
  pmr_mem_resource *m = pmr_malloc_resource();
  void *p = pmr_allocate(m, 100, 64);
  CHECK(p != NULL);
  CHECK(((uintptr_t)p % 64) == 0);
  pmr_deallocate(m, p, 100, 64);

  errno = 0;
  CHECK(pmr_allocate(m, 8, 6) == NULL);
  CHECK(errno == EINVAL);
  CHECK(pmr_allocate(pmr_null_resource(), 8, 8) == NULL);
  CHECK(pmr_is_equal(m, m));
  CHECK(!pmr_is_equal(m, pmr_null_resource()));
  CHECK(pmr_get_default_resource() == m);
  CHECK(pmr_set_default_resource(pmr_null_resource()) == m);
  CHECK(pmr_set_default_resource(NULL) == pmr_null_resource());

  /* Every resource and container from plain C. */
  char buf[256];
  pmr_monotonic_buffer mono;
  pmr_monotonic_buffer_init_with_buffer(&mono, buf, sizeof buf, NULL);
  pmr_unsynchronized_pool unsync;
  pmr_unsynchronized_pool_init(&unsync, NULL, NULL);
  pmr_synchronized_pool sync;
  pmr_synchronized_pool_init(&sync, NULL, NULL);
  pmr_thread_cache tc;
  CHECK(pmr_thread_cache_init(&tc, NULL, NULL));
  pmr_statistics stats;
  pmr_statistics_init(&stats, NULL);
  pmr_debug_resource dbg;
  pmr_debug_resource_init(&dbg, NULL, &stats.base);
  pmr_mem_resource *all[] = {m,          &mono.base, &unsync.base,
                             &sync.base, &tc.base,   &dbg.base};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) {
    pmr_vector v;
    CHECK(pmr_vector_init(&v, sizeof(int), _Alignof(int), all[i]));
    for (int k = 0; k < 100; ++k) CHECK(pmr_vector_push_back(&v, &k));
    CHECK(pmr_vector_size(&v) == 100);
    CHECK(((int *)pmr_vector_data(&v))[99] == 99);
    pmr_vector_destroy(&v);

    pmr_string s;
    pmr_string_init(&s, all[i]);
    CHECK(pmr_string_append_format(&s, "%s-%d", "pmr", 42));
    CHECK(strcmp(pmr_string_c_str(&s), "pmr-42") == 0);
    pmr_string_destroy(&s);

    pmr_hashmap h;
    CHECK(pmr_hashmap_init(&h, sizeof(uint64_t), _Alignof(uint64_t),
                           sizeof(int), _Alignof(int), all[i]));
    uint64_t key = 7;
    int value = 49;
    CHECK(pmr_hashmap_insert(&h, &key, &value, NULL) == PMR_HASHMAP_INSERTED);
    CHECK(*(int *)pmr_hashmap_find(&h, &key) == 49);
    pmr_hashmap_destroy(&h);
  }
  CHECK(pmr_debug_resource_destroy(&dbg) == 0);
  CHECK(pmr_statistics_get_stats(&stats).blocks_in_use == 0);
  pmr_statistics_destroy(&stats);
  pmr_thread_cache_destroy(&tc);
  pmr_synchronized_pool_destroy(&sync);
  pmr_unsynchronized_pool_destroy(&unsync);
  pmr_monotonic_buffer_destroy(&mono);

  {
    id_map ids;
    CHECK(id_map_init(&ids, NULL));
    CHECK(id_map_insert(&ids, 7, 0.5) == PMR_HASHMAP_INSERTED);
    CHECK(id_map_insert(&ids, 7, 1.5) == PMR_HASHMAP_EXISTED);
    CHECK(*id_map_find(&ids, 7) == 0.5);
    CHECK(id_map_find(&ids, 8) == NULL);
    double out = 0;
    CHECK(id_map_erase(&ids, 7, &out) && out == 0.5);
    CHECK(id_map_size(&ids) == 0);
    word_count words;
    CHECK(word_count_init(&words, NULL));
    const char *text = "to be or not to be";
    size_t i = 0;
    while (text[i] != '\0') {
      const size_t n = strcspn(text + i, " ");
      bool inserted;
      uint32_t *c = word_count_emplace(&words, text + i, n, &inserted);
      CHECK(c != NULL);
      if (c != NULL) ++*c;
      i += n + (text[i + n] == ' ');
    }
    CHECK(word_count_size(&words) == 4);
    CHECK(*word_count_find(&words, "be", 2) == 2);
    CHECK(word_count_erase(&words, "to", 2, NULL));
    /* Typed iterators: typed key and value pointers, no cast. */
    uint32_t total = 0;
    size_t letters = 0;
    word_count_iter it = word_count_iter_begin(&words);
    while (word_count_iter_next(&it)) {
      total += *it.value;
      letters += strlen(pmr_string_c_str(it.key));
    }
    CHECK(total == 4 && letters == 2 + 2 + 3); /* be, or, not */
    CHECK(id_map_insert(&ids, 9, 2.5) == PMR_HASHMAP_INSERTED);
    id_map_iter ii = id_map_iter_begin(&ids);
    CHECK(id_map_iter_next(&ii) && *ii.key == 9 && *ii.value == 2.5);
    id_map_iter_erase(&ii);
    CHECK(!id_map_iter_next(&ii) && id_map_size(&ids) == 0);
    id_map_destroy(&ids);
    word_count_destroy(&words);
  }
  if (failures == 0) printf("c_headers_test: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
