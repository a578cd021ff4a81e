/* Open addressing, linear probing, backward-shift deletion. */
#include "resources/internal/debug_track.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const void *p; /* NULL: empty */
  size_t bytes, alignment;
  bool freed;
} entry;

struct pmr_impl_track {
  entry *slots;
  size_t cap, count; /* cap: a power of two */
};

static size_t slot_of(const pmr_impl_track *t, const void *p) {
  uint64_t h = (uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15ull;
  return (size_t)(h >> 20) & (t->cap - 1);
}

pmr_impl_track *pmr_impl_track_new(void) {
  pmr_impl_track *t = (pmr_impl_track *)malloc(sizeof *t);
  if (t == NULL) return NULL;
  t->cap = 1024;
  t->count = 0;
  t->slots = (entry *)calloc(t->cap, sizeof(entry));
  if (t->slots == NULL) {
    free(t);
    return NULL;
  }
  return t;
}

void pmr_impl_track_delete(pmr_impl_track *t) {
  if (t == NULL) return;
  free(t->slots);
  free(t);
}

void pmr_impl_track_clear(pmr_impl_track *t) {
  if (t == NULL) return;
  memset(t->slots, 0, t->cap * sizeof(entry));
  t->count = 0;
}

static void put(pmr_impl_track *t, entry e) {
  size_t i = slot_of(t, e.p);
  while (t->slots[i].p != NULL && t->slots[i].p != e.p)
    i = (i + 1) & (t->cap - 1);
  if (t->slots[i].p == NULL) ++t->count;
  t->slots[i] = e;
}

void pmr_impl_track_add(pmr_impl_track *t, const void *p, size_t bytes,
                        size_t alignment) {
  if (t == NULL) return;
  if ((t->count + 1) * 2 > t->cap) {
    entry *old = t->slots;
    size_t old_cap = t->cap;
    entry *grown = (entry *)calloc(old_cap * 2, sizeof(entry));
    if (grown == NULL) return; /* out of memory: stop tracking this block */
    t->slots = grown;
    t->cap = old_cap * 2;
    t->count = 0;
    for (size_t i = 0; i < old_cap; ++i)
      if (old[i].p != NULL) put(t, old[i]);
    free(old);
  }
  entry e = {p, bytes, alignment, false};
  put(t, e);
}

int pmr_impl_track_remove(pmr_impl_track *t, const void *p, size_t bytes,
                          size_t alignment, bool keep_freed, size_t *bytes_out,
                          size_t *alignment_out) {
  if (t == NULL) return PMR_IMPL_TRACK_OK;
  size_t mask = t->cap - 1, i = slot_of(t, p);
  while (t->slots[i].p != NULL && t->slots[i].p != p) i = (i + 1) & mask;
  if (t->slots[i].p == NULL) return PMR_IMPL_TRACK_UNKNOWN;
  if (t->slots[i].freed) return PMR_IMPL_TRACK_DOUBLE_FREE;
  if (t->slots[i].bytes != bytes || t->slots[i].alignment != alignment) {
    *bytes_out = t->slots[i].bytes;
    *alignment_out = t->slots[i].alignment;
    return PMR_IMPL_TRACK_MISMATCH;
  }
  if (keep_freed) {
    t->slots[i].freed = true;
    return PMR_IMPL_TRACK_OK;
  }
  /* Backward shift: pull later entries of the probe run into the hole. */
  size_t hole = i;
  for (size_t j = (i + 1) & mask; t->slots[j].p != NULL; j = (j + 1) & mask) {
    size_t home = slot_of(t, t->slots[j].p);
    if (((j - home) & mask) >= ((j - hole) & mask)) {
      t->slots[hole] = t->slots[j];
      hole = j;
    }
  }
  t->slots[hole].p = NULL;
  --t->count;
  return PMR_IMPL_TRACK_OK;
}
