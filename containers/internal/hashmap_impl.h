/* Private to containers/: what the sources of pmr_hashmap (hashmap*.c; which
 * holds what: containers/README.md) share. Not a public header; nothing here
 * is part of the API.
 *
 * Layout of a table of capacity C (a power of two >= MIN_CAPACITY), one block
 * from the resource, aligned to the slot alignment:
 *
 *     ctrl[0 .. C)            one control byte per slot
 *     ctrl[C .. C + GROUP)    copies of ctrl[0 .. GROUP), so that a group
 *                             load at any position reads GROUP bytes
 *     (padding to slot_align)
 *     slots[0 .. C)           slot_size bytes each
 *
 * The control bytes and the probe of 8-byte keys: hashmap_table.h.
 *
 * A slot of a map of plain, cstr or custom keys holds the key, padding and
 * the value. A string map's slot holds only a 32-bit reference to the key's
 * RECORD, and the records live apart, packed one after another in chunks
 * that the map owns (see "String keys" below and hashmap_str.c): a key costs
 * its own bytes and a small header, not a whole pmr_string, and the table,
 * 4 bytes a slot, can keep a low load factor cheaply. Values never move when
 * the table is rebuilt; keys are never edited, so each is stored once,
 * exactly sized.
 *
 * The key kind is decided once per operation, at the public function: the
 * string paths (str_*) and the paths of each other kind do not test it again.
 */
#ifndef PMR_IMPL_HASHMAP_IMPL_H
#define PMR_IMPL_HASHMAP_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../pmr_hashmap.h"
#include "hash.h"
#include "hashmap_table.h"

/* The key kinds (m->kind); PMR_IMPL_HASHMAP_KIND_U64 (plain 8-byte keys) is
 * in pmr_hashmap.h, for the inline lookups. */
#define PMR_IMPL_HASHMAP_KIND_BYTES 0
#define PMR_IMPL_HASHMAP_KIND_CSTR 2
#define PMR_IMPL_HASHMAP_KIND_STRING 3
#define PMR_IMPL_HASHMAP_KIND_CUSTOM 4

#define PMR_IMPL_HASHMAP_MIN_CAPACITY 16
#define PMR_IMPL_HASHMAP_NPOS ((size_t)-1)

#if defined(__GNUC__) || defined(__clang__)
#define PMR_IMPL_HASHMAP_ALWAYS_INLINE __attribute__((always_inline)) inline
#else
#define PMR_IMPL_HASHMAP_ALWAYS_INLINE inline
#endif

/* The control bytes of every empty map: one group of EMPTY, never written. */
extern unsigned char pmr_impl_hashmap_empty_group[PMR_IMPL_HASHMAP_GROUP];

/* ---- Keys and hashes -------------------------------------------------- */

static inline uint64_t pmr_impl_hashmap_load_u64(const void *p) {
  uint64_t v;
  memcpy(&v, p, sizeof v);
  return v;
}
static inline const char *pmr_impl_hashmap_load_cstr(const void *p) {
  const char *s;
  memcpy(&s, p, sizeof s);
  return s;
}
static inline uint32_t pmr_impl_hashmap_load_u32(const void *p) {
  uint32_t v;
  memcpy(&v, p, sizeof v);
  return v;
}
static inline void pmr_impl_hashmap_store_u32(void *p, uint32_t v) {
  memcpy(p, &v, sizeof v);
}

/* The map's hash of n bytes, and of an 8-byte key. */
static inline uint64_t pmr_impl_hashmap_hash_of(const pmr_hashmap *m,
                                                const void *p, size_t n) {
  return pmr_impl_hash_bytes(p, n, m->seed0, m->seed1);
}
static inline uint64_t pmr_impl_hashmap_hash_k64(const pmr_hashmap *m,
                                                 uint64_t k) {
  return pmr_impl_hash_u64(k, m->seed0, m->seed1);
}

/* Where a probe starts (H1) and the control byte of a full slot (H2). */
static inline size_t pmr_impl_hashmap_h1(uint64_t h) {
  return (size_t)(h >> 7);
}
static inline unsigned char pmr_impl_hashmap_h2(uint64_t h) {
  return (unsigned char)(h & 0x7f);
}

