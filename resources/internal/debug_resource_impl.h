/* PRIVATE: what the files of pmr_debug_resource share: the resource's state
 * (behind its mutex: every function here is called with it held), the layout
 * of a guarded block and the functions one file calls in another.
 * debug_resource.c: the hooks and public functions; debug_resource_check.c:
 * the block layout, its checks and the misuse reports; debug_resource_free.c:
 * freeing, the quarantine and the memory of returned blocks. */
#ifndef PMR_IMPL_DEBUG_RESOURCE_IMPL_H
#define PMR_IMPL_DEBUG_RESOURCE_IMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "resources/internal/live_registry.h"
#include "resources/internal/ptr_table.h"
#include "resources/pmr_debug_resource.h"

#define PMR_IMPL_DEBUG_RESOURCE_GUARD ((size_t)PMR_DEBUG_GUARD_BYTES)
#define PMR_IMPL_DEBUG_RESOURCE_GUARD_BYTE 0xFD /* around blocks */
#define PMR_IMPL_DEBUG_RESOURCE_FREED_BYTE 0xDD /* blocks in quarantine */
#define PMR_IMPL_DEBUG_RESOURCE_MIN_ALIGN ((size_t)16)

/* At the start of each upstream block: a debugger or a core dump shows what
 * the block is. Only ever compared with the table's record, never trusted. */
typedef struct {
  uint64_t magic, serial, bytes, alignment;
} pmr_impl_debug_resource_header;

/* The states of a user pointer the resource knows (pmr_impl_ptr_entry). */
enum {
  PMR_IMPL_DEBUG_RESOURCE_LIVE = 1,
  PMR_IMPL_DEBUG_RESOURCE_QUARANTINED,
  PMR_IMPL_DEBUG_RESOURCE_FREED
};

typedef struct {
  unsigned char *p;
  uint64_t serial; /* tells a stale item from a reused address */
} pmr_impl_debug_resource_ring_item;

/* A growable FIFO; cap is 0 or a power of two. */
typedef struct {
  pmr_impl_debug_resource_ring_item *items;
  size_t cap, head, len;
} pmr_impl_debug_resource_ring;

typedef struct pmr_impl_debug_resource_state {
  pmr_mem_resource *upstream;
  const void *self; /* for messages */
  pthread_mutex_t lock;
  pmr_impl_ptr_table table; /* the user pointers it knows */
  pmr_impl_debug_resource_ring quarantine, history;
  size_t q_max_blocks, q_max_bytes, q_bytes;
  pmr_debug_resource_stats c;
  uint64_t fail_countdown; /* 0: off */
  size_t byte_limit;
  bool byte_limit_on, fail_always, abort_on_misuse;
  char name[64];
  pmr_impl_live_node node; /* in the registry of live resources */
} pmr_impl_debug_resource_state;

_Static_assert(sizeof(pmr_impl_debug_resource_header) %
                       PMR_IMPL_DEBUG_RESOURCE_MIN_ALIGN ==
                   0,
               "header keeps guards aligned");

/* ---- block layout ---- */

static inline size_t pmr_impl_debug_resource_up_align(size_t alignment) {
  return alignment > PMR_IMPL_DEBUG_RESOURCE_MIN_ALIGN
             ? alignment
             : PMR_IMPL_DEBUG_RESOURCE_MIN_ALIGN;
}
/* Header plus front guard, rounded up so the user block is aligned. */
static inline size_t pmr_impl_debug_resource_prefix_of(size_t alignment) {
  size_t a = pmr_impl_debug_resource_up_align(alignment);
  return pmr_impl_round_up(
      sizeof(pmr_impl_debug_resource_header) + PMR_IMPL_DEBUG_RESOURCE_GUARD,
      a);
}

/* Writes e's header and front guard. */
void pmr_impl_debug_resource_write_front(const pmr_impl_ptr_entry *e);

/* ---- checks and reports (debug_resource_check.c) ---- */

/* Reports a misuse through pmr_report_misuse, naming the resource, and
 * counts it. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 2, 3)))
#endif
void pmr_impl_debug_resource_report(pmr_impl_debug_resource_state *s, const char *format, ...);

/* Checks (and, once reported, restores) the header and guards of e and, in
 * quarantine, its freed fill. Returns the number of problems. */
size_t pmr_impl_debug_resource_check_block(pmr_impl_debug_resource_state *s,
                                           const pmr_impl_ptr_entry *e,
                                           const char *found);

/* The block p names if it is live with these sizes; otherwise reports the
 * misuse of the deallocation (freeing) or try_resize and returns NULL. */
pmr_impl_ptr_entry *pmr_impl_debug_resource_validate(
    pmr_impl_debug_resource_state *s, void *p, size_t bytes, size_t alignment,
    bool freeing);

/* The table's entry for user pointer p, or NULL. */
static inline pmr_impl_ptr_entry *pmr_impl_debug_resource_table_find(
    pmr_impl_debug_resource_state *s, const void *p) {
  return pmr_impl_ptr_table_find(&s->table, p);
}

/* ---- freeing and the quarantine (debug_resource_free.c) ---- */

/* Gives e's memory to upstream (nothing else: no record changes). */
void pmr_impl_debug_resource_upstream_free(pmr_impl_debug_resource_state *s,
                                           const pmr_impl_ptr_entry *e);

/* A deallocation accepted: counts, then quarantine (or upstream at once).
 * Returns the number of problems found in e. */
size_t pmr_impl_debug_resource_free_block(pmr_impl_debug_resource_state *s,
                                          pmr_impl_ptr_entry *e);

/* Checks every quarantined block and gives it to upstream; returns the
 * number of problems found. */
size_t pmr_impl_debug_resource_flush_locked(pmr_impl_debug_resource_state *s);

/* Frees a ring's items; it is empty after. */
void pmr_impl_debug_resource_ring_free(pmr_impl_debug_resource_ring *r);

#endif
