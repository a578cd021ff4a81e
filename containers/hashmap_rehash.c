/* pmr_hashmap: the table's block, its sizes, and rebuilding it (growth,
 * reserve, shrink_to_fit, dropping tombstones); probe statistics. The
 * layout of a table: internal/hashmap_impl.h. */
#include <string.h>

#include "containers/internal/hashmap_impl.h"
#include "containers/pmr_hashmap.h"

#define GROUP PMR_IMPL_HASHMAP_GROUP

unsigned char pmr_impl_hashmap_empty_group[GROUP] = {
    PMR_IMPL_HASHMAP_EMPTY, PMR_IMPL_HASHMAP_EMPTY, PMR_IMPL_HASHMAP_EMPTY,
    PMR_IMPL_HASHMAP_EMPTY, PMR_IMPL_HASHMAP_EMPTY, PMR_IMPL_HASHMAP_EMPTY,
    PMR_IMPL_HASHMAP_EMPTY, PMR_IMPL_HASHMAP_EMPTY, PMR_IMPL_HASHMAP_EMPTY,
    PMR_IMPL_HASHMAP_EMPTY, PMR_IMPL_HASHMAP_EMPTY, PMR_IMPL_HASHMAP_EMPTY,
    PMR_IMPL_HASHMAP_EMPTY, PMR_IMPL_HASHMAP_EMPTY, PMR_IMPL_HASHMAP_EMPTY,
    PMR_IMPL_HASHMAP_EMPTY};

/* ---- Tables ----------------------------------------------------------- */

size_t pmr_impl_hashmap_slots_offset(const pmr_hashmap *m, size_t capacity) {
  return pmr_impl_round_up(capacity + GROUP, m->slot_align);
}

size_t pmr_impl_hashmap_table_bytes(const pmr_hashmap *m, size_t capacity) {
  const size_t half = (size_t)PTRDIFF_MAX / 2;
  if (capacity > half - GROUP - m->slot_align || capacity > half / m->slot_size)
    return 0;
  return pmr_impl_hashmap_slots_offset(m, capacity) + capacity * m->slot_size;
}

size_t pmr_impl_hashmap_capacity_for(size_t n) {
  size_t c = PMR_IMPL_HASHMAP_MIN_CAPACITY;
  while (pmr_impl_hashmap_max_load(c) < n) {
    if (c > SIZE_MAX / 4) return 0;
    c *= 2;
  }
  return c;
}

void pmr_impl_hashmap_free_table(const pmr_hashmap *m,
                                 pmr_impl_hashmap_old_table t) {
  if (t.block != NULL)
    pmr_deallocate(m->resource, t.block, t.bytes, m->slot_align);
}

pmr_impl_hashmap_old_table pmr_impl_hashmap_current_table(
    const pmr_hashmap *m) {
  pmr_impl_hashmap_old_table t = {NULL, 0};
  if (m->capacity != 0) {
    t.block = m->ctrl;
    t.bytes = pmr_impl_hashmap_table_bytes(m, m->capacity);
  }
  return t;
}

void pmr_impl_hashmap_set_empty_table(pmr_hashmap *m) {
  m->ctrl = pmr_impl_hashmap_empty_group;
  m->slots = NULL;
  m->mask = 0;
  m->capacity = 0;
  m->size = 0;
  m->growth_left = 0;
}

/* ---- Rebuilding ------------------------------------------------------- */

/* The kind whose hash the stored keys take: a custom map without a hash
 * function hashes its keys as plain bytes. Decided once per rebuild. */
static int hash_kind(const pmr_hashmap *m) {
  if (m->kind == PMR_IMPL_HASHMAP_KIND_CUSTOM && m->hash == NULL)
    return PMR_IMPL_HASHMAP_KIND_BYTES;
  return m->kind;
}

/* The hash of the key in full slot `slot`, for a map whose hash_kind is
 * `kind` (a constant at each call once inlined). */