/* ---- Slots and control bytes ------------------------------------------ */

static inline unsigned char *pmr_impl_hashmap_slot(const pmr_hashmap *m,
                                                   size_t i) {
  return m->slots + i * m->slot_size;
}

static inline bool pmr_impl_hashmap_is_full(unsigned char c) {
  return c < 0x80;
}

static inline size_t pmr_impl_hashmap_max_load(size_t capacity) {
  return capacity - capacity / 8;
}

/* True when the table holds tombstones: then the first free slot of a probe
 * may come before the group where a lookup stops. */
static inline bool pmr_impl_hashmap_has_tombstones(const pmr_hashmap *m) {
  return m->size + m->growth_left != pmr_impl_hashmap_max_load(m->capacity);
}

/* The first EMPTY or DELETED slot on h's probe sequence (there always is
 * one: at most 7/8 of the slots are full or deleted). */
static inline size_t pmr_impl_hashmap_find_free(const pmr_hashmap *m,
                                                uint64_t h) {
  const size_t mask = m->mask;
  size_t pos = pmr_impl_hashmap_h1(h) & mask, step = 0;
  for (;;) {
    pmr_impl_hashmap_bits b = pmr_impl_hashmap_match_free(m->ctrl + pos);
    if (b != 0) return (pos + pmr_impl_hashmap_lowest(b)) & mask;
    step += PMR_IMPL_HASHMAP_GROUP;
    pos = (pos + step) & mask;
  }
}

/* memcpy with the common 8- and 16-byte sizes as single moves, not calls
 * (measured on the uint64_t -> uint64_t map: insert and rebuild spent much
 * of their time in memcpy calls). */
static inline void pmr_impl_hashmap_copy_bytes(void *dst, const void *src,
                                               size_t n) {
  if (n == 8)
    memcpy(dst, src, 8);
  else if (n == 16)
    memcpy(dst, src, 16);
  else
    memcpy(dst, src, n);
}

/* Stores *value (NULL: zeros) at v, a value of m. */
static inline void pmr_impl_hashmap_store_value(const pmr_hashmap *m,
                                                unsigned char *v,
                                                const void *value) {
  if (m->value_size == 0) return;
  if (value == NULL) {
    memset(v, 0, m->value_size);
  } else if (m->value_size == 8) {
    uint64_t x; /* value may overlap v (it may point into the map) */
    memcpy(&x, value, 8);
    memcpy(v, &x, 8);
  } else {
    memmove(v, value, m->value_size);
  }
}

/* Erases full slot i of a map of any kind but string. */
static inline void pmr_impl_hashmap_erase_at(pmr_hashmap *m, size_t i) {
  --m->size;
  m->growth_left += pmr_impl_hashmap_free_ctrl(m->ctrl, m->mask, i);
}

/* Erases slot i (NPOS: absent) of a map of any kind but string, the value
 * copied to value_out first when it is not NULL. */
static inline bool pmr_impl_hashmap_erase_index(pmr_hashmap *m, size_t i,
                                                void *value_out) {
  if (i == PMR_IMPL_HASHMAP_NPOS) return false;
  if (value_out != NULL && m->value_size != 0)
    memcpy(value_out, pmr_impl_hashmap_slot(m, i) + m->value_offset,
           m->value_size);
  pmr_impl_hashmap_erase_at(m, i);
  return true;
}

/* ---- String keys: records --------------------------------------------- *
 *
 * A record is the value (value_size bytes, at offset 0, so values keep their
 * alignment), then at hdr = round_up(value_size, 4) a 32-bit word, the key's
 * length (REC_DEAD set once erased), then the key's bytes and a NUL; its size
 * is rounded up to rec_align (8, or the value's alignment when larger).
 * Records are appended to the last chunk, never moved but by a compaction;
 * a new chunk holds about a quarter of the live records' bytes, a power of
 * two from REC_FIRST_CHUNK to REC_BIG_CHUNK (a record larger than that gets
 * a chunk of its own): few allocations as the map grows, and little room
 * for dead records in a small map under churn. A slot's reference is the
 * record's chunk (high bits) and its offset in REC_UNIT units (low
 * REC_OFF_BITS bits): 32 bits reach 2^15 chunks of 1 MiB.
 *
 * Erasing marks a record dead; its bytes are counted in rec_dead and come
 * back when the records are compacted: when an insertion needs a new chunk
 * and dead bytes are at least the live ones (so after any insertion the
 * records take at most twice their live bytes plus two chunks), and by
 * shrink_to_fit. A map that becomes empty gives its chunks back. */

