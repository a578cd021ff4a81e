/* pmr_hashmap: see pmr_hashmap.h.
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
 * The control bytes and the probe: internal/hashmap_table.h.
 *
 * A slot of a map of plain, cstr or custom keys holds the key, padding and
 * the value. A string map's slot holds only a 32-bit reference to the key's
 * RECORD, and the records live apart, packed one after another in chunks
 * that the map owns (see "String keys" below): a key costs its own bytes and
 * a small header, not a whole pmr_string, and the table, 4 bytes a slot, can
 * keep a low load factor cheaply. Values never move when the table is
 * rebuilt; keys are never edited, so each is stored once, exactly sized.
 *
 * Each public function decides once on the key kind: the string paths
 * (str_*) and the others do not test it again.
 */
#include "containers/pmr_hashmap.h"

#include <errno.h>
#include <string.h>

#include "containers/internal/hash.h"
#include "containers/internal/hashmap_table.h"
#include "containers/pmr_string.h"

enum { KIND_BYTES, KIND_U64, KIND_CSTR, KIND_STRING, KIND_CUSTOM };
_Static_assert(KIND_U64 == PMR_IMPL_HASHMAP_KIND_U64,
               "the inline lookup's kind");

#define CTRL_EMPTY PMR_IMPL_HASHMAP_EMPTY
#define CTRL_DELETED PMR_IMPL_HASHMAP_DELETED
#define MIN_CAPACITY 16
#define NPOS ((size_t)-1)

/* ---- Groups of control bytes (internal/hashmap_table.h) --------------- */

#define GROUP PMR_IMPL_HASHMAP_GROUP
typedef pmr_impl_hashmap_bits bits_t;

static inline bits_t group_empty(const unsigned char *g) {
  return pmr_impl_hashmap_match(g, CTRL_EMPTY);
}
static inline bits_t group_empty_or_deleted(const unsigned char *g) {
  return pmr_impl_hashmap_match_free(g);
}
static inline unsigned bits_lowest(bits_t b) {
  return pmr_impl_hashmap_lowest(b);
}
/* The control bytes of every empty map: one group of EMPTY, never written. */
static unsigned char empty_group[GROUP] = {
    CTRL_EMPTY, CTRL_EMPTY, CTRL_EMPTY, CTRL_EMPTY, CTRL_EMPTY, CTRL_EMPTY,
    CTRL_EMPTY, CTRL_EMPTY, CTRL_EMPTY, CTRL_EMPTY, CTRL_EMPTY, CTRL_EMPTY,
    CTRL_EMPTY, CTRL_EMPTY, CTRL_EMPTY, CTRL_EMPTY};

/* ---- Hashing and equality of keys ------------------------------------- */

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

static inline uint64_t load_u64(const void *p) {
  uint64_t v;
  memcpy(&v, p, sizeof v);
  return v;
}
static inline const char *load_cstr(const void *p) {
  const char *s;
  memcpy(&s, p, sizeof s);
  return s;
}

/* The map's hash of n bytes, and of an 8-byte key. */
static inline uint64_t hash_of(const pmr_hashmap *m, const void *p, size_t n) {
  return pmr_impl_hash_bytes(p, n, m->seed0, m->seed1);
}
static inline uint64_t hash_u64(const pmr_hashmap *m, uint64_t k) {
  return pmr_impl_hash_u64(k, m->seed0, m->seed1);
}

/* The hash of a key of any kind but u64 and string (hash_key below adds
 * u64; string keys are hashed as text). */
static PMR_NOINLINE uint64_t hash_other(const pmr_hashmap *m, const void *key) {
  switch (m->kind) {
    case KIND_CSTR: {
      const char *s = load_cstr(key);
      return s != NULL ? hash_of(m, s, strlen(s))
                       : pmr_impl_hash_u64(0, m->seed0, m->seed1);
    }
    case KIND_CUSTOM:
      if (m->hash != NULL) return m->hash(key, m->ctx);
      return hash_of(m, key, m->key_size);
    default:
      return hash_of(m, key, m->key_size);
  }
}

/* Kept apart from hash_other: when the u64 case lives in the same switch,
 * the compiler calls the out-of-line switch even on the u64 paths. */
static inline uint64_t hash_key(const pmr_hashmap *m, const void *key) {
  return m->kind == KIND_U64 ? hash_u64(m, load_u64(key)) : hash_other(m, key);
}

static bool key_equal(const pmr_hashmap *m, const void *a, const void *b) {
  switch (m->kind) {
    case KIND_CSTR: {
      const char *x = load_cstr(a), *y = load_cstr(b);
      if (x == y) return true;
      if (x == NULL || y == NULL) return false;
      return strcmp(x, y) == 0;
    }
    case KIND_CUSTOM:
      if (m->equal != NULL) return m->equal(a, b, m->ctx);
      return memcmp(a, b, m->key_size) == 0;
    default:
      return memcmp(a, b, m->key_size) == 0;
  }
}

static inline size_t h1(uint64_t h) { return (size_t)(h >> 7); }
static inline unsigned char h2(uint64_t h) { return (unsigned char)(h & 0x7f); }

/* ---- Slots and control bytes ------------------------------------------ */

static inline unsigned char *slot_at(const pmr_hashmap *m, size_t i) {
  return m->slots + i * m->slot_size;
}

static inline bool is_full(unsigned char c) { return c < 0x80; }

/* Sets control byte i and its copy past the end. */
static inline void set_ctrl(pmr_hashmap *m, size_t i, unsigned char c) {
  pmr_impl_hashmap_set_ctrl(m->ctrl, m->mask, i, c);
}

static inline size_t max_load(size_t capacity) {
  return capacity - capacity / 8;
}

/* ---- Probing ---------------------------------------------------------- */

/* The slot of key k (hash h), or NPOS; when absent, *empty gets where an
 * insertion goes if the table has no tombstones. */
static inline size_t probe_u64(const pmr_hashmap *m, uint64_t k, uint64_t h,
                               size_t *empty) {
  return pmr_impl_hashmap_probe_u64(m->ctrl, m->slots, m->slot_size, m->mask, k,
                                    h, empty);
}