static PMR_IMPL_HASHMAP_ALWAYS_INLINE uint64_t
slot_hash(const pmr_hashmap *m, const unsigned char *slot, int kind) {
  switch (kind) {
    case PMR_IMPL_HASHMAP_KIND_U64:
      return pmr_impl_hashmap_hash_k64(m, pmr_impl_hashmap_load_u64(slot));
    case PMR_IMPL_HASHMAP_KIND_CSTR: {
      const char *s = pmr_impl_hashmap_load_cstr(slot);
      return s != NULL ? pmr_impl_hashmap_hash_of(m, s, strlen(s))
                       : pmr_impl_hashmap_hash_k64(m, 0);
    }
    case PMR_IMPL_HASHMAP_KIND_CUSTOM:
      return m->hash(slot, m->ctx);
    case PMR_IMPL_HASHMAP_KIND_STRING: {
      const unsigned char *r =
          pmr_impl_hashmap_rec_at(m, pmr_impl_hashmap_load_u32(slot));
      return pmr_impl_hashmap_hash_of(m, pmr_impl_hashmap_rec_text(m, r),
                                      pmr_impl_hashmap_rec_word(m, r));
    }
    default:
      return pmr_impl_hashmap_hash_of(m, slot, m->key_size);
  }
}

/* Copies every full slot of t into m's fresh table (no tombstones, room for
 * all). Full slots are found a group at a time; kind (a constant at each
 * call) lets the compiler inline the key's hash. */
static PMR_IMPL_HASHMAP_ALWAYS_INLINE void move_slots(pmr_hashmap *m,
                                                      const pmr_hashmap *t,
                                                      int kind) {
  for (size_t base = 0; base < t->capacity; base += GROUP) {
    pmr_impl_hashmap_bits full =
        ~pmr_impl_hashmap_match_free(t->ctrl + base) & 0xFFFFu;
    for (; full != 0; full &= full - 1) {
      const unsigned char *src =
          pmr_impl_hashmap_slot(t, base + pmr_impl_hashmap_lowest(full));
      uint64_t h = slot_hash(m, src, kind);
      size_t j = pmr_impl_hashmap_find_free(m, h);
      pmr_impl_hashmap_set_ctrl(m->ctrl, m->mask, j, pmr_impl_hashmap_h2(h));
      pmr_impl_hashmap_copy_bytes(pmr_impl_hashmap_slot(m, j), src,
                                  m->slot_size);
    }
  }
}

bool pmr_impl_hashmap_rebuild(pmr_hashmap *m, size_t new_capacity,
                              pmr_impl_hashmap_old_table *old) {
  size_t bytes =
      new_capacity != 0 ? pmr_impl_hashmap_table_bytes(m, new_capacity) : 0;
  if (new_capacity != 0 && bytes == 0) return false;
  unsigned char *block = NULL;
  if (new_capacity != 0) {
    block = pmr_allocate(m->resource, bytes, m->slot_align);
    if (block == NULL) return false;
  }
  pmr_hashmap t = *m;
  *old = pmr_impl_hashmap_current_table(m);
  if (new_capacity == 0) {
    pmr_impl_hashmap_set_empty_table(m);
    return true;
  }
  m->ctrl = block;
  m->slots = block + pmr_impl_hashmap_slots_offset(m, new_capacity);
  m->mask = new_capacity - 1;
  m->capacity = new_capacity;
  memset(m->ctrl, PMR_IMPL_HASHMAP_EMPTY, new_capacity + GROUP);
  switch (hash_kind(m)) {
    case PMR_IMPL_HASHMAP_KIND_U64:
      move_slots(m, &t, PMR_IMPL_HASHMAP_KIND_U64);
      break;
    case PMR_IMPL_HASHMAP_KIND_CSTR:
      move_slots(m, &t, PMR_IMPL_HASHMAP_KIND_CSTR);
      break;
    case PMR_IMPL_HASHMAP_KIND_CUSTOM:
      move_slots(m, &t, PMR_IMPL_HASHMAP_KIND_CUSTOM);
      break;
    default:
      move_slots(m, &t, PMR_IMPL_HASHMAP_KIND_BYTES);
      break;
  }
  m->growth_left = pmr_impl_hashmap_max_load(new_capacity) - m->size;
  return true;
}

size_t pmr_impl_hashmap_capacity_to_grow(const pmr_hashmap *m) {
  if (m->capacity == 0) return PMR_IMPL_HASHMAP_MIN_CAPACITY;
  if (m->size * 32 <= m->capacity * 25) return m->capacity;
  return m->capacity <= SIZE_MAX / 4 ? m->capacity * 2 : 0;
}

/* ---- Capacity --------------------------------------------------------- */