struct pmr_impl_hashmap_chunk {
  unsigned char *base;
  size_t size, used; /* bytes; records fill [0, used) */
};
typedef struct pmr_impl_hashmap_chunk pmr_impl_hashmap_chunk;

#define PMR_IMPL_HASHMAP_REC_UNIT 8
#define PMR_IMPL_HASHMAP_REC_OFF_BITS 17
#define PMR_IMPL_HASHMAP_REC_DEAD 0x80000000u

static inline size_t pmr_impl_hashmap_rec_align(const pmr_hashmap *m) {
  return m->value_align > PMR_IMPL_HASHMAP_REC_UNIT ? m->value_align
                                                    : PMR_IMPL_HASHMAP_REC_UNIT;
}
/* Where the length word sits (configure stores it in value_offset: a string
 * map's value is at offset 0 of its record). */
static inline size_t pmr_impl_hashmap_rec_hdr(const pmr_hashmap *m) {
  return m->value_offset;
}
/* The bytes of a record whose key has n bytes. */
static inline size_t pmr_impl_hashmap_rec_bytes(const pmr_hashmap *m,
                                                size_t n) {
  return pmr_impl_round_up(pmr_impl_hashmap_rec_hdr(m) + 4 + n + 1,
                           pmr_impl_hashmap_rec_align(m));
}
static inline unsigned char *pmr_impl_hashmap_rec_at(const pmr_hashmap *m,
                                                     uint32_t ref) {
  return m->chunks[ref >> PMR_IMPL_HASHMAP_REC_OFF_BITS].base +
         (size_t)(ref & ((1u << PMR_IMPL_HASHMAP_REC_OFF_BITS) - 1)) *
             PMR_IMPL_HASHMAP_REC_UNIT;
}
static inline uint32_t pmr_impl_hashmap_rec_word(const pmr_hashmap *m,
                                                 const unsigned char *r) {
  return pmr_impl_hashmap_load_u32(r + pmr_impl_hashmap_rec_hdr(m));
}
static inline const char *pmr_impl_hashmap_rec_text(const pmr_hashmap *m,
                                                    const unsigned char *r) {
  return (const char *)r + pmr_impl_hashmap_rec_hdr(m) + 4;
}
/* The record of full slot i of a string map. */
static inline unsigned char *pmr_impl_hashmap_slot_rec(const pmr_hashmap *m,
                                                       size_t i) {
  return pmr_impl_hashmap_rec_at(
      m, pmr_impl_hashmap_load_u32(pmr_impl_hashmap_slot(m, i)));
}

/* ---- Probing ---------------------------------------------------------- */

/* The text keys of string and cstr maps, compared with the n bytes at p:
 * the control byte's 7 hash bits have already matched; the length (string)
 * or the first differing byte rejects most of the rest. A C-string key never
 * equals a text with a NUL in it; the NULL key equals no text. */
static inline bool pmr_impl_hashmap_string_equals_text(
    const pmr_hashmap *m, const unsigned char *slot, const char *p, size_t n) {
  const unsigned char *r =
      pmr_impl_hashmap_rec_at(m, pmr_impl_hashmap_load_u32(slot));
  return pmr_impl_hashmap_rec_word(m, r) == n &&
         (n == 0 || memcmp(pmr_impl_hashmap_rec_text(m, r), p, n) == 0);
}
static inline bool pmr_impl_hashmap_cstr_equals_text(const unsigned char *slot,
                                                     const char *p, size_t n) {
  const char *s = pmr_impl_hashmap_load_cstr(slot);
  if (s == NULL) return false;
  for (size_t i = 0; i < n; ++i)
    if (s[i] != p[i] || s[i] == '\0') return false;
  return s[n] == '\0';
}

