/* pmr_hashmap: see pmr_hashmap.h. This file: a map's life (init, the
 * accessors, clear, copies, moves, swap, destroy). The other files of the
 * map, one concern each, and what they share: internal/hashmap_impl.h. */
#include "containers/pmr_hashmap.h"

#include <string.h>

#include "containers/internal/hash.h"
#include "containers/internal/hashmap_impl.h"

#define KIND_BYTES PMR_IMPL_HASHMAP_KIND_BYTES
#define KIND_U64 PMR_IMPL_HASHMAP_KIND_U64
#define KIND_CSTR PMR_IMPL_HASHMAP_KIND_CSTR
#define KIND_STRING PMR_IMPL_HASHMAP_KIND_STRING
#define KIND_CUSTOM PMR_IMPL_HASHMAP_KIND_CUSTOM
#define GROUP PMR_IMPL_HASHMAP_GROUP

_Static_assert(KIND_U64 != KIND_BYTES && KIND_U64 != KIND_CSTR &&
                   KIND_U64 != KIND_STRING && KIND_U64 != KIND_CUSTOM,
               "the inline lookup's kind");

/* ---- Init and destroy ------------------------------------------------- */

static bool configure(pmr_hashmap *m, int kind, size_t key_size,
                      size_t key_align, size_t value_size, size_t value_align,
                      pmr_mem_resource *r) {
  if (m == NULL || key_size == 0 || !pmr_is_pow2(key_align) ||
      !pmr_is_pow2(value_align) || key_size % key_align != 0 ||
      value_size % value_align != 0 || key_size > (size_t)PTRDIFF_MAX / 4 ||
      value_size > (size_t)PTRDIFF_MAX / 4 ||
      value_align > (size_t)PTRDIFF_MAX / 4)
    return false;
  size_t slot_align = key_align > value_align ? key_align : value_align;
  size_t value_offset = pmr_impl_round_up(key_size, value_align);
  size_t slot_size = pmr_impl_round_up(value_offset + value_size, slot_align);
  if (kind == KIND_BYTES && key_size == sizeof(uint64_t)) kind = KIND_U64;
  if (kind == KIND_STRING) {
    /* A slot is a record's reference; value_offset is where the record's
     * length word sits (rec_hdr). */
    value_offset = pmr_impl_round_up(value_size, 4);
    slot_size = slot_align = sizeof(uint32_t);
  }
  m->key_size = key_size;
  m->key_align = key_align;
  m->value_size = value_size;
  m->value_align = value_align;
  m->value_offset = value_offset;
  m->slot_size = slot_size;
  m->slot_align = slot_align;
  m->kind = kind;
  m->hash = NULL;
  m->equal = NULL;
  m->ctx = NULL;
  m->resource = pmr_resource_or_default(r);
  pmr_impl_hash_keys(pmr_impl_hash_table_seed(), &m->seed0, &m->seed1);
  pmr_impl_hashmap_set_empty_table(m);
  pmr_impl_hashmap_set_no_records(m);
  return true;
}

bool pmr_hashmap_init(pmr_hashmap *m, size_t key_size, size_t key_align,
                      size_t value_size, size_t value_align,
                      pmr_mem_resource *r) {
  PMR_IMPL_CHECK_NOT_NULL(m, "map", false);
  return configure(m, KIND_BYTES, key_size, key_align, value_size, value_align,
                   r);
}

bool pmr_hashmap_init_cstr(pmr_hashmap *m, size_t value_size,
                           size_t value_align, pmr_mem_resource *r) {
  PMR_IMPL_CHECK_NOT_NULL(m, "map", false);
  return configure(m, KIND_CSTR, sizeof(const char *), _Alignof(const char *),
                   value_size, value_align, r);
}

bool pmr_hashmap_init_string(pmr_hashmap *m, size_t value_size,
                             size_t value_align, pmr_mem_resource *r) {
  PMR_IMPL_CHECK_NOT_NULL(m, "map", false);
  return configure(m, KIND_STRING, sizeof(uint32_t), _Alignof(uint32_t),
                   value_size, value_align, r);
}

bool pmr_hashmap_init_custom(pmr_hashmap *m, size_t key_size, size_t key_align,
                             size_t value_size, size_t value_align,
                             pmr_hashmap_hash_fn hash,
                             pmr_hashmap_equal_fn equal, void *ctx,
                             pmr_mem_resource *r) {
  PMR_IMPL_CHECK_NOT_NULL(m, "map", false);
  if (!configure(m, KIND_CUSTOM, key_size, key_align, value_size, value_align,
                 r))
    return false;
  m->hash = hash;
  m->equal = equal;
  m->ctx = ctx;
  return true;
}

void pmr_hashmap_destroy(pmr_hashmap *m) {
  PMR_IMPL_CHECK_NOT_NULL(m, "map", );
  if (m->kind == KIND_STRING) pmr_impl_hashmap_str_release_records(m);
  pmr_impl_hashmap_free_table(m, pmr_impl_hashmap_current_table(m));
  pmr_impl_hashmap_set_empty_table(m);
}

bool pmr_hashmap_set_seed(pmr_hashmap *m, uint64_t seed) {
  PMR_IMPL_CHECK_NOT_NULL(m, "map", false);
  if (m->size != 0) return false;
  pmr_impl_hash_keys(seed, &m->seed0, &m->seed1);
  pmr_hashmap_clear(m); /* tombstones placed under the old keys */
  return true;
}

