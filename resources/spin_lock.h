/* PRIVATE: a test-and-test-and-set spin lock for critical sections a few
 * instructions long. A waiter spins briefly, then yields the CPU (threads may
 * outnumber cores). Lock with one atomic exchange, unlock with a plain
 * release store. */
#ifndef PMR_RESOURCES_SPIN_LOCK_H
#define PMR_RESOURCES_SPIN_LOCK_H

#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "mem_resource/mem_resource.h"

typedef atomic_int pmr__spin;

static inline bool pmr__spin_try_lock(pmr__spin *l) {
  return atomic_load_explicit(l, memory_order_relaxed) == 0 &&
         atomic_exchange_explicit(l, 1, memory_order_acquire) == 0;
}

PMR_NOINLINE static void pmr__spin_lock_slow(pmr__spin *l) {
  for (unsigned spins = 0; !pmr__spin_try_lock(l); ++spins) {
    if (spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    } else {
      sched_yield();
    }
  }
}

static inline void pmr__spin_lock(pmr__spin *l) {
  if (PMR_UNLIKELY(!pmr__spin_try_lock(l))) pmr__spin_lock_slow(l);
}

static inline void pmr__spin_unlock(pmr__spin *l) {
  atomic_store_explicit(l, 0, memory_order_release);
}

#endif /* PMR_RESOURCES_SPIN_LOCK_H */
