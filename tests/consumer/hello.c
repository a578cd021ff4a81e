/* A program in another workspace: a pool, a vector and a string over it, and
 * a double free that every build reports (release builds on the free path,
 * the debug build (--@pmr_c//:debug) through its table of live blocks).
 *   hello             prints what it did and the number of misuse reports
 *   hello --check     the same, exits non-zero if a result is wrong */
#include <stdio.h>
#include <string.h>

/* PMR_C_HEADER: the spelling under test, e.g. <pmr-c/pmr.h> for an
 * installed pmr-c (tests/cmake/run.sh); "pmr.h" by default. */
#ifdef PMR_C_HEADER
#include PMR_C_HEADER
#else
#include "pmr.h"
#endif

static int reports;

static void count_report(const char *message, void *context) {
  (void)context;
  fprintf(stderr, "reported: %s\n", message);
  ++reports;
}

int main(int argc, char **argv) {
  int check = argc > 1 && strcmp(argv[1], "--check") == 0;
  pmr_unsynchronized_pool pool;
  if (!pmr_unsynchronized_pool_init(&pool, NULL, NULL)) return 1;

  pmr_vector v;
  if (!pmr_vector_init(&v, sizeof(int), _Alignof(int), &pool.base)) return 1;
  long sum = 0;
  for (int i = 1; i <= 1000; ++i) {
    if (!pmr_vector_push_back(&v, &i)) return 1;
  }
  for (size_t i = 0; i < pmr_vector_size(&v); ++i)
    sum += *(const int *)pmr_vector_at(&v, i);
  pmr_vector_destroy(&v);

  pmr_string s;
  pmr_string_init(&s, &pool.base);
  for (int i = 0; i < 10; ++i)
    if (!pmr_string_append_cstr(&s, "pmr-c ")) return 1;
  size_t len = pmr_string_length(&s);
  pmr_string_destroy(&s);

  /* The bug every build catches: the second deallocate is ignored and
   * reported once. */
  pmr_set_misuse_handler(count_report, NULL);
  void *p = pmr_allocate(&pool.base, 48, 8);
  pmr_deallocate(&pool.base, p, 48, 8);
  pmr_deallocate(&pool.base, p, 48, 8);
  pmr_unsynchronized_pool_destroy(&pool);

  printf("pmr-c %s: sum %ld, string length %zu, misuse reports %d\n",
         PMR_VERSION_STRING, sum, len, reports);
  if (check && (sum != 500500 || len != 60)) return 1;
  return 0;
}
