/* PRIVATE: a table from block addresses to what a checker knows of each
 * block, shared by the pools' debug builds (debug_track.c) and the debug
 * resource. Open addressing with linear probing and backward-shift deletion,
 * at most half full; slots come from libc's calloc, never from a resource's
 * upstream, so upstream accounting is the same with checks on or off. A
 * zeroed table is empty and valid. Not thread-safe. */
#ifndef PMR_IMPL_PTR_TABLE_H
#define PMR_IMPL_PTR_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  unsigned char *p; /* the block; NULL: an empty slot */
  uint64_t serial;  /* the owner's (the debug resource numbers its blocks) */
  size_t bytes, alignment;
  int state; /* the owner's: live, freed, ... */
} pmr_impl_ptr_entry;

typedef struct {
  pmr_impl_ptr_entry *slots; /* NULL until the first reserve */
  size_t cap, count;         /* cap: 0 or a power of two */
  unsigned shift;            /* cap == 2^(64 - shift): a slot is a hash's top */
} pmr_impl_ptr_table;

static inline size_t pmr_impl_ptr_slot(const pmr_impl_ptr_table *t,
                                       const void *p) {
  return (size_t)(((uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15ull) >> t->shift);
}

/* The entry of p, or NULL. */
static inline pmr_impl_ptr_entry *pmr_impl_ptr_table_find(
    const pmr_impl_ptr_table *t, const void *p) {
  if (t->slots == NULL) return NULL;
  const size_t mask = t->cap - 1;
  for (size_t i = pmr_impl_ptr_slot(t, p);; i = (i + 1) & mask) {
    if (t->slots[i].p == p) return &t->slots[i];
    if (t->slots[i].p == NULL) return NULL;
  }
}

/* Adds *e, replacing the entry of the same address if there is one. Needs
 * room: a successful pmr_impl_ptr_table_reserve first. */
static inline void pmr_impl_ptr_table_put(pmr_impl_ptr_table *t,
                                          const pmr_impl_ptr_entry *e) {
  const size_t mask = t->cap - 1;
  size_t i = pmr_impl_ptr_slot(t, e->p);
  while (t->slots[i].p != NULL && t->slots[i].p != e->p) i = (i + 1) & mask;
  if (t->slots[i].p == NULL) ++t->count;
  t->slots[i] = *e;
}

/* Makes room for one more entry (the first time, first_cap slots, a power of
 * two). False when out of memory; t is then unchanged. */
static inline bool pmr_impl_ptr_table_reserve(pmr_impl_ptr_table *t,
                                              size_t first_cap) {
  if (t->slots != NULL && (t->count + 1) * 2 <= t->cap) return true;
  const size_t old_cap = t->cap, cap = old_cap == 0 ? first_cap : old_cap * 2;
  if (cap > SIZE_MAX / sizeof(pmr_impl_ptr_entry)) return false;
  pmr_impl_ptr_entry *slots =
      (pmr_impl_ptr_entry *)calloc(cap, sizeof(pmr_impl_ptr_entry));
  if (slots == NULL) return false;
  pmr_impl_ptr_entry *old = t->slots;
  unsigned shift = 64;
  for (size_t c = cap; c > 1; c >>= 1) --shift;
  t->slots = slots;
  t->cap = cap;
  t->shift = shift;
  t->count = 0;
  for (size_t i = 0; i < old_cap; ++i)
    if (old[i].p != NULL) pmr_impl_ptr_table_put(t, &old[i]);
  free(old);
  return true;
}

/* Removes *e, an entry of t; later entries of its probe run move back, so
 * pointers into the table are invalid afterwards. */
static inline void pmr_impl_ptr_table_remove(pmr_impl_ptr_table *t,
                                             pmr_impl_ptr_entry *e) {
  const size_t mask = t->cap - 1;
  size_t hole = (size_t)(e - t->slots);
  for (size_t j = (hole + 1) & mask; t->slots[j].p != NULL;
       j = (j + 1) & mask) {
    const size_t home = pmr_impl_ptr_slot(t, t->slots[j].p);
    if (((j - home) & mask) >= ((j - hole) & mask)) {
      t->slots[hole] = t->slots[j];
      hole = j;
    }
  }
  t->slots[hole].p = NULL;
  --t->count;
}

/* Forgets every entry, keeping the slots. */
static inline void pmr_impl_ptr_table_clear(pmr_impl_ptr_table *t) {
  if (t->slots != NULL) memset(t->slots, 0, t->cap * sizeof *t->slots);
  t->count = 0;
}

/* Frees the slots; t is then empty (zeroed). */
static inline void pmr_impl_ptr_table_free(pmr_impl_ptr_table *t) {
  free(t->slots);
  memset(t, 0, sizeof *t);
}

#endif /* PMR_IMPL_PTR_TABLE_H */
