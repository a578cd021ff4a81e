/* pmr_debug_resource's freeing: a block given back goes through the FIFO
 * quarantine (checked when it leaves) to upstream, and its address is
 * remembered for a while to name a late double free as such
 * (debug_resource_impl.h). Every function runs under the resource's mutex. */
#include <stdlib.h>
#include <string.h>

#include "resources/internal/debug_resource_impl.h"

/* Returned pointers remembered to name a late double free as such. */
#define FREED_HISTORY ((size_t)4096)

/* Short names for the shared types (debug_resource_impl.h). */
typedef pmr_impl_debug_resource_state state;
/* One user pointer the resource knows (state: PMR_IMPL_DEBUG_RESOURCE_LIVE,
 * PMR_IMPL_DEBUG_RESOURCE_QUARANTINED, PMR_IMPL_DEBUG_RESOURCE_FREED). */
typedef pmr_impl_ptr_entry entry;

/* ---- rings -----------------------------------------------------------------
 */

static bool ring_push(pmr_impl_debug_resource_ring *r, unsigned char *p,
                      uint64_t serial) {
  if (r->len == r->cap) {
    size_t cap = r->cap == 0 ? 16 : r->cap * 2;
    if (cap > SIZE_MAX / sizeof(pmr_impl_debug_resource_ring_item))
      return false;
    pmr_impl_debug_resource_ring_item *items =
        (pmr_impl_debug_resource_ring_item *)malloc(
            cap * sizeof(pmr_impl_debug_resource_ring_item));
    if (items == NULL) return false;
    for (size_t i = 0; i < r->len; ++i)
      items[i] = r->items[(r->head + i) & (r->cap - 1)];
    free(r->items);
    r->items = items;
    r->cap = cap;
    r->head = 0;
  }
  pmr_impl_debug_resource_ring_item it = {p, serial};
  r->items[(r->head + r->len) & (r->cap - 1)] = it;
  ++r->len;
  return true;
}

static pmr_impl_debug_resource_ring_item ring_pop(
    pmr_impl_debug_resource_ring *r) {
  pmr_impl_debug_resource_ring_item it = r->items[r->head];
  r->head = (r->head + 1) & (r->cap - 1);
  --r->len;
  return it;
}

void pmr_impl_debug_resource_ring_free(pmr_impl_debug_resource_ring *r) {
  free(r->items);
  r->items = NULL;
  r->cap = r->head = r->len = 0;
}

/* ---- freeing ---------------------------------------------------------------
 */

void pmr_impl_debug_resource_upstream_free(state *s, const entry *e) {
  size_t pre = pmr_impl_debug_resource_prefix_of(e->alignment);
  pmr_deallocate(s->upstream, e->p - pre,
                 pre + e->bytes + PMR_IMPL_DEBUG_RESOURCE_GUARD,
                 pmr_impl_debug_resource_up_align(e->alignment));
}

/* Gives e's memory to upstream and remembers its address as freed, forgetting
 * the oldest remembered one past FREED_HISTORY. Invalidates e. */
static void release_block(state *s, entry *e) {
  unsigned char *p = e->p;
  uint64_t serial = e->serial;
  e->state = PMR_IMPL_DEBUG_RESOURCE_FREED;
  pmr_impl_debug_resource_upstream_free(s, e);
  if (s->history.len == FREED_HISTORY) {
    pmr_impl_debug_resource_ring_item old = ring_pop(&s->history);
    entry *o = pmr_impl_debug_resource_table_find(s, old.p);
    if (o != NULL && o->state == PMR_IMPL_DEBUG_RESOURCE_FREED &&
        o->serial == old.serial)
      pmr_impl_ptr_table_remove(&s->table, o);
  }
  if (!ring_push(&s->history, p, serial)) { /* out of memory: forget it */
    entry *f = pmr_impl_debug_resource_table_find(s, p);
    if (f != NULL) pmr_impl_ptr_table_remove(&s->table, f);
  }
}

/* The oldest block of the quarantine: checked, then given to upstream. */
static size_t evict_one(state *s) {
  pmr_impl_debug_resource_ring_item it = ring_pop(&s->quarantine);
  entry *e = pmr_impl_debug_resource_table_find(s, it.p);
  if (e == NULL || e->state != PMR_IMPL_DEBUG_RESOURCE_QUARANTINED ||
      e->serial != it.serial)
    return 0;
  s->q_bytes -= e->bytes;
  size_t problems =
      pmr_impl_debug_resource_check_block(s, e, "when it left quarantine");
  release_block(s, e);
  return problems;
}

size_t pmr_impl_debug_resource_flush_locked(state *s) {
  size_t problems = 0;
  while (s->quarantine.len > 0) problems += evict_one(s);
  return problems;
}

/* A deallocation accepted: counts, then quarantine (or upstream at once). */
size_t pmr_impl_debug_resource_free_block(state *s, entry *e) {
  size_t problems = pmr_impl_debug_resource_check_block(s, e, "by deallocate");
  unsigned char *p = e->p;
  uint64_t serial = e->serial;
  size_t n = e->bytes;
  ++s->c.deallocations;
  --s->c.blocks_in_use;
  s->c.bytes_in_use -= n;
  if (s->q_max_blocks == 0 || n > s->q_max_bytes) {
    release_block(s, e);
    return problems;
  }
  memset(p, PMR_IMPL_DEBUG_RESOURCE_FREED_BYTE, n);
  e->state = PMR_IMPL_DEBUG_RESOURCE_QUARANTINED;
  while (s->quarantine.len > 0 && (s->quarantine.len >= s->q_max_blocks ||
                                   n > s->q_max_bytes - s->q_bytes))
    problems += evict_one(s);
  /* Evictions may have moved it. */
  e = pmr_impl_debug_resource_table_find(s, p);
  if (!ring_push(&s->quarantine, p, serial)) {
    release_block(s, e); /* no room to remember it: skip the quarantine */
    return problems;
  }
  s->q_bytes += n;
  return problems;
}