bool pmr_hashmap_reserve(pmr_hashmap *m, size_t n) {
  PMR_IMPL_CHECK_NOT_NULL(m, "map", false);
  if (n <= m->size + m->growth_left) return true;
  size_t c = pmr_impl_hashmap_capacity_for(n);
  if (c != 0 && c < m->capacity) c = m->capacity; /* only tombstones to drop */
  pmr_impl_hashmap_old_table old;
  if (m->kind == PMR_IMPL_HASHMAP_KIND_STRING) {
    if (c == 0 || !pmr_impl_hashmap_str_reindex(m, c, &old)) return false;
  } else if (c == 0 || !pmr_impl_hashmap_rebuild(m, c, &old)) {
    return false;
  }
  pmr_impl_hashmap_free_table(m, old);
  return true;
}

bool pmr_hashmap_shrink_to_fit(pmr_hashmap *m) {
  PMR_IMPL_CHECK_NOT_NULL(m, "map", false);
  size_t c = m->size != 0 ? pmr_impl_hashmap_capacity_for(m->size) : 0;
  bool tombstones =
      m->capacity != 0 &&
      m->growth_left != pmr_impl_hashmap_max_load(m->capacity) - m->size;
  if (m->kind == PMR_IMPL_HASHMAP_KIND_STRING) {
    if (c == m->capacity && !tombstones && m->rec_dead == 0) return true;
    if (c == 0) {
      pmr_hashmap_destroy(m);
      return true;
    }
    return pmr_impl_hashmap_str_shrink(m, c);
  }
  if (c == m->capacity && !tombstones) return true;
  pmr_impl_hashmap_old_table old;
  if (!pmr_impl_hashmap_rebuild(m, c, &old)) return false;
  pmr_impl_hashmap_free_table(m, old);
  return true;
}

/* ---- Probe statistics ------------------------------------------------- */

static unsigned popcount(pmr_impl_hashmap_bits b) {
#if defined(__GNUC__) || defined(__clang__)
  return (unsigned)__builtin_popcount(b);
#else
  unsigned n = 0;
  for (; b != 0; b &= b - 1) ++n;
  return n;
#endif
}

/* Replays the lookup of every key of a map whose hash_kind is `kind` (the
 * probe's order: groups along the sequence, matching slots lowest first) up
 * to the group whose window holds its slot. */
static PMR_IMPL_HASHMAP_ALWAYS_INLINE pmr_hashmap_stats
stats_of(const pmr_hashmap *m, int kind) {
  pmr_hashmap_stats st = {0, 0, 0, 0};
  const size_t mask = m->mask;
  for (size_t i = 0; i < m->capacity; ++i) {
    if (!pmr_impl_hashmap_is_full(m->ctrl[i])) continue;
    const uint64_t h = slot_hash(m, pmr_impl_hashmap_slot(m, i), kind);
    size_t pos = pmr_impl_hashmap_h1(h) & mask, step = 0, groups = 1;
    for (;; ++groups) {
      const pmr_impl_hashmap_bits b =
          pmr_impl_hashmap_match(m->ctrl + pos, pmr_impl_hashmap_h2(h));
      const size_t off = (i - pos) & mask;
      if (off < GROUP) {
        st.compares += popcount(b & ((2u << off) - 1));
        break;
      }
      st.compares += popcount(b);
      step += GROUP;
      pos = (pos + step) & mask;
    }
    ++st.keys;
    st.groups += groups;
    if (groups > st.max_groups) st.max_groups = groups;
  }
  return st;
}

pmr_hashmap_stats pmr_hashmap_probe_stats(const pmr_hashmap *m) {
  PMR_IMPL_CHECK_NOT_NULL(m, "map", (pmr_hashmap_stats){0});
  switch (hash_kind(m)) {
    case PMR_IMPL_HASHMAP_KIND_U64:
      return stats_of(m, PMR_IMPL_HASHMAP_KIND_U64);
    case PMR_IMPL_HASHMAP_KIND_CSTR:
      return stats_of(m, PMR_IMPL_HASHMAP_KIND_CSTR);
    case PMR_IMPL_HASHMAP_KIND_CUSTOM:
      return stats_of(m, PMR_IMPL_HASHMAP_KIND_CUSTOM);
    case PMR_IMPL_HASHMAP_KIND_STRING:
      return stats_of(m, PMR_IMPL_HASHMAP_KIND_STRING);
    default:
      return stats_of(m, PMR_IMPL_HASHMAP_KIND_BYTES);
  }
}
