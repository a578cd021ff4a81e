/* The pools' clock (clock.h): the time tests set. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "resources/internal/clock.h"

_Atomic uint64_t pmr_impl_clock_fixed;

void pmr_impl_clock_set_for_tests(uint64_t ns) {
  atomic_store_explicit(&pmr_impl_clock_fixed, ns, memory_order_relaxed);
}