/* How a probe compares a candidate slot with what it looks for. */
enum {
  PMR_IMPL_HASHMAP_BY_BYTES,       /* *key, plain bytes: memcmp */
  PMR_IMPL_HASHMAP_BY_CUSTOM,      /* *key, by the map's equal function */
  PMR_IMPL_HASHMAP_BY_NULL_CSTR,   /* the NULL key of a cstr map */
  PMR_IMPL_HASHMAP_BY_STRING_TEXT, /* the text (p, n), in a string map */
  PMR_IMPL_HASHMAP_BY_CSTR_TEXT    /* the text (p, n), in a cstr map */
};

/* The slot of the key (hash h), or NPOS; when absent, *empty gets where an
 * insertion goes if the table has no tombstones. The key is *key or the
 * text (p, n), as `by` says. `by` is a constant at each call, and the probe
 * is always inlined, so each caller gets its own loop with no dispatch. */
static PMR_IMPL_HASHMAP_ALWAYS_INLINE size_t pmr_impl_hashmap_probe(
    const pmr_hashmap *m, uint64_t h, int by, const void *key, const char *p,
    size_t n, size_t *empty) {
  const size_t mask = m->mask, key_size = m->key_size;
  size_t pos = pmr_impl_hashmap_h1(h) & mask, step = 0;
#if defined(__GNUC__) || defined(__clang__)
  /* The first slot's line, as pmr_impl_hashmap_probe_u64 does. */
  __builtin_prefetch(pmr_impl_hashmap_slot(m, pos));
#endif
  for (;;) {
    const unsigned char *g = m->ctrl + pos;
    for (pmr_impl_hashmap_bits b =
             pmr_impl_hashmap_match(g, pmr_impl_hashmap_h2(h));
         b != 0; b &= b - 1) {
      size_t i = (pos + pmr_impl_hashmap_lowest(b)) & mask;
      const unsigned char *slot = pmr_impl_hashmap_slot(m, i);
      if (by == PMR_IMPL_HASHMAP_BY_BYTES    ? memcmp(slot, key, key_size) == 0
          : by == PMR_IMPL_HASHMAP_BY_CUSTOM ? m->equal(key, slot, m->ctx)
          : by == PMR_IMPL_HASHMAP_BY_NULL_CSTR
              ? pmr_impl_hashmap_load_cstr(slot) == NULL
          : by == PMR_IMPL_HASHMAP_BY_STRING_TEXT
              ? pmr_impl_hashmap_string_equals_text(m, slot, p, n)
              : pmr_impl_hashmap_cstr_equals_text(slot, p, n))
        return i;
    }
    pmr_impl_hashmap_bits e = pmr_impl_hashmap_match(g, PMR_IMPL_HASHMAP_EMPTY);
    if (e != 0) {
      *empty = (pos + pmr_impl_hashmap_lowest(e)) & mask;
      return PMR_IMPL_HASHMAP_NPOS;
    }
    step += PMR_IMPL_HASHMAP_GROUP;
    pos = (pos + step) & mask;
  }
}

/* The slot of the text key (p, n) of a string map, or NPOS; *hp gets its
 * hash and *empty what probe gives. */
static inline size_t pmr_impl_hashmap_str_locate(const pmr_hashmap *m,
                                                 const char *p, size_t n,
                                                 uint64_t *hp, size_t *empty) {
  const uint64_t h = pmr_impl_hashmap_hash_of(m, p, n);
  *hp = h;
  return pmr_impl_hashmap_probe(m, h, PMR_IMPL_HASHMAP_BY_STRING_TEXT, NULL, p,
                                n, empty);
}
/* The same in a cstr map. */
static inline size_t pmr_impl_hashmap_cstr_locate(const pmr_hashmap *m,
                                                  const char *p, size_t n,
                                                  uint64_t *hp, size_t *empty) {
  const uint64_t h = pmr_impl_hashmap_hash_of(m, p, n);
  *hp = h;
  return pmr_impl_hashmap_probe(m, h, PMR_IMPL_HASHMAP_BY_CSTR_TEXT, NULL, p, n,
                                empty);
}

/* ---- Across the files ------------------------------------------------- */

