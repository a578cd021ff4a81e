/* Size classes, chunks and oversize blocks shared by the pool resources. */
#include "resources/internal/pool_core.h"

#include <errno.h>

#include "resources/internal/debug_track.h"
#include "resources/internal/spin_lock.h"

/* Class of each size s <= 1024, indexed by (s + 7) / 8. Built by hand from
 * the class rule in pool_core.h; pmr_impl_pool_class_of is tested against
 * pmr_impl_pool_class_size for every size. */
#define C8(x) x, x, x, x, x, x, x, x
const uint8_t
    pmr_impl_pool_class_table[PMR_IMPL_POOL_TABLE_LIMIT / 8 + 1] =
        {
            0,      0,      1,      2,      3,      4,
            5,      6,      7, /* s = 0..64, step 8 */
            8,      8,      9,      9,      10,     10,
            11,     11, /* 72..128: 80, 96, 112, 128 */
            12,     12,     12,     12,     13,     13,
            13,     13,     14,     14,     14,     14,
            15,     15,     15,     15,     /* ..256 */
            C8(16), C8(17), C8(18), C8(19), /* ..512 */
            C8(20), C8(20), C8(21), C8(21), C8(22), C8(22),
            C8(23), C8(23), /* ..1024 */
};
#undef C8

/* Kept at the end of each chunk. */
struct pmr_impl_pool_chunk {
  struct pmr_impl_pool_chunk *next;
  char *start;
  size_t size, alignment;
};
typedef struct pmr_impl_pool_chunk chunk;

static size_t clamp(size_t v, size_t dflt, size_t max) {
  if (v == 0) return dflt;
  return v > max ? max : v;
}

pmr_pool_options pmr_impl_pool_effective_options(const pmr_pool_options *opts) {
  pmr_pool_options o = {0, 0, 0};
  if (opts != NULL) o = *opts;
  o.max_blocks_per_chunk =
      clamp(o.max_blocks_per_chunk, PMR_POOL_DEFAULT_MAX_BLOCKS_PER_CHUNK,
            PMR_POOL_MAX_MAX_BLOCKS_PER_CHUNK);
  size_t largest =
      clamp(o.largest_required_pool_block, PMR_POOL_DEFAULT_LARGEST_BLOCK,
            PMR_POOL_MAX_LARGEST_BLOCK);
  o.largest_required_pool_block =
      pmr_impl_pool_class_size(pmr_impl_pool_class_of(largest));
  if (o.max_free_bytes == 0) o.max_free_bytes = PMR_POOL_DEFAULT_MAX_FREE_BYTES;
  return o;
}

/* Largest power of two dividing b, capped: the alignment every block of
 * class b has when its chunk starts that aligned. */
static size_t chunk_alignment(size_t block) {
  size_t a = block & (~block + 1);
  if (a < PMR_MAX_ALIGN) a = PMR_MAX_ALIGN;
  return a > PMR_IMPL_POOL_MAX_BLOCK_ALIGN ? PMR_IMPL_POOL_MAX_BLOCK_ALIGN : a;
}

/* Empties every class; the first chunk of each will hold about
 * PMR_IMPL_POOL_FIRST_CHUNK_BYTES, within max_blocks. */
static void reset_classes(pmr_impl_pool_core *c) {
  for (unsigned i = 0; i < PMR_IMPL_POOL_CLASSES; ++i) {
    pmr_impl_pool_class *k = &c->classes[i];
    k->free = NULL;
    k->cur = k->end = NULL;
    k->block = (uint32_t)pmr_impl_pool_class_size(i);
    size_t n = PMR_IMPL_POOL_FIRST_CHUNK_BYTES / k->block;
    if (n == 0) n = 1;
    k->next_blocks = (uint32_t)(n < c->max_blocks ? n : c->max_blocks);
  }
  c->empty.free = NULL;
  c->empty.cur = c->empty.end = NULL;
  c->empty.block = UINT32_MAX;
  c->empty.next_blocks = 0;
}

