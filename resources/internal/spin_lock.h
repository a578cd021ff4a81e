/* PRIVATE: a test-and-test-and-set spin lock for critical sections a few
 * instructions long. A waiter spins briefly, then yields the CPU (threads may
 * outnumber cores). Lock with one atomic exchange, unlock with a plain
 * release store. */
#ifndef PMR_IMPL_SPIN_LOCK_H
#define PMR_IMPL_SPIN_LOCK_H

#include <stdatomic.h>
#include <stdbool.h>

#include "mem_resource/pmr_mem_resource.h"
#include "resources/internal/platform.h"

typedef atomic_int pmr_impl_spin;

static inline bool pmr_impl_spin_try_lock(pmr_impl_spin *l) {
  return atomic_load_explicit(l, memory_order_relaxed) == 0 &&
         atomic_exchange_explicit(l, 1, memory_order_acquire) == 0;
}

PMR_NOINLINE static void pmr_impl_spin_lock_slow(pmr_impl_spin *l) {
  for (unsigned spins = 0; !pmr_impl_spin_try_lock(l); ++spins) {
    if (spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    } else {
      pmr_impl_os_yield();
    }
  }
}

static inline void pmr_impl_spin_lock(pmr_impl_spin *l) {
  if (PMR_UNLIKELY(!pmr_impl_spin_try_lock(l))) pmr_impl_spin_lock_slow(l);
}

static inline void pmr_impl_spin_unlock(pmr_impl_spin *l) {
  atomic_store_explicit(l, 0, memory_order_release);
}

#endif /* PMR_IMPL_SPIN_LOCK_H */