/* ---- String keys: records ------------------------------------------- *
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
typedef struct pmr_impl_hashmap_chunk chunk_t;

#define REC_UNIT 8
#define REC_OFF_BITS 17
#define REC_MAX_CHUNKS ((size_t)1 << (32 - REC_OFF_BITS))
#define REC_FIRST_CHUNK ((size_t)256)
#define REC_BIG_CHUNK ((size_t)REC_UNIT << REC_OFF_BITS)
#define REC_DEAD 0x80000000u
#define REC_MAX_LEN 0x7fffffffu

static inline uint32_t load_u32(const void *p) {
  uint32_t v;
  memcpy(&v, p, sizeof v);
  return v;
}
static inline void store_u32(void *p, uint32_t v) { memcpy(p, &v, sizeof v); }

static inline size_t rec_align(const pmr_hashmap *m) {
  return m->value_align > REC_UNIT ? m->value_align : REC_UNIT;
}
/* Where the length word sits (configure stores it in value_offset: a string
 * map's value is at offset 0 of its record). */
static inline size_t rec_hdr(const pmr_hashmap *m) { return m->value_offset; }
/* The bytes of a record whose key has n bytes. */
static inline size_t rec_bytes(const pmr_hashmap *m, size_t n) {
  return pmr_impl_round_up(rec_hdr(m) + 4 + n + 1, rec_align(m));
}
static inline unsigned char *rec_at(const pmr_hashmap *m, uint32_t ref) {
  return m->chunks[ref >> REC_OFF_BITS].base +
         (size_t)(ref & ((1u << REC_OFF_BITS) - 1)) * REC_UNIT;
}
static inline uint32_t rec_word(const pmr_hashmap *m, const unsigned char *r) {
  return load_u32(r + rec_hdr(m));
}
static inline const char *rec_text(const pmr_hashmap *m,
                                   const unsigned char *r) {
  return (const char *)r + rec_hdr(m) + 4;
}
/* The record of full slot i of a string map. */
static inline unsigned char *slot_rec(const pmr_hashmap *m, size_t i) {
  return rec_at(m, load_u32(slot_at(m, i)));
}

/* The text keys of string and cstr maps, compared with the n bytes at p:
 * the control byte's 7 hash bits have already matched; the length (string)
 * or the first differing byte rejects most of the rest. A C-string key never
 * equals a text with a NUL in it; the NULL key equals no text. */
static inline bool string_equals_text(const pmr_hashmap *m,
                                      const unsigned char *slot, const char *p,
                                      size_t n) {
  const unsigned char *r = rec_at(m, load_u32(slot));
  return rec_word(m, r) == n && (n == 0 || memcmp(rec_text(m, r), p, n) == 0);
}
static inline bool cstr_equals_text(const unsigned char *slot, const char *p,
                                    size_t n) {
  const char *s = load_cstr(slot);
  if (s == NULL) return false;
  for (size_t i = 0; i < n; ++i)
    if (s[i] != p[i] || s[i] == '\0') return false;
  return s[n] == '\0';
}

/* How a probe compares a candidate slot with what it looks for. */
enum {
  BY_KIND,        /* *key, by the map's kind (any kind but u64) */
  BY_BYTES,       /* *key, plain bytes: memcmp, no dispatch */
  BY_STRING_TEXT, /* the text (p, n), in a string map */
  BY_CSTR_TEXT    /* the text (p, n), in a cstr map */
};

#if defined(__GNUC__) || defined(__clang__)
#define PROBE_INLINE __attribute__((always_inline)) inline
#else
#define PROBE_INLINE inline
#endif

/* The slot of the key (hash h), or NPOS; when absent, *empty gets where an
 * insertion goes if the table has no tombstones. The key is *key or the
 * text (p, n), as `by` says. `by` is a constant at each call, and the probe
 * is always inlined, so each caller gets its own loop with no dispatch. */
static PROBE_INLINE size_t probe(const pmr_hashmap *m, uint64_t h, int by,
                                 const void *key, const char *p, size_t n,
                                 size_t *empty) {
  const size_t mask = m->mask, key_size = m->key_size;
  size_t pos = h1(h) & mask, step = 0;
#if defined(__GNUC__) || defined(__clang__)
  __builtin_prefetch(slot_at(m, pos)); /* as pmr_impl_hashmap_probe_u64 */
#endif
  for (;;) {
    const unsigned char *g = m->ctrl + pos;
    for (bits_t b = pmr_impl_hashmap_match(g, h2(h)); b != 0; b &= b - 1) {
      size_t i = (pos + bits_lowest(b)) & mask;
      const unsigned char *slot = slot_at(m, i);
      if (by == BY_KIND          ? key_equal(m, key, slot)
          : by == BY_BYTES       ? memcmp(slot, key, key_size) == 0
          : by == BY_STRING_TEXT ? string_equals_text(m, slot, p, n)
                                 : cstr_equals_text(slot, p, n))
        return i;
    }
    bits_t e = group_empty(g);
    if (e != 0) {
      *empty = (pos + bits_lowest(e)) & mask;
      return NPOS;
    }
    step += GROUP;
    pos = (pos + step) & mask;
  }
}

/* Out of line, as callers of the generic paths do not need the loop inlined
 * into them. */
static size_t probe_generic(const pmr_hashmap *m, const void *key, uint64_t h,
                            size_t *empty) {
  return probe(m, h, BY_KIND, key, NULL, 0, empty);
}

static size_t probe_bytes(const pmr_hashmap *m, const void *key, uint64_t h,
                          size_t *empty) {
  return probe(m, h, BY_BYTES, key, NULL, 0, empty);
}

/* The slot of the text key (p, n) of a string map, or NPOS; *hp gets its
 * hash and *empty what probe_u64 gives. */
static size_t str_locate(const pmr_hashmap *m, const char *p, size_t n,
                         uint64_t *hp, size_t *empty) {
  const uint64_t h = hash_of(m, p, n);
  *hp = h;
  return probe(m, h, BY_STRING_TEXT, NULL, p, n, empty);
}
/* The same in a cstr map. */
static size_t cstr_locate(const pmr_hashmap *m, const char *p, size_t n,
                          uint64_t *hp, size_t *empty) {
  const uint64_t h = hash_of(m, p, n);
  *hp = h;
  return probe(m, h, BY_CSTR_TEXT, NULL, p, n, empty);
}

