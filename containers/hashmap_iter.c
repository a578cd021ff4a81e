/* pmr_hashmap: iteration, and erasing the key an iterator stands on. A walk
 * goes through the table's slots in order, or, in a string map, through the
 * records in order (the key a pmr_string view of the record's text). */
#include <string.h>

#include "containers/internal/hashmap_impl.h"
#include "containers/pmr_hashmap.h"
#include "containers/pmr_string.h"

#define GROUP PMR_IMPL_HASHMAP_GROUP
#define NPOS PMR_IMPL_HASHMAP_NPOS
#define REC_DEAD PMR_IMPL_HASHMAP_REC_DEAD

pmr_hashmap_iter pmr_hashmap_iter_begin(pmr_hashmap *m) {
  pmr_hashmap_iter it;
  memset(&it, 0, sizeof it);
  PMR_IMPL_CHECK_NOT_NULL(m, "map", it);
  it.impl_map = m;
  return it;
}

/* A string map's walk goes through the records in order: impl_next is the
 * chunk, impl_off the offset of the next record in it. */
static bool str_iter_next(pmr_hashmap_iter *it) {
  const pmr_hashmap *m = it->impl_map;
  size_t k = it->impl_next, off = it->impl_off;
  for (; k < m->nchunks; ++k, off = 0) {
    const pmr_impl_hashmap_chunk *ch = &m->chunks[k];
    while (off < ch->used) {
      unsigned char *r = ch->base + off;
      const uint32_t w = pmr_impl_hashmap_rec_word(m, r);
      off += pmr_impl_hashmap_rec_bytes(m, w & ~REC_DEAD);
      if (w & REC_DEAD) continue;
      it->impl_next = k;
      it->impl_off = off;
      pmr_impl_string_view(&it->impl_key, pmr_impl_hashmap_rec_text(m, r), w,
                           m->resource);
      it->key = &it->impl_key;
      it->value = r;
      return true;
    }
  }
  it->impl_next = m->nchunks;
  it->impl_off = 0;
  it->key = NULL;
  it->value = NULL;
  return false;
}

/* Erases the record the walk stands on (its value is it->value). */
static void str_iter_erase(pmr_hashmap_iter *it) {
  pmr_hashmap *m = it->impl_map;
  const unsigned char *r = it->value;
  if (r == NULL || it->key != &it->impl_key) return;
  const uint32_t w = pmr_impl_hashmap_rec_word(m, r);
  if (w & REC_DEAD) return;
  uint64_t h;
  size_t empty;
  const size_t i = pmr_impl_hashmap_str_locate(
      m, pmr_impl_hashmap_rec_text(m, r), w, &h, &empty);
  if (i == NPOS || pmr_impl_hashmap_slot_rec(m, i) != r) return;
  pmr_impl_hashmap_str_erase_at(m, i);
}

bool pmr_hashmap_iter_next(pmr_hashmap_iter *it) {
  PMR_IMPL_CHECK_NOT_NULL(it, "iterator", false);
#ifdef PMR_DEBUG
  if (it->impl_map == NULL) return false; /* from a NULL map, reported */
#endif
  const pmr_hashmap *m = it->impl_map;
  if (m->kind == PMR_IMPL_HASHMAP_KIND_STRING) return str_iter_next(it);
  size_t i = it->impl_next;
  /* Skip whole groups with no full slot. */
  while (i + GROUP <= m->capacity &&
         pmr_impl_hashmap_match_free(m->ctrl + i) == 0xFFFFu)
    i += GROUP;
  while (i < m->capacity && !pmr_impl_hashmap_is_full(m->ctrl[i])) ++i;
  if (i >= m->capacity) {
    it->impl_next = m->capacity;
    it->key = NULL;
    it->value = NULL;
    return false;
  }
  it->impl_next = i + 1;
  it->key = pmr_impl_hashmap_slot(m, i);
  it->value = pmr_impl_hashmap_slot(m, i) + m->value_offset;
  return true;
}

void pmr_hashmap_iter_erase(pmr_hashmap_iter *it) {
  PMR_IMPL_CHECK_NOT_NULL(it, "iterator", );
#ifdef PMR_DEBUG
  if (it->impl_map == NULL) return; /* from a NULL map, reported */
#endif
  pmr_hashmap *m = it->impl_map;
  if (m->kind == PMR_IMPL_HASHMAP_KIND_STRING) {
    str_iter_erase(it);
    it->key = NULL;
    it->value = NULL;
    return;
  }
  if (it->impl_next == 0 || it->impl_next > m->capacity) return;
  size_t i = it->impl_next - 1;
  if (!pmr_impl_hashmap_is_full(m->ctrl[i]) ||
      it->key != pmr_impl_hashmap_slot(m, i))
    return;
  pmr_impl_hashmap_erase_at(m, i);
  it->key = NULL;
  it->value = NULL;
}
