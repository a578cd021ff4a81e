/* What the probes (free_probe.c, churn_probe.c) share: a clock, the median
 * of a round's figures, and mimalloc's own functions found with dlopen. */
#ifndef PMR_BENCHMARKS_PROBE_H
#define PMR_BENCHMARKS_PROBE_H

#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline uint64_t probe_now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static inline int probe_by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median of v[0..n) (n >= 1); sorts v. */
static inline double probe_median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, probe_by_value);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* mi_malloc and mi_free from libmimalloc.so.2, loaded with dlopen; false
 * (both NULL) when it is not installed. */
static inline bool probe_find_mimalloc(void *(**mi_malloc)(size_t),
                                       void (**mi_free)(void *)) {
  *mi_malloc = NULL;
  *mi_free = NULL;
  void *lib = dlopen("libmimalloc.so.2", RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) return false;
  /* POSIX: a function's address through void * */
  void *m = dlsym(lib, "mi_malloc"), *f = dlsym(lib, "mi_free");
  if (m == NULL || f == NULL) return false;
  memcpy(mi_malloc, &m, sizeof m);
  memcpy(mi_free, &f, sizeof f);
  return true;
}

#endif /* PMR_BENCHMARKS_PROBE_H */
