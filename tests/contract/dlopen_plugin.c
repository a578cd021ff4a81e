/* A shared library containing pmr-c, for dlopen_test: its thread-locals
 * (initial-exec unless PMR_PORTABLE_TLS) must fit the static TLS reserve a
 * dlopen'ed library gets. */
#include <pthread.h>
#include <stddef.h>

#include "pmr.h"

int pmr_plugin_run(void);

static pmr_thread_cache tc;

static void *churn(void *arg) {
  pmr_mem_resource *r = (pmr_mem_resource *)arg;
  void *keep[64];
  for (int round = 0; round < 200; ++round) {
    for (int i = 0; i < 64; ++i) {
      keep[i] = pmr_allocate(r, (size_t)(16 + i * 8), 8);
      if (keep[i] == NULL) return arg;
      *(volatile char *)keep[i] = (char)i;
    }
    for (int i = 0; i < 64; ++i)
      pmr_deallocate(r, keep[i], (size_t)(16 + i * 8), 8);
  }
  return NULL;
}

/* 0 when two threads used a thread cache and a synchronized pool. */
int pmr_plugin_run(void) {
  static pmr_synchronized_pool sp;
  if (!pmr_thread_cache_init(&tc, NULL, NULL)) return 1;
  if (!pmr_synchronized_pool_init(&sp, NULL, NULL)) return 2;
  pmr_mem_resource *rs[2] = {&tc.base, &sp.base};
  int failed = 0;
  for (int k = 0; k < 2; ++k) {
    pthread_t t[2];
    void *res[2] = {NULL, NULL};
    for (int i = 0; i < 2; ++i) pthread_create(&t[i], NULL, churn, rs[k]);
    for (int i = 0; i < 2; ++i) pthread_join(t[i], &res[i]);
    failed |= res[0] != NULL || res[1] != NULL;
  }
  pmr_synchronized_pool_destroy(&sp);
  pmr_thread_cache_destroy(&tc);
  return failed ? 3 : 0;
}
