/* pmr_hashmap: string maps and their key storage (the records, in chunks the
 * map owns; their layout: internal/hashmap_impl.h), and the text-key
 * functions (_find_str, _insert_str, ...), which also serve cstr maps. */
#include <string.h>

#include "containers/internal/hashmap_impl.h"
#include "containers/pmr_hashmap.h"

#define GROUP PMR_IMPL_HASHMAP_GROUP
#define NPOS PMR_IMPL_HASHMAP_NPOS

typedef pmr_impl_hashmap_chunk chunk_t;
typedef pmr_impl_hashmap_old_table old_table;

#define REC_UNIT PMR_IMPL_HASHMAP_REC_UNIT
#define REC_OFF_BITS PMR_IMPL_HASHMAP_REC_OFF_BITS
#define REC_MAX_CHUNKS ((size_t)1 << (32 - REC_OFF_BITS))
#define REC_FIRST_CHUNK ((size_t)256)
#define REC_BIG_CHUNK ((size_t)REC_UNIT << REC_OFF_BITS)
#define REC_DEAD PMR_IMPL_HASHMAP_REC_DEAD
#define REC_MAX_LEN 0x7fffffffu

#define TEXT_ON_OTHER_KIND "a text key on a map of neither string nor cstr keys"

/* ---- Chunks ----------------------------------------------------------- */

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

void pmr_impl_hashmap_set_no_records(pmr_hashmap *m) {
  m->chunks = NULL;
  m->nchunks = m->chunks_cap = 0;
  m->rec_live = m->rec_dead = 0;
}

