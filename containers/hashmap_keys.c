/* pmr_hashmap: lookup, insertion and erasure by a key pointer (find,
 * insert, emplace, erase, ...), for maps whose slots hold their keys (plain
 * bytes, 8-byte, C-string and custom keys); a string map's pmr_string key is
 * handed to hashmap_str.c. The built-in hashes (pmr_hash_bytes, ...). */
#include <errno.h>
#include <string.h>

#include "containers/internal/hashmap_impl.h"
#include "containers/pmr_hashmap.h"
#include "containers/pmr_string.h"

#define NPOS PMR_IMPL_HASHMAP_NPOS
#define KIND_U64 PMR_IMPL_HASHMAP_KIND_U64

#define U64_ON_OTHER_SIZE "an 8-byte key on a map of keys of another size"

/* ---- Hashing ---------------------------------------------------------- */

uint64_t pmr_hash_bytes_with_seed(const void *data, size_t n, uint64_t seed) {
  uint64_t s0, s1;
  pmr_impl_hash_keys(seed, &s0, &s1);
  return pmr_impl_hash_bytes(data, n, s0, s1);
}
uint64_t pmr_hash_u64_with_seed(uint64_t x, uint64_t seed) {
  uint64_t s0, s1;
  pmr_impl_hash_keys(seed, &s0, &s1);
  return pmr_impl_hash_u64(x, s0, s1);
}
uint64_t pmr_hash_bytes(const void *data, size_t n) {
  return pmr_hash_bytes_with_seed(data, n, pmr_impl_hash_process_seed());
}
uint64_t pmr_hash_u64(uint64_t x) {
  return pmr_hash_u64_with_seed(x, pmr_impl_hash_process_seed());
}

/* ---- Probing ---------------------------------------------------------- */

/* The slot of *key in a map of plain-byte, cstr or custom keys, or NPOS;
 * *hp gets its hash and *empty what the probe gives. The kind is decided
 * here, once: each case has its own hash and its own probe loop. Out of
 * line, and kept apart from the u64 case (locate): when the u64 case lives
 * in the same switch, the compiler calls the switch even on the u64 paths. */
static PMR_NOINLINE size_t locate_other(const pmr_hashmap *m, const void *key,
                                        uint64_t *hp, size_t *empty) {
  switch (m->kind) {
    case PMR_IMPL_HASHMAP_KIND_CSTR: {
      const char *s = pmr_impl_hashmap_load_cstr(key);
      if (s != NULL)
        return pmr_impl_hashmap_cstr_locate(m, s, strlen(s), hp, empty);
      *hp = pmr_impl_hashmap_hash_k64(m, 0); /* the NULL key */
      return pmr_impl_hashmap_probe(m, *hp, PMR_IMPL_HASHMAP_BY_NULL_CSTR, key,
                                    NULL, 0, empty);
    }
    case PMR_IMPL_HASHMAP_KIND_CUSTOM:
      *hp = m->hash != NULL ? m->hash(key, m->ctx)
                            : pmr_impl_hashmap_hash_of(m, key, m->key_size);
      if (m->equal != NULL)
        return pmr_impl_hashmap_probe(m, *hp, PMR_IMPL_HASHMAP_BY_CUSTOM, key,
                                      NULL, 0, empty);
      break;
    default:
      *hp = pmr_impl_hashmap_hash_of(m, key, m->key_size);
      break;
  }
  return pmr_impl_hashmap_probe(m, *hp, PMR_IMPL_HASHMAP_BY_BYTES, key, NULL, 0,
                                empty);
}

/* The slot of *key in a map of any kind but string, or NPOS; *hp and *empty
 * as locate_other. */
static inline size_t locate(const pmr_hashmap *m, const void *key, uint64_t *hp,
                            size_t *empty) {
  if (m->kind == KIND_U64) {
    const uint64_t k = pmr_impl_hashmap_load_u64(key);
    *hp = pmr_impl_hashmap_hash_k64(m, k);
    return pmr_impl_hashmap_probe_u64(m->ctrl, m->slots, m->slot_size, m->mask,
                                      k, *hp, empty);
  }
  return locate_other(m, key, hp, empty);
}

/* The slot holding *key, or NPOS; not for string maps. */
static inline size_t find_index(const pmr_hashmap *m, const void *key) {
  uint64_t h;
  size_t empty;
  return locate(m, key, &h, &empty);
}

/* ---- Misuse ----------------------------------------------------------- */

PMR_NOINLINE void pmr_impl_hashmap_report_bad_key(const pmr_hashmap *m,
                                                  const char *op,
                                                  const char *why) {
#ifdef PMR_DEBUG
  pmr_report_misuse("hashmap %p: %s with %s; ignored", (const void *)m, op,
                    why);
#else
  (void)m;
  (void)op;
  (void)why;
#endif
}