/* The same for *key in a map of any kind but u64 and string. */
static PMR_NOINLINE size_t locate_other(const pmr_hashmap *m, const void *key,
                                        uint64_t *hp, size_t *empty) {
  switch (m->kind) {
    case KIND_CSTR: {
      const char *s = load_cstr(key);
      if (s != NULL) return cstr_locate(m, s, strlen(s), hp, empty);
      break; /* the NULL key */
    }
    case KIND_BYTES:
      *hp = hash_of(m, key, m->key_size);
      return probe_bytes(m, key, *hp, empty);
    default:
      break;
  }
  *hp = hash_other(m, key);
  return probe_generic(m, key, *hp, empty);
}

/* The slot holding *key, or NPOS; not for string maps. */
static inline size_t find_index(const pmr_hashmap *m, const void *key) {
  size_t empty;
  if (m->kind == KIND_U64) {
    const uint64_t k = load_u64(key);
    return probe_u64(m, k, hash_u64(m, k), &empty);
  }
  uint64_t h;
  return locate_other(m, key, &h, &empty);
}

/* Reports a key of the wrong kind, or text that cannot be a key, given to
 * `op` (debug builds; see PMR_HASHMAP_BADARG). */
static PMR_NOINLINE void report_bad_key(const pmr_hashmap *m, const char *op,
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

/* The insertions' answer to such a key: reported, errno = EINVAL. */
static PMR_NOINLINE pmr_hashmap_status bad_key(const pmr_hashmap *m,
                                               const char *op,
                                               const char *why) {
  report_bad_key(m, op, why);
  errno = EINVAL;
  return PMR_HASHMAP_BADARG;
}

#define TEXT_ON_OTHER_KIND "a text key on a map of neither string nor cstr keys"
#define U64_ON_OTHER_SIZE "an 8-byte key on a map of keys of another size"

/* The slot holding the text (p, n) in a string map when string, else in a
 * cstr map, or NPOS; also for NULL bytes with a length (a caller error,
 * reported by debug builds). */
static size_t find_text_index(const pmr_hashmap *m, const char *p, size_t n,
                              bool string, const char *op) {
  if (PMR_UNLIKELY(p == NULL && n != 0)) {
    report_bad_key(m, op, "NULL text of a length above 0");
    return NPOS;
  }
  uint64_t h;
  size_t empty;
  return string ? str_locate(m, p, n, &h, &empty)
                : cstr_locate(m, p, n, &h, &empty);
}

/* True when the table holds tombstones: then the first free slot of a probe
 * may come before the group where a lookup stops. */
static inline bool has_tombstones(const pmr_hashmap *m);

/* The first EMPTY or DELETED slot on h's probe sequence (there always is
 * one: at most 7/8 of the slots are full or deleted). */
static inline size_t find_free(const pmr_hashmap *m, uint64_t h) {
  const size_t mask = m->mask;
  size_t pos = h1(h) & mask, step = 0;
  for (;;) {
    bits_t b = group_empty_or_deleted(m->ctrl + pos);
    if (b != 0) return (pos + bits_lowest(b)) & mask;
    step += GROUP;
    pos = (pos + step) & mask;
  }
}

static inline bool has_tombstones(const pmr_hashmap *m) {
  return m->size + m->growth_left != max_load(m->capacity);
}

/* ---- Tables ----------------------------------------------------------- */

static size_t slots_offset(const pmr_hashmap *m, size_t capacity) {
  return pmr_impl_round_up(capacity + GROUP, m->slot_align);
}

/* Bytes of a table of `capacity`, or 0 when too large. */
static size_t table_bytes(const pmr_hashmap *m, size_t capacity) {
  const size_t half = (size_t)PTRDIFF_MAX / 2;
  if (capacity > half - GROUP - m->slot_align || capacity > half / m->slot_size)
    return 0;
  return slots_offset(m, capacity) + capacity * m->slot_size;
}

/* The smallest capacity that holds n keys, or 0 when there is none. */
static size_t capacity_for(size_t n) {
  size_t c = MIN_CAPACITY;
  while (max_load(c) < n) {
    if (c > SIZE_MAX / 4) return 0;
    c *= 2;
  }
  return c;
}

typedef struct {
  unsigned char *block;
  size_t bytes;
} old_table;

static void free_table(const pmr_hashmap *m, old_table t) {
  if (t.block != NULL)
    pmr_deallocate(m->resource, t.block, t.bytes, m->slot_align);
}

static old_table current_table(const pmr_hashmap *m) {
  old_table t = {NULL, 0};
  if (m->capacity != 0) {
    t.block = m->ctrl;
    t.bytes = table_bytes(m, m->capacity);
  }
  return t;
}

/* memcpy with the common 8- and 16-byte sizes as single moves, not calls
 * (measured on the uint64_t -> uint64_t map: insert and rebuild spent much
 * of their time in memcpy calls). */
static inline void copy_bytes(void *dst, const void *src, size_t n) {
  if (n == 8)
    memcpy(dst, src, 8);
  else if (n == 16)
    memcpy(dst, src, 16);
  else
    memcpy(dst, src, n);
}

/* A map with no records (string maps; the fields are unused otherwise). */
static void set_no_records(pmr_hashmap *m) {
  m->chunks = NULL;
  m->nchunks = m->chunks_cap = 0;
  m->rec_live = m->rec_dead = 0;
}

static void set_empty_table(pmr_hashmap *m) {
  m->ctrl = empty_group;
  m->slots = NULL;
  m->mask = 0;
  m->capacity = 0;
  m->size = 0;
  m->growth_left = 0;
}

/* Copies every full slot of t into m's fresh table (no tombstones, room for
 * all). Full slots are found a group at a time; u64 (a constant at each call)
 * lets the compiler inline the 8-byte key's hash. */
static inline void move_slots(pmr_hashmap *m, const pmr_hashmap *t, bool u64) {
  for (size_t base = 0; base < t->capacity; base += GROUP) {
    bits_t full = ~group_empty_or_deleted(t->ctrl + base) & 0xFFFFu;
    for (; full != 0; full &= full - 1) {
      const unsigned char *src = slot_at(t, base + bits_lowest(full));
      uint64_t h = u64 ? hash_u64(m, load_u64(src)) : hash_key(m, src);
      size_t j = find_free(m, h);
      set_ctrl(m, j, h2(h));
      copy_bytes(slot_at(m, j), src, m->slot_size);
    }
  }
}

/* Moves every key into a fresh table of new_capacity (which must hold them)
 * and hands the old block to *old, for the caller to free once it no longer
 * reads from it. False (nothing changed) when the block cannot be had. Not
 * for string maps (str_index). */
static bool rebuild(pmr_hashmap *m, size_t new_capacity, old_table *old) {
  size_t bytes = new_capacity != 0 ? table_bytes(m, new_capacity) : 0;
  if (new_capacity != 0 && bytes == 0) return false;
  unsigned char *block = NULL;
  if (new_capacity != 0) {
    block = pmr_allocate(m->resource, bytes, m->slot_align);
    if (block == NULL) return false;
  }
  pmr_hashmap t = *m;
  *old = current_table(m);
  if (new_capacity == 0) {
    set_empty_table(m);
    return true;
  }
  m->ctrl = block;
  m->slots = block + slots_offset(m, new_capacity);
  m->mask = new_capacity - 1;
  m->capacity = new_capacity;
  memset(m->ctrl, CTRL_EMPTY, new_capacity + GROUP);
  if (m->kind == KIND_U64)
    move_slots(m, &t, true);
  else
    move_slots(m, &t, false);
  m->growth_left = max_load(new_capacity) - m->size;
  return true;
}

/* The capacity to rebuild at when an insertion finds no room: the same one
 * when tombstones take much of it, else twice as large. */
static size_t capacity_to_grow(const pmr_hashmap *m) {
  if (m->capacity == 0) return MIN_CAPACITY;
  if (m->size * 32 <= m->capacity * 25) return m->capacity;
  return m->capacity <= SIZE_MAX / 4 ? m->capacity * 2 : 0;
}

/* ---- String keys: chunks, the table, compaction ----------------------- */

/* A set of chunks: the map's own, or one being built by a compaction. */
typedef struct {
  chunk_t *chunks;
  size_t nchunks, cap;
} arena_t;

static arena_t map_arena(const pmr_hashmap *m) {
  arena_t a = {m->chunks, m->nchunks, m->chunks_cap};
  return a;
}
static void set_arena(pmr_hashmap *m, arena_t a) {
  m->chunks = a.chunks;
  m->nchunks = a.nchunks;
  m->chunks_cap = a.cap;
}

/* Gives every chunk of a, and its chunk list, back. */
static void arena_free(const pmr_hashmap *m, arena_t *a) {
  for (size_t k = 0; k < a->nchunks; ++k)
    pmr_deallocate(m->resource, a->chunks[k].base, a->chunks[k].size,
                   rec_align(m));
  if (a->chunks != NULL)
    pmr_deallocate(m->resource, a->chunks, a->cap * sizeof(chunk_t),
                   _Alignof(chunk_t));
  a->chunks = NULL;
  a->nchunks = a->cap = 0;
}

/* Adds an empty chunk to a that holds at least `bytes`. False, a unchanged,
 * when memory or references run out. */
static bool arena_add_chunk(const pmr_hashmap *m, arena_t *a, size_t bytes) {
  if (a->nchunks == REC_MAX_CHUNKS) return false;
  size_t size = REC_FIRST_CHUNK;
  while (size < REC_BIG_CHUNK && size * 4 < m->rec_live) size *= 2;
  if (size < bytes) size = bytes;
  unsigned char *base = pmr_allocate(m->resource, size, rec_align(m));
  if (base == NULL) return false;
  if (a->nchunks == a->cap) {
    size_t cap = a->cap != 0 ? a->cap * 2 : 4;
    chunk_t *list =
        pmr_allocate(m->resource, cap * sizeof(chunk_t), _Alignof(chunk_t));
    if (list == NULL) {
      pmr_deallocate(m->resource, base, size, rec_align(m));
      return false;
    }
    if (a->nchunks != 0) memcpy(list, a->chunks, a->nchunks * sizeof(chunk_t));
    if (a->chunks != NULL)
      pmr_deallocate(m->resource, a->chunks, a->cap * sizeof(chunk_t),
                     _Alignof(chunk_t));
    a->chunks = list;
    a->cap = cap;
  }
  chunk_t *c = &a->chunks[a->nchunks++];
  c->base = base;
  c->size = size;
  c->used = 0;
  return true;
}

/* True when the last chunk of a has room for `bytes`. */
static bool arena_fits(const arena_t *a, size_t bytes) {
  return a->nchunks != 0 &&
         a->chunks[a->nchunks - 1].size - a->chunks[a->nchunks - 1].used >=
             bytes;
}

/* The reference of the next record appended to a (it must fit). */
static uint32_t arena_next_ref(const arena_t *a) {
  const chunk_t *c = &a->chunks[a->nchunks - 1];
  return (uint32_t)((a->nchunks - 1) << REC_OFF_BITS | c->used / REC_UNIT);
}

/* Builds a table of capacity c (> 0) over the live records of a and puts it
 * in place of m's; the old block goes to *old. False, nothing changed, when
 * the block cannot be had. */
static bool str_index(pmr_hashmap *m, const arena_t *a, size_t c,
                      old_table *old) {
  const size_t bytes = table_bytes(m, c);
  unsigned char *block =
      bytes != 0 ? pmr_allocate(m->resource, bytes, m->slot_align) : NULL;
  if (block == NULL) return false;
  *old = current_table(m);
  m->ctrl = block;
  m->slots = block + slots_offset(m, c);
  m->mask = c - 1;
  m->capacity = c;
  memset(m->ctrl, CTRL_EMPTY, c + GROUP);
  for (size_t k = 0; k < a->nchunks; ++k) {
    const chunk_t *ch = &a->chunks[k];
    for (size_t off = 0; off < ch->used;) {
      const unsigned char *r = ch->base + off;
      const uint32_t w = rec_word(m, r);
      if (!(w & REC_DEAD)) {
        const uint64_t h = hash_of(m, rec_text(m, r), w);
        const size_t j = find_free(m, h);
        set_ctrl(m, j, h2(h));
        store_u32(slot_at(m, j),
                  (uint32_t)(k << REC_OFF_BITS | off / REC_UNIT));
      }
      off += rec_bytes(m, w & ~REC_DEAD);
    }
  }
  m->growth_left = max_load(c) - m->size;
  return true;
}

/* Copies the live records into fresh chunks, with room for `room` more
 * bytes at the end (0: none asked), and indexes them in a table of capacity
 * c (> 0). The old chunks go to *old (the caller frees them once it no
 * longer reads from them). False, nothing changed, on failure. */
static bool str_compact(pmr_hashmap *m, size_t c, size_t room, arena_t *old) {
  arena_t cur = map_arena(m), fresh = {NULL, 0, 0};
  for (size_t k = 0; k < cur.nchunks; ++k) {
    const chunk_t *ch = &cur.chunks[k];
    for (size_t off = 0; off < ch->used;) {
      const unsigned char *r = ch->base + off;
      const uint32_t w = rec_word(m, r);
      const size_t b = rec_bytes(m, w & ~REC_DEAD);
      if (!(w & REC_DEAD)) {
        if (!arena_fits(&fresh, b) && !arena_add_chunk(m, &fresh, b)) {
          arena_free(m, &fresh);
          return false;
        }
        chunk_t *d = &fresh.chunks[fresh.nchunks - 1];
        memcpy(d->base + d->used, r, b);
        d->used += b;
      }
      off += b;
    }
  }
  old_table old_index;
  if ((room != 0 && !arena_fits(&fresh, room) &&
       !arena_add_chunk(m, &fresh, room)) ||
      !str_index(m, &fresh, c, &old_index)) {
    arena_free(m, &fresh);
    return false;
  }
  free_table(m, old_index);
  *old = cur;
  set_arena(m, fresh);
  m->rec_dead = 0;
  return true;
}

/* Gives every record back (the map holds no key). */
static void str_release_records(pmr_hashmap *m) {
  arena_t a = map_arena(m);
  arena_free(m, &a);
  set_arena(m, a);
  m->rec_live = m->rec_dead = 0;
}

/* Makes room for a new key of hash h whose record takes `bytes`; empty is
 * what its probe gave. Returns the slot it goes to, or NPOS (nothing
 * changed). Chunks a compaction replaced go to *old. */
static size_t str_make_room(pmr_hashmap *m, uint64_t h, size_t empty,
                            size_t bytes, arena_t *old) {
  size_t i = has_tombstones(m) ? find_free(m, h) : empty;
  const bool grow = m->growth_left == 0 && m->ctrl[i] != CTRL_DELETED;
  arena_t a = map_arena(m);
  if (arena_fits(&a, bytes) && !grow) return i;
  if (!arena_fits(&a, bytes) && m->rec_dead != 0 &&
      m->rec_dead >= m->rec_live) {
    size_t c = capacity_for(m->size + 1);
    if (c != 0 && c < m->capacity) c = m->capacity;
    if (c == 0 || !str_compact(m, c, bytes, old)) return NPOS;
    return find_free(m, h);
  }
  const bool added = !arena_fits(&a, bytes);
  if (added) {
    if (!arena_add_chunk(m, &a, bytes)) return NPOS;
    set_arena(m, a);
  }
  if (grow) {
    const size_t c = capacity_to_grow(m);
    old_table old_index;
    if (c == 0 || !str_index(m, &a, c, &old_index)) {
      if (added) { /* the chunk (and a list made for it) goes back */
        chunk_t *last = &m->chunks[--m->nchunks];
        pmr_deallocate(m->resource, last->base, last->size, rec_align(m));
        if (m->nchunks == 0) str_release_records(m);
      }
      return NPOS;
    }
    free_table(m, old_index);
    i = find_free(m, h);
  }
  return i;
}

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
  set_empty_table(m);
  set_no_records(m);
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
  if (m->kind == KIND_STRING) str_release_records(m);
  free_table(m, current_table(m));
  set_empty_table(m);
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

/* ---- Lookup ----------------------------------------------------------- */

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

/* The value of the string key (p, n) of a string map, or NULL. */
static void *str_find(const pmr_hashmap *m, const char *p, size_t n) {
  uint64_t h;
  size_t empty;
  const size_t i = str_locate(m, p, n, &h, &empty);
  return i != NPOS ? slot_rec(m, i) : NULL;
}

void *pmr_hashmap_find(const pmr_hashmap *m, const void *key) {
  PMR_IMPL_CHECK_NOT_NULL(m, "map", NULL);
  NULL_KEY(m, key, "find", return NULL);
  if (m->kind == KIND_STRING) {
    const pmr_string *s = (const pmr_string *)key;
    return str_find(m, pmr_string_c_str(s), pmr_string_length(s));
  }
  size_t i = find_index(m, key);
  return i != NPOS ? slot_at(m, i) + m->value_offset : NULL;
}

void *pmr_impl_hashmap_find_u64_other(const pmr_hashmap *m, uint64_t k) {
  if (m->key_size == sizeof k) return pmr_hashmap_find(m, &k);
  report_bad_key(m, "find_u64", U64_ON_OTHER_SIZE);
  return NULL;
}

pmr_hashmap_status pmr_impl_hashmap_insert_u64_other(pmr_hashmap *m, uint64_t k,
                                                     const void *value,
                                                     void **value_out) {
  if (m->key_size == sizeof k)
    return pmr_hashmap_insert(m, &k, value, value_out);
  if (value_out != NULL) *value_out = NULL;
  return bad_key(m, "insert_u64", U64_ON_OTHER_SIZE);
}

bool pmr_impl_hashmap_erase_u64_other(pmr_hashmap *m, uint64_t k) {
  if (m->key_size == sizeof k) return pmr_hashmap_erase(m, &k, NULL);
  report_bad_key(m, "erase_u64", U64_ON_OTHER_SIZE);
  return false;
}

bool pmr_hashmap_contains(const pmr_hashmap *m, const void *key) {
  PMR_IMPL_CHECK_NOT_NULL(m, "map", false);
  return pmr_hashmap_find(m, key) != NULL;
}

const void *pmr_hashmap_find_key(const pmr_hashmap *m, const void *key) {
  PMR_IMPL_CHECK_NOT_NULL(m, "map", NULL);
  NULL_KEY(m, key, "find_key", return NULL);
  if (m->kind == KIND_STRING) {
    const pmr_string *s = (const pmr_string *)key;
    const size_t n = pmr_string_length(s);
    const unsigned char *r = str_find(m, pmr_string_c_str(s), n);
    if (r == NULL) return NULL;
    /* The view is the map's, written under the one-thread-at-a-time rule. */
    pmr_string *view = &((pmr_hashmap *)(uintptr_t)m)->key_view;
    pmr_impl_string_view(view, rec_text(m, r), n, m->resource);
    return view;
  }
  size_t i = find_index(m, key);
  return i != NPOS ? slot_at(m, i) : NULL;
}

/* ---- Insertion -------------------------------------------------------- */

/* Stores *value (NULL: zeros) at v, a value of m. */
static void store_value(const pmr_hashmap *m, unsigned char *v,
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

/* Adds a new key of hash h, the key_size bytes at key, to a map of any kind
 * but string; empty is what its probe gave. Returns its value, or NULL when
 * out of memory (nothing changed). */
static unsigned char *insert_new(pmr_hashmap *m, uint64_t h, size_t empty,
                                 const void *key, const void *value) {
  old_table old = {NULL, 0};
  size_t i = has_tombstones(m) ? find_free(m, h) : empty;
  if (m->growth_left == 0 && m->ctrl[i] != CTRL_DELETED) {
    size_t c = capacity_to_grow(m);
    if (c == 0 || !rebuild(m, c, &old)) return NULL;
    i = find_free(m, h);
  }
  if (m->ctrl[i] == CTRL_EMPTY) --m->growth_left;
  set_ctrl(m, i, h2(h));
  unsigned char *slot = slot_at(m, i);
  copy_bytes(slot, key, m->key_size);
  store_value(m, slot + m->value_offset, value); /* may read the old table */
  ++m->size;
  free_table(m, old);
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
  size_t empty = NPOS, i;
  if (m->kind == KIND_U64) {
    const uint64_t k = load_u64(key);
    h = hash_u64(m, k);
    i = probe_u64(m, k, h, &empty);
  } else {
    i = locate_other(m, key, &h, &empty);
  }
  if (i != NPOS) {
    unsigned char *v = slot_at(m, i) + m->value_offset;
    if (assign) store_value(m, v, value);
    *vout = v;
    return PMR_HASHMAP_EXISTED;
  }
  *vout = insert_new(m, h, empty, key, value);
  return *vout != NULL ? PMR_HASHMAP_INSERTED : PMR_HASHMAP_NOMEM;
}

/* insert_impl for the text key (p, n) of a string map: a new key is copied
 * into a new record. */
static pmr_hashmap_status str_insert(pmr_hashmap *m, const char *p, size_t n,
                                     const void *value, bool assign,
                                     void **vout) {
  uint64_t h;
  size_t empty = NPOS;
  size_t i = str_locate(m, p, n, &h, &empty);
  if (i != NPOS) {
    unsigned char *v = slot_rec(m, i);
    if (assign) store_value(m, v, value);
    *vout = v;
    return PMR_HASHMAP_EXISTED;
  }
  *vout = NULL;
  if (n > REC_MAX_LEN || m->size >= (size_t)UINT32_MAX)
    return PMR_HASHMAP_NOMEM;
  /* Get every resource first, change the map last. */
  const size_t bytes = rec_bytes(m, n);
  arena_t old = {NULL, 0, 0}; /* chunks a compaction replaced */
  i = str_make_room(m, h, empty, bytes, &old);
  if (i == NPOS) return PMR_HASHMAP_NOMEM;
  const arena_t a = map_arena(m);
  const uint32_t ref = arena_next_ref(&a);
  chunk_t *c = &m->chunks[m->nchunks - 1];
  unsigned char *r = c->base + c->used;
  c->used += bytes;
  m->rec_live += bytes;
  store_u32(r + rec_hdr(m), (uint32_t)n);
  char *text = (char *)r + rec_hdr(m) + 4;
  if (n != 0) memcpy(text, p, n); /* p may be a key of the old chunks */
  text[n] = '\0';
  store_value(m, r, value); /* value may point into the old chunks */
  if (m->ctrl[i] == CTRL_EMPTY) --m->growth_left;
  set_ctrl(m, i, h2(h));
  store_u32(slot_at(m, i), ref);
  ++m->size;
  arena_free(m, &old);
  *vout = r;
  return PMR_HASHMAP_INSERTED;
}

/* Insertion of *key, dispatched once on the kind. */
static pmr_hashmap_status insert_key(pmr_hashmap *m, const void *key,
                                     const void *value, bool assign,
                                     void **vout) {
  if (m->kind == KIND_STRING) {
    const pmr_string *s = (const pmr_string *)key;
    return str_insert(m, pmr_string_c_str(s), pmr_string_length(s), value,
                      assign, vout);
  }
  return insert_impl(m, key, value, assign, vout);
}

/* Insertion of the text (p, n) of a string or cstr map (a cstr map stores p
 * itself, which must be a C string of length n). */
static pmr_hashmap_status insert_text(pmr_hashmap *m, const char *p, size_t n,
                                      const void *value, bool assign,
                                      void **vout, const char *op) {
  *vout = NULL;
  if (m->kind == KIND_STRING) {
    if (p == NULL && n != 0)
      return bad_key(m, op, "NULL text of a length above 0");
    return str_insert(m, p, n, value, assign, vout);
  }
  if (m->kind != KIND_CSTR) return bad_key(m, op, TEXT_ON_OTHER_KIND);
  if (p == NULL || p[n] != '\0' || memchr(p, '\0', n) != NULL)
    return bad_key(m, op, "a text that is not a C string of its length");
  uint64_t h;
  size_t empty = NPOS;
  size_t i = cstr_locate(m, p, n, &h, &empty);
  if (i != NPOS) {
    unsigned char *v = slot_at(m, i) + m->value_offset;
    if (assign) store_value(m, v, value);
    *vout = v;
    return PMR_HASHMAP_EXISTED;
  }
  *vout = insert_new(m, h, empty, &p, value);
  return *vout != NULL ? PMR_HASHMAP_INSERTED : PMR_HASHMAP_NOMEM;
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

/* Erases full slot i of a string map: its record becomes dead; the last key
 * gives every record back. */
static void str_erase_at(pmr_hashmap *m, size_t i) {
  unsigned char *r = slot_rec(m, i);
  const uint32_t w = rec_word(m, r);
  const size_t b = rec_bytes(m, w);
  store_u32(r + rec_hdr(m), w | REC_DEAD);
  m->rec_live -= b;
  m->rec_dead += b;
  --m->size;
  m->growth_left += pmr_impl_hashmap_free_ctrl(m->ctrl, m->mask, i);
  if (m->size == 0) str_release_records(m);
}

static inline void erase_at(pmr_hashmap *m, size_t i) {
  --m->size;
  m->growth_left += pmr_impl_hashmap_free_ctrl(m->ctrl, m->mask, i);
}

/* Erases slot i (NPOS: absent) of a string map / of a map of any other
 * kind, the value copied to value_out first when it is not NULL. */
static bool str_erase_index(pmr_hashmap *m, size_t i, void *value_out) {
  if (i == NPOS) return false;
  if (value_out != NULL && m->value_size != 0)
    memcpy(value_out, slot_rec(m, i), m->value_size);
  str_erase_at(m, i);
  return true;
}
static bool erase_index(pmr_hashmap *m, size_t i, void *value_out) {
  if (i == NPOS) return false;
  if (value_out != NULL && m->value_size != 0)
    memcpy(value_out, slot_at(m, i) + m->value_offset, m->value_size);
  erase_at(m, i);
  return true;
}

bool pmr_hashmap_erase(pmr_hashmap *m, const void *key, void *value_out) {
  PMR_IMPL_CHECK_NOT_NULL(m, "map", false);
  NULL_KEY(m, key, "erase", return false);
  if (m->kind == KIND_STRING) {
    const pmr_string *s = (const pmr_string *)key;
    uint64_t h;
    size_t empty;
    return str_erase_index(
        m, str_locate(m, pmr_string_c_str(s), pmr_string_length(s), &h, &empty),
        value_out);
  }
  return erase_index(m, find_index(m, key), value_out);
}

/* ---- Text keys -------------------------------------------------------- */

void *pmr_hashmap_find_str(const pmr_hashmap *m, const char *p, size_t n) {
  PMR_IMPL_CHECK_NOT_NULL(m, "map", NULL);
  if (m->kind == KIND_STRING) {
    size_t i = find_text_index(m, p, n, true, "find_str");
    return i != NPOS ? slot_rec(m, i) : NULL;
  }
  if (PMR_UNLIKELY(m->kind != KIND_CSTR)) {
    report_bad_key(m, "find_str", TEXT_ON_OTHER_KIND);
    return NULL;
  }
  size_t i = find_text_index(m, p, n, false, "find_str");
  return i != NPOS ? slot_at(m, i) + m->value_offset : NULL;
}

pmr_hashmap_status pmr_hashmap_insert_str(pmr_hashmap *m, const char *p,
                                          size_t n, const void *value,
                                          void **value_out) {
  PMR_IMPL_CHECK_NOT_NULL(m, "map", PMR_HASHMAP_BADARG);
  void *v;
  pmr_hashmap_status st = insert_text(m, p, n, value, false, &v, "insert_str");
  if (value_out != NULL) *value_out = v;
  return st;
}

pmr_hashmap_status pmr_hashmap_insert_or_assign_str(pmr_hashmap *m,
                                                    const char *p, size_t n,
                                                    const void *value) {
  PMR_IMPL_CHECK_NOT_NULL(m, "map", PMR_HASHMAP_BADARG);
  void *v;
  return insert_text(m, p, n, value, true, &v, "insert_or_assign_str");
}

void *pmr_hashmap_emplace_str(pmr_hashmap *m, const char *p, size_t n,
                              bool *inserted) {
  PMR_IMPL_CHECK_NOT_NULL(m, "map", NULL);
  void *v;
  pmr_hashmap_status st = insert_text(m, p, n, NULL, false, &v, "emplace_str");
  if (inserted != NULL) *inserted = st == PMR_HASHMAP_INSERTED;
  return v;
}

bool pmr_hashmap_erase_str(pmr_hashmap *m, const char *p, size_t n,
                           void *value_out) {
  PMR_IMPL_CHECK_NOT_NULL(m, "map", false);
  if (m->kind == KIND_STRING)
    return str_erase_index(m, find_text_index(m, p, n, true, "erase_str"),
                           value_out);
  if (PMR_UNLIKELY(m->kind != KIND_CSTR)) {
    report_bad_key(m, "erase_str", TEXT_ON_OTHER_KIND);
    return false;
  }
  return erase_index(m, find_text_index(m, p, n, false, "erase_str"),
                     value_out);
}

/* ---- Capacity --------------------------------------------------------- */

bool pmr_hashmap_reserve(pmr_hashmap *m, size_t n) {
  PMR_IMPL_CHECK_NOT_NULL(m, "map", false);
  if (n <= m->size + m->growth_left) return true;
  size_t c = capacity_for(n);
  if (c != 0 && c < m->capacity) c = m->capacity; /* only tombstones to drop */
  old_table old;
  if (m->kind == KIND_STRING) {
    const arena_t a = map_arena(m);
    if (c == 0 || !str_index(m, &a, c, &old)) return false;
  } else if (c == 0 || !rebuild(m, c, &old)) {
    return false;
  }
  free_table(m, old);
  return true;
}

bool pmr_hashmap_shrink_to_fit(pmr_hashmap *m) {
  PMR_IMPL_CHECK_NOT_NULL(m, "map", false);
  size_t c = m->size != 0 ? capacity_for(m->size) : 0;
  bool tombstones =
      m->capacity != 0 && m->growth_left != max_load(m->capacity) - m->size;
  if (m->kind == KIND_STRING) {
    if (c == m->capacity && !tombstones && m->rec_dead == 0) return true;
    if (c == 0) {
      pmr_hashmap_destroy(m);
      return true;
    }
    arena_t old;
    if (!str_compact(m, c, 0, &old)) return false;
    arena_free(m, &old);
    return true;
  }
  if (c == m->capacity && !tombstones) return true;
  old_table old;
  if (!rebuild(m, c, &old)) return false;
  free_table(m, old);
  return true;
}

void pmr_hashmap_clear(pmr_hashmap *m) {
  PMR_IMPL_CHECK_NOT_NULL(m, "map", );
  if (m->capacity == 0) return;
  if (m->kind == KIND_STRING) str_release_records(m);
  memset(m->ctrl, CTRL_EMPTY, m->capacity + GROUP);
  m->size = 0;
  m->growth_left = max_load(m->capacity);
}

/* ---- Probe statistics ------------------------------------------------- */

static unsigned popcount(bits_t b) {
#if defined(__GNUC__) || defined(__clang__)
  return (unsigned)__builtin_popcount(b);
#else
  unsigned n = 0;
  for (; b != 0; b &= b - 1) ++n;
  return n;
#endif
}

/* Replays the lookup of every key (probe_generic's order: groups along the
 * sequence, matching slots lowest first) up to the group whose window holds
 * its slot. */
pmr_hashmap_stats pmr_hashmap_probe_stats(const pmr_hashmap *m) {
  PMR_IMPL_CHECK_NOT_NULL(m, "map", (pmr_hashmap_stats){0});
  pmr_hashmap_stats st = {0, 0, 0, 0};
  const size_t mask = m->mask;
  for (size_t i = 0; i < m->capacity; ++i) {
    if (!is_full(m->ctrl[i])) continue;
    uint64_t h;
    if (m->kind == KIND_STRING) {
      const unsigned char *r = slot_rec(m, i);
      h = hash_of(m, rec_text(m, r), rec_word(m, r));
    } else {
      h = hash_key(m, slot_at(m, i));
    }
    size_t pos = h1(h) & mask, step = 0, groups = 1;
    for (;; ++groups) {
      const bits_t b = pmr_impl_hashmap_match(m->ctrl + pos, h2(h));
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

/* ---- Iteration -------------------------------------------------------- */

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
    const chunk_t *ch = &m->chunks[k];
    while (off < ch->used) {
      unsigned char *r = ch->base + off;
      const uint32_t w = rec_word(m, r);
      off += rec_bytes(m, w & ~REC_DEAD);
      if (w & REC_DEAD) continue;
      it->impl_next = k;
      it->impl_off = off;
      pmr_impl_string_view(&it->impl_key, rec_text(m, r), w, m->resource);
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
  const uint32_t w = rec_word(m, r);
  if (w & REC_DEAD) return;
  uint64_t h;
  size_t empty;
  const size_t i = str_locate(m, rec_text(m, r), w, &h, &empty);
  if (i == NPOS || slot_rec(m, i) != r) return;
  str_erase_at(m, i);
}

bool pmr_hashmap_iter_next(pmr_hashmap_iter *it) {
  PMR_IMPL_CHECK_NOT_NULL(it, "iterator", false);
#ifdef PMR_DEBUG
  if (it->impl_map == NULL) return false; /* from a NULL map, reported */
#endif
  const pmr_hashmap *m = it->impl_map;
  if (m->kind == KIND_STRING) return str_iter_next(it);
  size_t i = it->impl_next;
  /* Skip whole groups with no full slot. */
  while (i + GROUP <= m->capacity &&
         group_empty_or_deleted(m->ctrl + i) == 0xFFFFu)
    i += GROUP;
  while (i < m->capacity && !is_full(m->ctrl[i])) ++i;
  if (i >= m->capacity) {
    it->impl_next = m->capacity;
    it->key = NULL;
    it->value = NULL;
    return false;
  }
  it->impl_next = i + 1;
  it->key = slot_at(m, i);
  it->value = slot_at(m, i) + m->value_offset;
  return true;
}

void pmr_hashmap_iter_erase(pmr_hashmap_iter *it) {
  PMR_IMPL_CHECK_NOT_NULL(it, "iterator", );
#ifdef PMR_DEBUG
  if (it->impl_map == NULL) return; /* from a NULL map, reported */
#endif
  pmr_hashmap *m = it->impl_map;
  if (m->kind == KIND_STRING) {
    str_iter_erase(it);
    it->key = NULL;
    it->value = NULL;
    return;
  }
  if (it->impl_next == 0 || it->impl_next > m->capacity) return;
  size_t i = it->impl_next - 1;
  if (!is_full(m->ctrl[i]) || it->key != slot_at(m, i)) return;
  erase_at(m, i);
  it->key = NULL;
  it->value = NULL;
}

/* ---- Copies, moves, swap ---------------------------------------------- */

static bool same_config(const pmr_hashmap *a, const pmr_hashmap *b) {
  return a->kind == b->kind && a->key_size == b->key_size &&
         a->key_align == b->key_align && a->value_size == b->value_size &&
         a->value_align == b->value_align && a->hash == b->hash &&
         a->equal == b->equal && a->ctx == b->ctx;
}

/* Copies src's table and records (chunk by chunk: the references stay
 * valid) into dst, a string map over its own resource with neither. */
static bool str_copy(pmr_hashmap *dst, const pmr_hashmap *src) {
  arena_t a = {NULL, 0, 0};
  if (src->nchunks != 0) {
    a.chunks = pmr_allocate(dst->resource, src->nchunks * sizeof(chunk_t),
                            _Alignof(chunk_t));
    if (a.chunks == NULL) return false;
    a.cap = src->nchunks;
  }
  for (size_t k = 0; k < src->nchunks; ++k) {
    const chunk_t *s = &src->chunks[k];
    const size_t size = s->used != 0 ? s->used : rec_align(src);
    unsigned char *base = pmr_allocate(dst->resource, size, rec_align(src));
    if (base == NULL) {
      arena_free(dst, &a);
      return false;
    }
    memcpy(base, s->base, s->used);
    a.chunks[a.nchunks++] = (chunk_t){base, size, s->used};
  }
  const size_t bytes = table_bytes(src, src->capacity);
  unsigned char *block = pmr_allocate(dst->resource, bytes, src->slot_align);
  if (block == NULL) {
    arena_free(dst, &a);
    return false;
  }
  memcpy(block, src->ctrl, bytes);
  dst->ctrl = block;
  dst->slots = block + slots_offset(src, src->capacity);
  dst->mask = src->mask;
  dst->capacity = src->capacity;
  dst->size = src->size;
  dst->growth_left = src->growth_left;
  set_arena(dst, a);
  dst->rec_live = src->rec_live;
  dst->rec_dead = src->rec_dead;
  return true;
}

bool pmr_hashmap_init_copy(pmr_hashmap *dst, const pmr_hashmap *src,
                           pmr_mem_resource *r) {
  PMR_IMPL_CHECK_NOT_NULL(dst, "map", false);
  PMR_IMPL_CHECK_NOT_NULL(src, "map", false);
  *dst = *src;
  dst->resource = pmr_resource_or_default(r);
  set_empty_table(dst);
  set_no_records(dst);
  if (src->capacity == 0) return true;
  if (src->kind == KIND_STRING) return str_copy(dst, src);
  const size_t bytes = table_bytes(src, src->capacity);
  unsigned char *block = pmr_allocate(dst->resource, bytes, src->slot_align);
  if (block == NULL) return false;
  const size_t off = slots_offset(src, src->capacity);
  memcpy(block, src->ctrl, src->capacity + GROUP);
  unsigned char *slots = block + off;
  for (size_t i = 0; i < src->capacity; ++i) {
    if (!is_full(src->ctrl[i])) continue;
    unsigned char *d = slots + i * src->slot_size;
    const unsigned char *s = slot_at(src, i);
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
  set_empty_table(src);
  set_no_records(src);
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
    set_empty_table(src);
    set_no_records(src);
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