/* Gives every chunk of a, and its chunk list, back. */
static void arena_free(const pmr_hashmap *m, arena_t *a) {
  for (size_t k = 0; k < a->nchunks; ++k)
    pmr_deallocate(m->resource, a->chunks[k].base, a->chunks[k].size,
                   pmr_impl_hashmap_rec_align(m));
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
  unsigned char *base =
      pmr_allocate(m->resource, size, pmr_impl_hashmap_rec_align(m));
  if (base == NULL) return false;
  if (a->nchunks == a->cap) {
    size_t cap = a->cap != 0 ? a->cap * 2 : 4;
    chunk_t *list =
        pmr_allocate(m->resource, cap * sizeof(chunk_t), _Alignof(chunk_t));
    if (list == NULL) {
      pmr_deallocate(m->resource, base, size, pmr_impl_hashmap_rec_align(m));
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

/* ---- The table, compaction -------------------------------------------- */

/* Builds a table of capacity c (> 0) over the live records of a and puts it
 * in place of m's; the old block goes to *old. False, nothing changed, when
 * the block cannot be had. */
static bool str_index(pmr_hashmap *m, const arena_t *a, size_t c,
                      old_table *old) {
  const size_t bytes = pmr_impl_hashmap_table_bytes(m, c);
  unsigned char *block =
      bytes != 0 ? pmr_allocate(m->resource, bytes, m->slot_align) : NULL;
  if (block == NULL) return false;
  *old = pmr_impl_hashmap_current_table(m);
  m->ctrl = block;
  m->slots = block + pmr_impl_hashmap_slots_offset(m, c);
  m->mask = c - 1;
  m->capacity = c;
  memset(m->ctrl, PMR_IMPL_HASHMAP_EMPTY, c + GROUP);
  for (size_t k = 0; k < a->nchunks; ++k) {
    const chunk_t *ch = &a->chunks[k];
    for (size_t off = 0; off < ch->used;) {
      const unsigned char *r = ch->base + off;
      const uint32_t w = pmr_impl_hashmap_rec_word(m, r);
      if (!(w & REC_DEAD)) {
        const uint64_t h =
            pmr_impl_hashmap_hash_of(m, pmr_impl_hashmap_rec_text(m, r), w);
        const size_t j = pmr_impl_hashmap_find_free(m, h);
        pmr_impl_hashmap_set_ctrl(m->ctrl, m->mask, j, pmr_impl_hashmap_h2(h));
        pmr_impl_hashmap_store_u32(
            pmr_impl_hashmap_slot(m, j),
            (uint32_t)(k << REC_OFF_BITS | off / REC_UNIT));
      }
      off += pmr_impl_hashmap_rec_bytes(m, w & ~REC_DEAD);
    }
  }
  m->growth_left = pmr_impl_hashmap_max_load(c) - m->size;
  return true;
}

bool pmr_impl_hashmap_str_reindex(pmr_hashmap *m, size_t c, old_table *old) {
  const arena_t a = map_arena(m);
  return str_index(m, &a, c, old);
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
      const uint32_t w = pmr_impl_hashmap_rec_word(m, r);
      const size_t b = pmr_impl_hashmap_rec_bytes(m, w & ~REC_DEAD);
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
  pmr_impl_hashmap_free_table(m, old_index);
  *old = cur;
  set_arena(m, fresh);
  m->rec_dead = 0;
  return true;
}

bool pmr_impl_hashmap_str_shrink(pmr_hashmap *m, size_t c) {
  arena_t old;
  if (!str_compact(m, c, 0, &old)) return false;
  arena_free(m, &old);
  return true;
}

void pmr_impl_hashmap_str_release_records(pmr_hashmap *m) {
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
  size_t i = pmr_impl_hashmap_has_tombstones(m)
                 ? pmr_impl_hashmap_find_free(m, h)
                 : empty;
  const bool grow =
      m->growth_left == 0 && m->ctrl[i] != PMR_IMPL_HASHMAP_DELETED;
  arena_t a = map_arena(m);
  if (arena_fits(&a, bytes) && !grow) return i;
  if (!arena_fits(&a, bytes) && m->rec_dead != 0 &&
      m->rec_dead >= m->rec_live) {
    size_t c = pmr_impl_hashmap_capacity_for(m->size + 1);
    if (c != 0 && c < m->capacity) c = m->capacity;
    if (c == 0 || !str_compact(m, c, bytes, old)) return NPOS;
    return pmr_impl_hashmap_find_free(m, h);
  }
  const bool added = !arena_fits(&a, bytes);
  if (added) {
    if (!arena_add_chunk(m, &a, bytes)) return NPOS;
    set_arena(m, a);
  }
  if (grow) {
    const size_t c = pmr_impl_hashmap_capacity_to_grow(m);
    old_table old_index;
    if (c == 0 || !str_index(m, &a, c, &old_index)) {
      if (added) { /* the chunk (and a list made for it) goes back */
        chunk_t *last = &m->chunks[--m->nchunks];
        pmr_deallocate(m->resource, last->base, last->size,
                       pmr_impl_hashmap_rec_align(m));
        if (m->nchunks == 0) pmr_impl_hashmap_str_release_records(m);
      }
      return NPOS;
    }
    pmr_impl_hashmap_free_table(m, old_index);
    i = pmr_impl_hashmap_find_free(m, h);
  }
  return i;
}

/* Copies src's table and records (chunk by chunk: the references stay
 * valid). */
bool pmr_impl_hashmap_str_copy(pmr_hashmap *dst, const pmr_hashmap *src) {
  arena_t a = {NULL, 0, 0};
  if (src->nchunks != 0) {
    a.chunks = pmr_allocate(dst->resource, src->nchunks * sizeof(chunk_t),
                            _Alignof(chunk_t));
    if (a.chunks == NULL) return false;
    a.cap = src->nchunks;
  }
  for (size_t k = 0; k < src->nchunks; ++k) {
    const chunk_t *s = &src->chunks[k];
    const size_t size =
        s->used != 0 ? s->used : pmr_impl_hashmap_rec_align(src);
    unsigned char *base =
        pmr_allocate(dst->resource, size, pmr_impl_hashmap_rec_align(src));
    if (base == NULL) {
      arena_free(dst, &a);
      return false;
    }
    memcpy(base, s->base, s->used);
    a.chunks[a.nchunks++] = (chunk_t){base, size, s->used};
  }
  const size_t bytes = pmr_impl_hashmap_table_bytes(src, src->capacity);
  unsigned char *block = pmr_allocate(dst->resource, bytes, src->slot_align);
  if (block == NULL) {
    arena_free(dst, &a);
    return false;
  }
  memcpy(block, src->ctrl, bytes);
  dst->ctrl = block;
  dst->slots = block + pmr_impl_hashmap_slots_offset(src, src->capacity);
  dst->mask = src->mask;
  dst->capacity = src->capacity;
  dst->size = src->size;
  dst->growth_left = src->growth_left;
  set_arena(dst, a);
  dst->rec_live = src->rec_live;
  dst->rec_dead = src->rec_dead;
  return true;
}

/* ---- Lookup, insertion, erasure --------------------------------------- */

void *pmr_impl_hashmap_str_find(const pmr_hashmap *m, const char *p, size_t n) {
  uint64_t h;
  size_t empty;
  const size_t i = pmr_impl_hashmap_str_locate(m, p, n, &h, &empty);
  return i != NPOS ? pmr_impl_hashmap_slot_rec(m, i) : NULL;
}

/* A new key is copied into a new record. */
pmr_hashmap_status pmr_impl_hashmap_str_insert(pmr_hashmap *m, const char *p,
                                               size_t n, const void *value,
                                               bool assign, void **vout) {
  uint64_t h;
  size_t empty = NPOS;
  size_t i = pmr_impl_hashmap_str_locate(m, p, n, &h, &empty);
  if (i != NPOS) {
    unsigned char *v = pmr_impl_hashmap_slot_rec(m, i);
    if (assign) pmr_impl_hashmap_store_value(m, v, value);
    *vout = v;
    return PMR_HASHMAP_EXISTED;
  }
  *vout = NULL;
  if (n > REC_MAX_LEN || m->size >= (size_t)UINT32_MAX)
    return PMR_HASHMAP_NOMEM;
  /* Get every resource first, change the map last. */
  const size_t bytes = pmr_impl_hashmap_rec_bytes(m, n);
  arena_t old = {NULL, 0, 0}; /* chunks a compaction replaced */
  i = str_make_room(m, h, empty, bytes, &old);
  if (i == NPOS) return PMR_HASHMAP_NOMEM;
  const arena_t a = map_arena(m);
  const uint32_t ref = arena_next_ref(&a);
  chunk_t *c = &m->chunks[m->nchunks - 1];
  unsigned char *r = c->base + c->used;
  c->used += bytes;
  m->rec_live += bytes;
  pmr_impl_hashmap_store_u32(r + pmr_impl_hashmap_rec_hdr(m), (uint32_t)n);
  char *text = (char *)r + pmr_impl_hashmap_rec_hdr(m) + 4;
  if (n != 0) memcpy(text, p, n); /* p may be a key of the old chunks */
  text[n] = '\0';
  pmr_impl_hashmap_store_value(m, r, value); /* may point into old chunks */
  if (m->ctrl[i] == PMR_IMPL_HASHMAP_EMPTY) --m->growth_left;
  pmr_impl_hashmap_set_ctrl(m->ctrl, m->mask, i, pmr_impl_hashmap_h2(h));
  pmr_impl_hashmap_store_u32(pmr_impl_hashmap_slot(m, i), ref);
  ++m->size;
  arena_free(m, &old);
  *vout = r;
  return PMR_HASHMAP_INSERTED;
}

void pmr_impl_hashmap_str_erase_at(pmr_hashmap *m, size_t i) {
  unsigned char *r = pmr_impl_hashmap_slot_rec(m, i);
  const uint32_t w = pmr_impl_hashmap_rec_word(m, r);
  const size_t b = pmr_impl_hashmap_rec_bytes(m, w);
  pmr_impl_hashmap_store_u32(r + pmr_impl_hashmap_rec_hdr(m), w | REC_DEAD);
  m->rec_live -= b;
  m->rec_dead += b;
  --m->size;
  m->growth_left += pmr_impl_hashmap_free_ctrl(m->ctrl, m->mask, i);
  if (m->size == 0) pmr_impl_hashmap_str_release_records(m);
}

/* Erases slot i (NPOS: absent) of a string map, the value copied to
 * value_out first when it is not NULL. */
static bool str_erase_index(pmr_hashmap *m, size_t i, void *value_out) {
  if (i == NPOS) return false;
  if (value_out != NULL && m->value_size != 0)
    memcpy(value_out, pmr_impl_hashmap_slot_rec(m, i), m->value_size);
  pmr_impl_hashmap_str_erase_at(m, i);
  return true;
}

bool pmr_impl_hashmap_str_erase(pmr_hashmap *m, const char *p, size_t n,
                                void *value_out) {
  uint64_t h;
  size_t empty;
  return str_erase_index(m, pmr_impl_hashmap_str_locate(m, p, n, &h, &empty),
                         value_out);
}

/* ---- Text keys -------------------------------------------------------- */

/* The slot holding the text (p, n) in a string map when string, else in a
 * cstr map, or NPOS; also for NULL bytes with a length (a caller error,
 * reported by debug builds). */
static size_t find_text_index(const pmr_hashmap *m, const char *p, size_t n,
                              bool string, const char *op) {
  if (PMR_UNLIKELY(p == NULL && n != 0)) {
    pmr_impl_hashmap_report_bad_key(m, op, "NULL text of a length above 0");
    return NPOS;
  }
  uint64_t h;
  size_t empty;
  return string ? pmr_impl_hashmap_str_locate(m, p, n, &h, &empty)
                : pmr_impl_hashmap_cstr_locate(m, p, n, &h, &empty);
}

/* Insertion of the text (p, n) of a string or cstr map (a cstr map stores p
 * itself, which must be a C string of length n). */
static pmr_hashmap_status insert_text(pmr_hashmap *m, const char *p, size_t n,
                                      const void *value, bool assign,
                                      void **vout, const char *op) {
  *vout = NULL;
  if (m->kind == PMR_IMPL_HASHMAP_KIND_STRING) {
    if (p == NULL && n != 0)
      return pmr_impl_hashmap_bad_key(m, op, "NULL text of a length above 0");
    return pmr_impl_hashmap_str_insert(m, p, n, value, assign, vout);
  }
  if (m->kind != PMR_IMPL_HASHMAP_KIND_CSTR)
    return pmr_impl_hashmap_bad_key(m, op, TEXT_ON_OTHER_KIND);
  if (p == NULL || p[n] != '\0' || memchr(p, '\0', n) != NULL)
    return pmr_impl_hashmap_bad_key(
        m, op, "a text that is not a C string of its length");
  uint64_t h;
  size_t empty = NPOS;
  size_t i = pmr_impl_hashmap_cstr_locate(m, p, n, &h, &empty);
  if (i != NPOS) {
    unsigned char *v = pmr_impl_hashmap_slot(m, i) + m->value_offset;
    if (assign) pmr_impl_hashmap_store_value(m, v, value);
    *vout = v;
    return PMR_HASHMAP_EXISTED;
  }
  *vout = pmr_impl_hashmap_insert_new(m, h, empty, &p, value);
  return *vout != NULL ? PMR_HASHMAP_INSERTED : PMR_HASHMAP_NOMEM;
}

void *pmr_hashmap_find_str(const pmr_hashmap *m, const char *p, size_t n) {
  PMR_IMPL_CHECK_NOT_NULL(m, "map", NULL);
  if (m->kind == PMR_IMPL_HASHMAP_KIND_STRING) {
    size_t i = find_text_index(m, p, n, true, "find_str");
    return i != NPOS ? pmr_impl_hashmap_slot_rec(m, i) : NULL;
  }
  if (PMR_UNLIKELY(m->kind != PMR_IMPL_HASHMAP_KIND_CSTR)) {
    pmr_impl_hashmap_report_bad_key(m, "find_str", TEXT_ON_OTHER_KIND);
    return NULL;
  }
  size_t i = find_text_index(m, p, n, false, "find_str");
  return i != NPOS ? pmr_impl_hashmap_slot(m, i) + m->value_offset : NULL;
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
  if (m->kind == PMR_IMPL_HASHMAP_KIND_STRING)
    return str_erase_index(m, find_text_index(m, p, n, true, "erase_str"),
                           value_out);
  if (PMR_UNLIKELY(m->kind != PMR_IMPL_HASHMAP_KIND_CSTR)) {
    pmr_impl_hashmap_report_bad_key(m, "erase_str", TEXT_ON_OTHER_KIND);
    return false;
  }
  return pmr_impl_hashmap_erase_index(
      m, find_text_index(m, p, n, false, "erase_str"), value_out);
}