/* hashmap_keys.c. Misuse by a key of the wrong kind, or text that cannot be
 * a key, given to `op`: reported by debug builds (see PMR_HASHMAP_BADARG);
 * bad_key also sets errno = EINVAL and gives the insertions' answer. */
void pmr_impl_hashmap_report_bad_key(const pmr_hashmap *m, const char *op,
                                     const char *why);
pmr_hashmap_status pmr_impl_hashmap_bad_key(const pmr_hashmap *m,
                                            const char *op, const char *why);
/* Adds a new key of hash h, the key_size bytes at key, to a map of any kind
 * but string; empty is what its probe gave. Returns its value, or NULL when
 * out of memory (nothing changed). */
unsigned char *pmr_impl_hashmap_insert_new(pmr_hashmap *m, uint64_t h,
                                           size_t empty, const void *key,
                                           const void *value);

/* hashmap_rehash.c: the table's block. */
typedef struct {
  unsigned char *block;
  size_t bytes;
} pmr_impl_hashmap_old_table;

size_t pmr_impl_hashmap_slots_offset(const pmr_hashmap *m, size_t capacity);
/* Bytes of a table of `capacity`, or 0 when too large. */
size_t pmr_impl_hashmap_table_bytes(const pmr_hashmap *m, size_t capacity);
/* The smallest capacity that holds n keys, or 0 when there is none. */
size_t pmr_impl_hashmap_capacity_for(size_t n);
/* The capacity to rebuild at when an insertion finds no room: the same one
 * when tombstones take much of it, else twice as large (0: none). */
size_t pmr_impl_hashmap_capacity_to_grow(const pmr_hashmap *m);
void pmr_impl_hashmap_free_table(const pmr_hashmap *m,
                                 pmr_impl_hashmap_old_table t);
pmr_impl_hashmap_old_table pmr_impl_hashmap_current_table(const pmr_hashmap *m);
/* Moves every key into a fresh table of new_capacity (which must hold them)
 * and hands the old block to *old, for the caller to free once it no longer
 * reads from it. False (nothing changed) when the block cannot be had. Not
 * for string maps (pmr_impl_hashmap_str_reindex). */
bool pmr_impl_hashmap_rebuild(pmr_hashmap *m, size_t new_capacity,
                              pmr_impl_hashmap_old_table *old);
void pmr_impl_hashmap_set_empty_table(pmr_hashmap *m);

/* hashmap_str.c: string maps' records. */
/* A map with no records (string maps; the fields are unused otherwise). */
void pmr_impl_hashmap_set_no_records(pmr_hashmap *m);
/* Gives every record back (the map holds no key). */
void pmr_impl_hashmap_str_release_records(pmr_hashmap *m);
/* A table of capacity c (> 0) over the map's records, in place of its own;
 * the old block goes to *old. False, nothing changed, on failure. */
bool pmr_impl_hashmap_str_reindex(pmr_hashmap *m, size_t c,
                                  pmr_impl_hashmap_old_table *old);
/* The live records copied into fresh chunks and indexed in a table of
 * capacity c (> 0); the old chunks are freed. False, nothing changed. */
bool pmr_impl_hashmap_str_shrink(pmr_hashmap *m, size_t c);
/* Copies src's table and records into dst, a string map over its own
 * resource with neither. */
bool pmr_impl_hashmap_str_copy(pmr_hashmap *dst, const pmr_hashmap *src);
/* Erases full slot i of a string map: its record becomes dead; the last key
 * gives every record back. */
void pmr_impl_hashmap_str_erase_at(pmr_hashmap *m, size_t i);
/* The operations on the text key (p, n) of a string map (as the insertions
 * and pmr_hashmap_erase; find gives the value, or NULL). */
void *pmr_impl_hashmap_str_find(const pmr_hashmap *m, const char *p, size_t n);
pmr_hashmap_status pmr_impl_hashmap_str_insert(pmr_hashmap *m, const char *p,
                                               size_t n, const void *value,
                                               bool assign, void **vout);
bool pmr_impl_hashmap_str_erase(pmr_hashmap *m, const char *p, size_t n,
                                void *value_out);

#endif /* PMR_IMPL_HASHMAP_IMPL_H */
