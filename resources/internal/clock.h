/* PRIVATE: the pools' clock for delays of milliseconds and more (purge,
 * give-back, the segment cache). Not for C++ translation units (C11
 * atomics). pmr_impl_coarse_ns needs POSIX's clock_gettime: a file that
 * calls it defines _POSIX_C_SOURCE before any include (the builds define it
 * for every file). */
#ifndef PMR_IMPL_CLOCK_H
#define PMR_IMPL_CLOCK_H

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "mem_resource/pmr_mem_resource.h"

/* The time tests set (pmr_impl_clock_set_for_tests); 0: none. */
extern _Atomic uint64_t pmr_impl_clock_fixed;

/* A monotonic clock for delays of milliseconds and more, in ns: a coarse
 * clock (a few ms of resolution) where there is one, which reads in a few
 * ns where the precise one costs tens; slow paths read it often while a
 * give-back waits for its delay (inline: the one call is the OS's). */
#if defined(CLOCK_MONOTONIC)
static inline uint64_t pmr_impl_coarse_ns(void) {
  uint64_t fixed =
      atomic_load_explicit(&pmr_impl_clock_fixed, memory_order_relaxed);
  if (PMR_UNLIKELY(fixed != 0)) return fixed;
  struct timespec t;
#ifdef CLOCK_MONOTONIC_COARSE
  clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
#else
  clock_gettime(CLOCK_MONOTONIC, &t);
#endif
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}
#endif

/* For tests: from now on pmr_impl_coarse_ns returns ns (0: the clock
 * again), so that a test of the delays moves time itself instead of
 * sleeping and hoping the machine keeps up. Declared again in
 * tests/testkit/clock.h. */
void pmr_impl_clock_set_for_tests(uint64_t ns);

#endif /* PMR_IMPL_CLOCK_H */
