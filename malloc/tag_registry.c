/* The registry of the drop-in's tagged blocks outside the engine's pages
 * (malloc/internal/tag_registry.h). */
#include "malloc/internal/tag_registry.h"

#include <stdatomic.h>
#include <stdint.h>

#include "resources/internal/fork_guard.h"
#include "resources/internal/meta_mem.h"
#include "resources/internal/spin_lock.h"

typedef struct reg_slot {
  uintptr_t p; /* 0: empty */
  uintptr_t state;
} reg_slot;
static pmr_impl_spin reg_lock;
static reg_slot *reg_slots;      /* reg_lock */
static size_t reg_cap, reg_used; /* reg_used: slots not empty */
static atomic_bool reg_fork_registered;

static const pmr_impl_fork_client reg_fork_client = {.spin = &reg_lock};

static size_t reg_home(uintptr_t p, size_t cap) {
  return (size_t)((p >> 4) * (uintptr_t)0x9e3779b97f4a7c15u) & (cap - 1);
}

/* The slot of p, or the empty slot where it would go (reg_lock held). */
static reg_slot *reg_find(uintptr_t p) {
  for (size_t i = reg_home(p, reg_cap);; i = (i + 1) & (reg_cap - 1))
    if (reg_slots[i].p == p || reg_slots[i].p == 0) return &reg_slots[i];
}

/* Room for one more slot: doubles the table, dropping the tombstones
 * (reg_lock held). False when no memory. */
static bool reg_room(void) {
  if (reg_slots != NULL && (reg_used + 1) * 4 <= reg_cap * 3) return true;
  size_t live = 0;
  for (size_t i = 0; i < reg_cap; ++i)
    live += reg_slots[i].state == PMR_IMPL_TAGREG_LIVE;
  size_t cap = reg_cap == 0 ? 1024 : reg_cap;
  while ((live + 1) * 2 > cap) cap *= 2;
  reg_slot *old = reg_slots;
  size_t old_cap = reg_cap;
  reg_slot *slots = (reg_slot *)pmr_impl_meta_alloc(cap * sizeof *slots);
  if (slots == NULL) return false;
  reg_slots = slots;
  reg_cap = cap;
  reg_used = 0;
  for (size_t i = 0; i < old_cap; ++i)
    if (old[i].state == PMR_IMPL_TAGREG_LIVE) {
      *reg_find(old[i].p) = old[i];
      ++reg_used;
    }
  pmr_impl_meta_free(old);
  return true;
}

bool pmr_impl_tag_registry_add(const void *p) {
  if (!atomic_load_explicit(&reg_fork_registered, memory_order_acquire) &&
      pmr_impl_fork_register(&reg_fork_client))
    atomic_store_explicit(&reg_fork_registered, true, memory_order_release);
  pmr_impl_spin_lock(&reg_lock);
  bool ok = reg_room();
  if (ok) {
    reg_slot *e = reg_find((uintptr_t)p);
    if (e->p == 0) ++reg_used;
    e->p = (uintptr_t)p;
    e->state = PMR_IMPL_TAGREG_LIVE;
  }
  pmr_impl_spin_unlock(&reg_lock);
  return ok;
}

int pmr_impl_tag_registry_state(const void *p, bool take) {
  pmr_impl_spin_lock(&reg_lock);
  int st = PMR_IMPL_TAGREG_NONE;
  if (reg_slots != NULL) {
    reg_slot *e = reg_find((uintptr_t)p);
    if (e->p != 0) {
      st = (int)e->state;
      if (take && st == PMR_IMPL_TAGREG_LIVE) e->state = PMR_IMPL_TAGREG_FREED;
    }
  }
  pmr_impl_spin_unlock(&reg_lock);
  return st;
}