PMR_NOINLINE pmr_hashmap_status pmr_impl_hashmap_bad_key(const pmr_hashmap *m,
                                                         const char *op,
                                                         const char *why) {
  pmr_impl_hashmap_report_bad_key(m, op, why);
  errno = EINVAL;
  return PMR_HASHMAP_BADARG;
}

/* A NULL key pointer: a caller error (see the header), caught by debug
 * builds only (the lookups stay lean). */
#ifdef PMR_DEBUG
static bool null_key(const pmr_hashmap *m, const void *key, const char *op) {
  if (key != NULL) return false;
  pmr_report_misuse("hashmap %p: %s with a NULL key pointer; ignored",
                    (const void *)m, op);
  return true;
}
#define NULL_KEY(m, key, op, ret)  \
  do {                             \
    if (null_key(m, key, op)) ret; \
  } while (0)
/* What the insertions return for it (see PMR_HASHMAP_BADARG). */
#define BADARG_EINVAL (errno = EINVAL, PMR_HASHMAP_BADARG)
#else
#define NULL_KEY(m, key, op, ret) ((void)0)
#endif

/* ---- Lookup ----------------------------------------------------------- */

void *pmr_hashmap_find(const pmr_hashmap *m, const void *key) {
  PMR_IMPL_CHECK_NOT_NULL(m, "map", NULL);
  NULL_KEY(m, key, "find", return NULL);
  if (m->kind == PMR_IMPL_HASHMAP_KIND_STRING) {
    const pmr_string *s = (const pmr_string *)key;
    return pmr_impl_hashmap_str_find(m, pmr_string_c_str(s),
                                     pmr_string_length(s));
  }
  size_t i = find_index(m, key);
  return i != NPOS ? pmr_impl_hashmap_slot(m, i) + m->value_offset : NULL;
}

void *pmr_impl_hashmap_find_u64_other(const pmr_hashmap *m, uint64_t k) {
  if (m->key_size == sizeof k) return pmr_hashmap_find(m, &k);
  pmr_impl_hashmap_report_bad_key(m, "find_u64", U64_ON_OTHER_SIZE);
  return NULL;
}

pmr_hashmap_status pmr_impl_hashmap_insert_u64_other(pmr_hashmap *m, uint64_t k,
                                                     const void *value,
                                                     void **value_out) {
  if (m->key_size == sizeof k)
    return pmr_hashmap_insert(m, &k, value, value_out);
  if (value_out != NULL) *value_out = NULL;
  return pmr_impl_hashmap_bad_key(m, "insert_u64", U64_ON_OTHER_SIZE);
}

bool pmr_impl_hashmap_erase_u64_other(pmr_hashmap *m, uint64_t k) {
  if (m->key_size == sizeof k) return pmr_hashmap_erase(m, &k, NULL);
  pmr_impl_hashmap_report_bad_key(m, "erase_u64", U64_ON_OTHER_SIZE);
  return false;
}

bool pmr_hashmap_contains(const pmr_hashmap *m, const void *key) {
  PMR_IMPL_CHECK_NOT_NULL(m, "map", false);
  return pmr_hashmap_find(m, key) != NULL;
}

const void *pmr_hashmap_find_key(const pmr_hashmap *m, const void *key) {
  PMR_IMPL_CHECK_NOT_NULL(m, "map", NULL);
  NULL_KEY(m, key, "find_key", return NULL);
  if (m->kind == PMR_IMPL_HASHMAP_KIND_STRING) {
    const pmr_string *s = (const pmr_string *)key;
    const size_t n = pmr_string_length(s);
    const unsigned char *r =
        pmr_impl_hashmap_str_find(m, pmr_string_c_str(s), n);
    if (r == NULL) return NULL;
    /* The view is the map's, written under the one-thread-at-a-time rule. */
    pmr_string *view = &((pmr_hashmap *)(uintptr_t)m)->key_view;
    pmr_impl_string_view(view, pmr_impl_hashmap_rec_text(m, r), n, m->resource);
    return view;
  }
  size_t i = find_index(m, key);
  return i != NPOS ? pmr_impl_hashmap_slot(m, i) : NULL;
}

/* ---- Insertion -------------------------------------------------------- */