pmr_mem_resource *pmr_hashmap_resource(const pmr_hashmap *m) {
  PMR_IMPL_CHECK_NOT_NULL(m, "map", NULL);
  return m->resource;
}
size_t pmr_hashmap_size(const pmr_hashmap *m) {
  PMR_IMPL_CHECK_NOT_NULL(m, "map", 0);
  return m->size;
}
bool pmr_hashmap_empty(const pmr_hashmap *m) {
  PMR_IMPL_CHECK_NOT_NULL(m, "map", true);
  return m->size == 0;
}
size_t pmr_hashmap_capacity(const pmr_hashmap *m) {
  PMR_IMPL_CHECK_NOT_NULL(m, "map", 0);
  return m->capacity;
}

void pmr_hashmap_clear(pmr_hashmap *m) {
  PMR_IMPL_CHECK_NOT_NULL(m, "map", );
  if (m->capacity == 0) return;
  if (m->kind == KIND_STRING) pmr_impl_hashmap_str_release_records(m);
  memset(m->ctrl, PMR_IMPL_HASHMAP_EMPTY, m->capacity + GROUP);
  m->size = 0;
  m->growth_left = pmr_impl_hashmap_max_load(m->capacity);
}

/* ---- Copies, moves, swap ---------------------------------------------- */

static bool same_config(const pmr_hashmap *a, const pmr_hashmap *b) {
  return a->kind == b->kind && a->key_size == b->key_size &&
         a->key_align == b->key_align && a->value_size == b->value_size &&
         a->value_align == b->value_align && a->hash == b->hash &&
         a->equal == b->equal && a->ctx == b->ctx;
}

bool pmr_hashmap_init_copy(pmr_hashmap *dst, const pmr_hashmap *src,
                           pmr_mem_resource *r) {
  PMR_IMPL_CHECK_NOT_NULL(dst, "map", false);
  PMR_IMPL_CHECK_NOT_NULL(src, "map", false);
  *dst = *src;
  dst->resource = pmr_resource_or_default(r);
  pmr_impl_hashmap_set_empty_table(dst);
  pmr_impl_hashmap_set_no_records(dst);
  if (src->capacity == 0) return true;
  if (src->kind == KIND_STRING) return pmr_impl_hashmap_str_copy(dst, src);
  const size_t bytes = pmr_impl_hashmap_table_bytes(src, src->capacity);
  unsigned char *block = pmr_allocate(dst->resource, bytes, src->slot_align);
  if (block == NULL) return false;
  const size_t off = pmr_impl_hashmap_slots_offset(src, src->capacity);
  memcpy(block, src->ctrl, src->capacity + GROUP);
  unsigned char *slots = block + off;
  for (size_t i = 0; i < src->capacity; ++i) {
    if (!pmr_impl_hashmap_is_full(src->ctrl[i])) continue;
    unsigned char *d = slots + i * src->slot_size;
    const unsigned char *s = pmr_impl_hashmap_slot(src, i);
    memcpy(d, s, src->slot_size);
  }
  dst->ctrl = block;
  dst->slots = slots;
  dst->mask = src->mask;
  dst->capacity = src->capacity;
  dst->size = src->size;
  dst->growth_left = src->growth_left;
  return true;
}

void pmr_hashmap_init_move(pmr_hashmap *dst, pmr_hashmap *src) {
  PMR_IMPL_CHECK_NOT_NULL(dst, "map", );
  PMR_IMPL_CHECK_NOT_NULL(src, "map", );
  *dst = *src;
  pmr_impl_hashmap_set_empty_table(src);
  pmr_impl_hashmap_set_no_records(src);
}

bool pmr_hashmap_copy_assign(pmr_hashmap *dst, const pmr_hashmap *src) {
  PMR_IMPL_CHECK_NOT_NULL(dst, "map", false);
  PMR_IMPL_CHECK_NOT_NULL(src, "map", false);
  if (dst == src) return true;
  if (!same_config(dst, src)) return false;
  pmr_hashmap t;
  if (!pmr_hashmap_init_copy(&t, src, dst->resource)) return false;
  pmr_hashmap_destroy(dst);
  *dst = t;
  return true;
}

bool pmr_hashmap_move_assign(pmr_hashmap *dst, pmr_hashmap *src) {
  PMR_IMPL_CHECK_NOT_NULL(dst, "map", false);
  PMR_IMPL_CHECK_NOT_NULL(src, "map", false);
  if (dst == src) return true;
  if (!same_config(dst, src)) return false;
  if (pmr_is_equal(src->resource, dst->resource)) {
    pmr_hashmap_destroy(dst);
    pmr_mem_resource *r = dst->resource;
    *dst = *src;
    dst->resource = r;
    pmr_impl_hashmap_set_empty_table(src);
    pmr_impl_hashmap_set_no_records(src);
    return true;
  }
  if (!pmr_hashmap_copy_assign(dst, src)) return false;
  pmr_hashmap_destroy(src);
  return true;
}

void pmr_hashmap_swap(pmr_hashmap *a, pmr_hashmap *b) {
  PMR_IMPL_CHECK_NOT_NULL(a, "map", );
  PMR_IMPL_CHECK_NOT_NULL(b, "map", );
  pmr_hashmap t = *a;
  *a = *b;
  *b = t;
}
