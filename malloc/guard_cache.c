/* The secure drop-in's kept guarded blocks (internal/guard.h). */
#include <stdatomic.h>

#include "malloc/internal/guard.h"
#include "resources/internal/fork_guard.h"
#include "resources/internal/spin_lock.h"

#ifdef PMR_SECURE

static pmr_impl_spin lock;
static pmr_impl_guard_kept kept[PMR_IMPL_GUARD_KEPT]; /* lock; start NULL:
                                                         free slot */
static size_t kept_bytes;                             /* lock */
static atomic_bool fork_registered;

static const pmr_impl_fork_client fork_client = {.spin = &lock};

bool pmr_impl_guard_keep(const pmr_impl_guard_kept *b) {
  if (!pmr_impl_guard_has(b->len) || b->len > PMR_IMPL_GUARD_KEPT_BYTES)
    return false;
  if (!atomic_load_explicit(&fork_registered, memory_order_acquire) &&
      pmr_impl_fork_register(&fork_client))
    atomic_store_explicit(&fork_registered, true, memory_order_release);
  bool done = false;
  pmr_impl_spin_lock(&lock);
  if (kept_bytes + b->len <= PMR_IMPL_GUARD_KEPT_BYTES) {
    for (unsigned i = 0; i < PMR_IMPL_GUARD_KEPT && !done; ++i) {
      if (kept[i].start != NULL) continue;
      kept[i] = *b;
      kept_bytes += b->len;
      done = true;
    }
  }
  pmr_impl_spin_unlock(&lock);
  return done;
}

unsigned char *pmr_impl_guard_take(size_t len, size_t alignment,
                                   unsigned origin) {
  unsigned char *p = NULL;
  if (!pmr_impl_guard_has(len)) return NULL;
  pmr_impl_spin_lock(&lock);
  if (kept_bytes != 0) {
    for (unsigned i = 0; i < PMR_IMPL_GUARD_KEPT; ++i) {
      pmr_impl_guard_kept *k = &kept[i];
      if (k->start == NULL || k->len != len || k->alignment != alignment ||
          k->origin != origin)
        continue;
      p = k->start;
      k->start = NULL;
      kept_bytes -= len;
      break;
    }
  }
  pmr_impl_spin_unlock(&lock);
  return p;
}

bool pmr_impl_guard_evict(pmr_impl_guard_kept *out) {
  bool any = false;
  pmr_impl_spin_lock(&lock);
  for (unsigned i = 0; i < PMR_IMPL_GUARD_KEPT && !any; ++i) {
    if (kept[i].start == NULL) continue;
    *out = kept[i];
    kept[i].start = NULL;
    kept_bytes -= out->len;
    any = true;
  }
  pmr_impl_spin_unlock(&lock);
  return any;
}

#else
/* Default builds keep nothing: a translation unit must hold a declaration. */
typedef int pmr_impl_guard_cache_unused;
#endif