unsigned char *pmr_impl_hashmap_insert_new(pmr_hashmap *m, uint64_t h,
                                           size_t empty, const void *key,
                                           const void *value) {
  pmr_impl_hashmap_old_table old = {NULL, 0};
  size_t i = pmr_impl_hashmap_has_tombstones(m)
                 ? pmr_impl_hashmap_find_free(m, h)
                 : empty;
  if (m->growth_left == 0 && m->ctrl[i] != PMR_IMPL_HASHMAP_DELETED) {
    size_t c = pmr_impl_hashmap_capacity_to_grow(m);
    if (c == 0 || !pmr_impl_hashmap_rebuild(m, c, &old)) return NULL;
    i = pmr_impl_hashmap_find_free(m, h);
  }
  if (m->ctrl[i] == PMR_IMPL_HASHMAP_EMPTY) --m->growth_left;
  pmr_impl_hashmap_set_ctrl(m->ctrl, m->mask, i, pmr_impl_hashmap_h2(h));
  unsigned char *slot = pmr_impl_hashmap_slot(m, i);
  pmr_impl_hashmap_copy_bytes(slot, key, m->key_size);
  /* may read the old table */
  pmr_impl_hashmap_store_value(m, slot + m->value_offset, value);
  ++m->size;
  pmr_impl_hashmap_free_table(m, old);
  return slot + m->value_offset;
}

/* Finds or adds the key (with *value, NULL: zeros) in a map of any kind but
 * string; *vout gets its value (NULL on failure). With assign, an existing
 * value is overwritten. */
static pmr_hashmap_status insert_impl(pmr_hashmap *m, const void *key,
                                      const void *value, bool assign,
                                      void **vout) {
  /* One probe finds the key or, when the table has no tombstones, the slot
   * a new key goes to: the first EMPTY of the group where the probe ends
   * (every earlier group on the sequence is full). */
  uint64_t h;
  size_t empty = NPOS;
  size_t i = locate(m, key, &h, &empty);
  if (i != NPOS) {
    unsigned char *v = pmr_impl_hashmap_slot(m, i) + m->value_offset;
    if (assign) pmr_impl_hashmap_store_value(m, v, value);
    *vout = v;
    return PMR_HASHMAP_EXISTED;
  }
  *vout = pmr_impl_hashmap_insert_new(m, h, empty, key, value);
  return *vout != NULL ? PMR_HASHMAP_INSERTED : PMR_HASHMAP_NOMEM;
}

/* Insertion of *key, dispatched once on the kind. */
static pmr_hashmap_status insert_key(pmr_hashmap *m, const void *key,
                                     const void *value, bool assign,
                                     void **vout) {
  if (m->kind == PMR_IMPL_HASHMAP_KIND_STRING) {
    const pmr_string *s = (const pmr_string *)key;
    return pmr_impl_hashmap_str_insert(
        m, pmr_string_c_str(s), pmr_string_length(s), value, assign, vout);
  }
  return insert_impl(m, key, value, assign, vout);
}

pmr_hashmap_status pmr_hashmap_insert(pmr_hashmap *m, const void *key,
                                      const void *value, void **value_out) {
  PMR_IMPL_CHECK_NOT_NULL(m, "map", PMR_HASHMAP_BADARG);
  if (value_out != NULL) *value_out = NULL;
  NULL_KEY(m, key, "insert", return BADARG_EINVAL);
  void *v;
  pmr_hashmap_status st = insert_key(m, key, value, false, &v);
  if (value_out != NULL) *value_out = v;
  return st;
}

pmr_hashmap_status pmr_hashmap_insert_or_assign(pmr_hashmap *m, const void *key,
                                                const void *value) {
  PMR_IMPL_CHECK_NOT_NULL(m, "map", PMR_HASHMAP_BADARG);
  NULL_KEY(m, key, "insert_or_assign", return BADARG_EINVAL);
  void *v;
  return insert_key(m, key, value, true, &v);
}

void *pmr_hashmap_emplace(pmr_hashmap *m, const void *key, bool *inserted) {
  PMR_IMPL_CHECK_NOT_NULL(m, "map", NULL);
  if (inserted != NULL) *inserted = false;
  NULL_KEY(m, key, "emplace", return (errno = EINVAL, (void *)NULL));
  void *v;
  pmr_hashmap_status st = insert_key(m, key, NULL, false, &v);
  if (inserted != NULL) *inserted = st == PMR_HASHMAP_INSERTED;
  return v;
}

/* ---- Erasure ---------------------------------------------------------- */

bool pmr_hashmap_erase(pmr_hashmap *m, const void *key, void *value_out) {
  PMR_IMPL_CHECK_NOT_NULL(m, "map", false);
  NULL_KEY(m, key, "erase", return false);
  if (m->kind == PMR_IMPL_HASHMAP_KIND_STRING) {
    const pmr_string *s = (const pmr_string *)key;
    return pmr_impl_hashmap_str_erase(m, pmr_string_c_str(s),
                                      pmr_string_length(s), value_out);
  }
  return pmr_impl_hashmap_erase_index(m, find_index(m, key), value_out);
}