void pmr_impl_pool_core_init(pmr_impl_pool_core *c,
                             const pmr_pool_options *opts,
                             pmr_mem_resource *upstream) {
  pmr_pool_options o = pmr_impl_pool_effective_options(opts);
  c->upstream = pmr_resource_or_default(upstream);
  c->largest = o.largest_required_pool_block;
  c->max_blocks = o.max_blocks_per_chunk;
  c->chunks = NULL;
  reset_classes(c);
  for (size_t i = 0; i <= PMR_IMPL_POOL_TABLE_LIMIT / 8; ++i) {
    size_t s = i * 8; /* the largest size with this index */
    const pmr_impl_pool_class *k =
        i == 0 || s > c->largest ? &c->empty
                                 : &c->classes[pmr_impl_pool_class_table[i]];
    c->small[i] = (uint16_t)((const char *)k - (const char *)c);
  }
}

void pmr_impl_pool_core_release(pmr_impl_pool_core *c) {
  chunk *ch = c->chunks;
  while (ch != NULL) {
    chunk *next = ch->next;
    PMR_IMPL_UNDEFINED(ch->start,
                       (size_t)((char *)ch - ch->start)); /* open again */
    pmr_deallocate(c->upstream, ch->start, ch->size, ch->alignment);
    ch = next;
  }
  c->chunks = NULL;
  reset_classes(c);
}

pmr_impl_pool_class *pmr_impl_pool_find_large(pmr_impl_pool_core *c, size_t s,
                                              size_t alignment) {
  if (s > c->largest || alignment > PMR_IMPL_POOL_MAX_BLOCK_ALIGN)
    return &c->empty;
  return &c->classes[pmr_impl_pool_class_of(s)];
}

size_t pmr_impl_pool_core_reserve(pmr_impl_pool_core *c,
                                  pmr_impl_pool_class *k) {
  size_t n = k->next_blocks;
  /* Geometric growth up to the block and byte caps. */
  size_t cap = PMR_IMPL_POOL_MAX_CHUNK_BYTES / k->block;
  if (cap > c->max_blocks) cap = c->max_blocks;
  if (cap == 0) cap = 1;
  k->next_blocks = (uint32_t)(n * 2 < cap ? n * 2 : cap);
  return n;
}

char *pmr_impl_pool_core_new_chunk(pmr_impl_pool_core *c, size_t block,
                                   size_t n, struct pmr_impl_pool_chunk **out) {
  size_t bytes = n * block; /* <= 2^20 blocks of <= 1 MiB: no overflow */
  size_t size = bytes + sizeof(chunk);
  size_t align = chunk_alignment(block);
  char *start = (char *)pmr_allocate(c->upstream, size, align);
  if (start == NULL) return NULL;
  chunk *ch = (chunk *)(void *)(start + bytes);
  ch->start = start;
  ch->size = size;
  ch->alignment = align;
  ch->next = NULL;
  PMR_IMPL_NOACCESS(start, bytes);
  *out = ch;
  return start;
}

void pmr_impl_pool_core_link_chunk(pmr_impl_pool_core *c,
                                   struct pmr_impl_pool_chunk *ch) {
  ch->next = c->chunks;
  c->chunks = ch;
}

void *pmr_impl_pool_core_refill(pmr_impl_pool_core *c, pmr_impl_pool_class *k) {
  size_t n = pmr_impl_pool_core_reserve(c, k);
  chunk *ch;
  char *start = pmr_impl_pool_core_new_chunk(c, k->block, n, &ch);
  if (start == NULL) {
    k->next_blocks = (uint32_t)n; /* as if never asked */
    return NULL;
  }
  pmr_impl_pool_core_link_chunk(c, ch);
  /* Hand out the first block, keep the rest to carve. */
  PMR_IMPL_UNDEFINED(start, k->block);
  k->cur = start + k->block;
  k->end = start + n * k->block;
  return start;
}

bool pmr_impl_pool_debug_free(struct pmr_impl_track *t, const char *kind,
                              const void *resource, void *p, size_t bytes,
                              size_t alignment, bool pooled) {
  size_t b = 0, a = 0;
  switch (pmr_impl_track_remove(t, p, bytes, alignment, pooled, &b, &a)) {
    case PMR_IMPL_TRACK_OK:
      return true;
    case PMR_IMPL_TRACK_DOUBLE_FREE:
      pmr_report_misuse(
          "%s %p: double free of %p (deallocate(%zu bytes, alignment %zu)); "
          "ignored",
          kind, resource, p, bytes, alignment);
      return false;
    case PMR_IMPL_TRACK_MISMATCH:
      pmr_report_misuse(
          "%s %p: %p was allocated with %zu bytes, alignment %zu, but "
          "deallocated with %zu bytes, alignment %zu; ignored",
          kind, resource, p, b, a, bytes, alignment);
      return false;
    default:
      pmr_report_misuse(
          "%s %p: deallocate(%p, %zu bytes, alignment %zu) of a pointer it "
          "never gave out; ignored",
          kind, resource, p, bytes, alignment);
      return false;
  }
}

bool pmr_impl_pool_debug_free_locked(struct pmr_impl_track *t, void *lock,
                                     const char *kind, const void *resource,
                                     void *p, size_t bytes, size_t alignment,
                                     bool pooled) {
  pmr_impl_spin_lock(lock);
  bool ok =
      pmr_impl_pool_debug_free(t, kind, resource, p, bytes, alignment, pooled);
  pmr_impl_spin_unlock(lock);
  return ok;
}

void pmr_impl_pool_debug_add_locked(struct pmr_impl_track *t, void *lock,
                                    const void *p, size_t bytes,
                                    size_t alignment) {
  pmr_impl_spin_lock(lock);
  pmr_impl_track_add(t, p, bytes, alignment);
  pmr_impl_spin_unlock(lock);
}

/* ---- oversize blocks ------------------------------------------------------
 */

#define BIG_TRAILER sizeof(pmr_impl_big_block)

static size_t big_offset(size_t bytes) {
  return pmr_impl_pool_block_size(bytes, PMR_MAX_ALIGN);
}

void *pmr_impl_big_alloc(pmr_impl_big_block *list, void *lock,
                         pmr_mem_resource *upstream, size_t bytes,
                         size_t alignment) {
  if (bytes > SIZE_MAX - PMR_MAX_ALIGN - BIG_TRAILER - alignment) {
    errno = ENOMEM;
    return NULL;
  }
  size_t off = big_offset(bytes);
  size_t align = alignment > PMR_MAX_ALIGN ? alignment : PMR_MAX_ALIGN;
  char *p = (char *)pmr_allocate(upstream, off + BIG_TRAILER, align);
  if (p == NULL) return NULL;
  pmr_impl_big_block *b = (pmr_impl_big_block *)(void *)(p + off);
  b->size = off + BIG_TRAILER;
  b->alignment = align;
  if (lock != NULL) pmr_impl_spin_lock(lock);
  list->size += b->size;
  b->prev = list;
  b->next = list->next;
  list->next->prev = b;
  list->next = b;
  if (lock != NULL) pmr_impl_spin_unlock(lock);
  return p;
}

void pmr_impl_big_free(pmr_impl_big_block *list, void *lock,
                       pmr_mem_resource *upstream, void *p, size_t bytes,
                       size_t alignment) {
  size_t off = big_offset(bytes);
  pmr_impl_big_block *b = (pmr_impl_big_block *)(void *)((char *)p + off);
  (void)alignment; /* the trailer knows what upstream got */
  if (lock != NULL) pmr_impl_spin_lock(lock);
  list->size -= b->size;
  b->prev->next = b->next;
  b->next->prev = b->prev;
  if (lock != NULL) pmr_impl_spin_unlock(lock);
  pmr_deallocate(upstream, p, b->size, b->alignment);
}

void pmr_impl_big_release(pmr_impl_big_block *list,
                          pmr_mem_resource *upstream) {
  pmr_impl_big_block *b = list->next;
  while (b != list) {
    pmr_impl_big_block *next = b->next;
    pmr_deallocate(upstream, (char *)b - (b->size - BIG_TRAILER), b->size,
                   b->alignment);
    b = next;
  }
  pmr_impl_big_init(list);
}
