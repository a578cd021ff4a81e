/* PRIVATE: the machinery shared by the unsynchronized and synchronized pools:
 * size classes, per-class intrusive free lists carved lazily from chunks, the
 * chunk list, and the list of oversize blocks. Not installed, not public. */
#ifndef PMR_IMPL_POOL_CORE_H
#define PMR_IMPL_POOL_CORE_H

#include <stdint.h>

#include "mem_resource/pmr_mem_resource.h"
#include "resources/internal/mem_check.h"
#include "resources/pmr_pool_options.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Size classes: multiples of 8 up to 64, then four classes per power of two
 * (2^k + j * 2^(k-2), j = 1..4) up to 1 MiB: 64 classes in all. */
#define PMR_IMPL_POOL_CLASSES 64
#define PMR_IMPL_POOL_TABLE_LIMIT 1024 /* sizes served by the lookup table */
/* Alignments above this bypass the pools (chunks are aligned at most so). */
#define PMR_IMPL_POOL_MAX_BLOCK_ALIGN ((size_t)4096)
/* A class's first chunk holds about this many bytes of blocks ... */
#define PMR_IMPL_POOL_FIRST_CHUNK_BYTES ((size_t)4096)
/* ... and chunks double up to this many bytes (or one block, if larger). */
#define PMR_IMPL_POOL_MAX_CHUNK_BYTES ((size_t)1 << 20)

extern const uint8_t
    pmr_impl_pool_class_table[PMR_IMPL_POOL_TABLE_LIMIT / 8 + 1];

/* The class of a request, given that its size rounded up to its alignment is
 * s (s <= 1 MiB). */
static inline unsigned pmr_impl_pool_class_of(size_t s) {
  if (PMR_LIKELY(s <= PMR_IMPL_POOL_TABLE_LIMIT))
    return pmr_impl_pool_class_table[(s + 7) >> 3];
  unsigned k = 63u - (unsigned)__builtin_clzll((unsigned long long)(s - 1));
  return 8u + (k - 6u) * 4u + (unsigned)(((s - 1) >> (k - 2)) & 3u);
}

/* The block size of class idx. */
static inline size_t pmr_impl_pool_class_size(unsigned idx) {
  if (idx < 8) return (size_t)(idx + 1) * 8;
  unsigned k = (idx - 8) / 4 + 6, j = (idx - 8) % 4;
  return ((size_t)1 << k) + (size_t)(j + 1) * ((size_t)1 << (k - 2));
}

/* The size of the block a pool gives for (bytes, alignment): bytes rounded
 * up to the alignment (a power of two), 0 bytes counted as 1 (a 0-byte
 * request gets a block of its alignment). */
static inline size_t pmr_impl_pool_block_size(size_t bytes, size_t alignment) {
  return pmr_impl_round_up(bytes + (bytes == 0), alignment);
}

/* The bound of a pool's fast path for its effective largest block:
 * min(largest, PMR_IMPL_POOL_TABLE_LIMIT). */
static inline size_t pmr_impl_pool_small_limit(size_t largest) {
  return largest < PMR_IMPL_POOL_TABLE_LIMIT ? largest
                                             : PMR_IMPL_POOL_TABLE_LIMIT;
}

/* 32 bytes, so a class is found with a shift. */
typedef struct pmr_impl_pool_class {
  void *free;           /* intrusive free list, most recently freed first */
  char *cur, *end;      /* the part of the newest chunk not carved yet */
  uint32_t block;       /* block size (UINT32_MAX for the empty class) */
  uint32_t next_blocks; /* blocks in this class's next chunk */
} pmr_impl_pool_class;

struct pmr_impl_pool_chunk;

typedef struct pmr_impl_pool_core {
  /* For a request whose size rounded up to its alignment is s <= 1024: the
   * byte offset, from this struct, of its class, by (s + 7) / 8. Sizes that
   * are not pooled (0 bytes, above the largest block) lead to `empty`, a
   * class that never has a block, so the fast path needs no other test. */
  uint16_t small[PMR_IMPL_POOL_TABLE_LIMIT / 8 + 1];
  pmr_impl_pool_class empty;
  pmr_impl_pool_class classes[PMR_IMPL_POOL_CLASSES];
  struct pmr_impl_pool_chunk *chunks; /* every chunk of every class */
  pmr_mem_resource *upstream;
  size_t largest;    /* effective largest pooled block (a class size) */
  size_t max_blocks; /* effective max_blocks_per_chunk */
} pmr_impl_pool_core;

/* Resolves options (NULL = defaults) to their effective values. */
pmr_pool_options pmr_impl_pool_effective_options(const pmr_pool_options *opts);

void pmr_impl_pool_core_init(pmr_impl_pool_core *c,
                             const pmr_pool_options *opts,
                             pmr_mem_resource *upstream);
/* Returns every chunk to upstream and empties every class. */
void pmr_impl_pool_core_release(pmr_impl_pool_core *c);

/* Class lookup for sizes above the table: &c->empty when not pooled. */
pmr_impl_pool_class *pmr_impl_pool_find_large(pmr_impl_pool_core *c, size_t s,
                                              size_t alignment);

/* The class that serves (bytes, alignment), or &c->empty when the request is
 * not pooled (0 bytes: see pmr_impl_pool_find_nonzero; oversize). */
static inline pmr_impl_pool_class *pmr_impl_pool_find(pmr_impl_pool_core *c,
                                                      size_t bytes,
                                                      size_t alignment) {
  size_t s = pmr_impl_round_up(bytes, alignment);
  if (PMR_LIKELY(s <= PMR_IMPL_POOL_TABLE_LIMIT))
    return (pmr_impl_pool_class *)(void *)((char *)c + c->small[(s + 7) >> 3]);
  return pmr_impl_pool_find_large(c, s, alignment);
}

/* The fast-path lookup: like pmr_impl_pool_find for requests that round up to
 * at most 1024 bytes; NULL for larger ones (no call on this path, so the
 * caller's fast path can stay a leaf function). */
static inline pmr_impl_pool_class *pmr_impl_pool_find_small(
    pmr_impl_pool_core *c, size_t bytes, size_t alignment) {
  size_t s = pmr_impl_round_up(bytes, alignment);
  if (PMR_LIKELY(s <= PMR_IMPL_POOL_TABLE_LIMIT))
    return (pmr_impl_pool_class *)(void *)((char *)c + c->small[(s + 7) >> 3]);
  return NULL;
}

/* As pmr_impl_pool_find, with 0 bytes counted as 1 (a 0-byte request gets a
 * block of its alignment); &c->empty means oversize. */
static inline pmr_impl_pool_class *pmr_impl_pool_find_nonzero(
    pmr_impl_pool_core *c, size_t bytes, size_t alignment) {
  return pmr_impl_pool_find(c, bytes + (bytes == 0), alignment);
}

/* Pops a free block or carves a new one; NULL when the class has neither. */
static inline void *pmr_impl_pool_take(pmr_impl_pool_class *k) {
  void *p = k->free;
  if (PMR_LIKELY(p != NULL)) {
    k->free = pmr_impl_link_get(p);
    PMR_IMPL_UNDEFINED(p, k->block);
    return p;
  }
  if (PMR_LIKELY((size_t)(k->end - k->cur) >= k->block)) {
    p = k->cur;
    k->cur += k->block;
    PMR_IMPL_UNDEFINED(p, k->block);
    return p;
  }
  return NULL;
}

static inline void pmr_impl_pool_put(pmr_impl_pool_class *k, void *p) {
  PMR_IMPL_NOACCESS(p, k->block);
  pmr_impl_link_set(p, k->free);
  k->free = p;
}

/* Gets a new chunk for class k from upstream and returns its first block
 * (NULL if upstream fails). k must be one of c's classes, not c->empty. */
void *pmr_impl_pool_core_refill(pmr_impl_pool_core *c, pmr_impl_pool_class *k);

/* The same in three steps, for callers that must hold no lock while
 * upstream runs (upstream may be a resource that takes locks of its own):
 *   - reserve: the number of blocks of k's next chunk, growing the one
 *     after (under the lock that guards k);
 *   - new_chunk: asks upstream for a chunk of n blocks of `block` bytes
 *     (no lock needed); returns its start, all of it poisoned, and its
 *     record in *out, or NULL;
 *   - link_chunk: records it for release (under the lock that guards
 *     c->chunks). */
size_t pmr_impl_pool_core_reserve(pmr_impl_pool_core *c,
                                  pmr_impl_pool_class *k);
char *pmr_impl_pool_core_new_chunk(pmr_impl_pool_core *c, size_t block,
                                   size_t n, struct pmr_impl_pool_chunk **out);
void pmr_impl_pool_core_link_chunk(pmr_impl_pool_core *c,
                                   struct pmr_impl_pool_chunk *ch);

/* Oversize blocks: straight from upstream, with a small trailer that links
 * them into a doubly linked list, so any one is freed in O(1) and release
 * finds them all. */
typedef struct pmr_impl_big_block {
  struct pmr_impl_big_block *prev, *next;
  size_t size;      /* total bytes asked of upstream, trailer included;
                       in the list's sentinel: the sum over the list */
  size_t alignment; /* alignment asked of upstream */
} pmr_impl_big_block;

/* An empty list (the sentinel points at itself). */
static inline void pmr_impl_big_init(pmr_impl_big_block *list) {
  list->prev = list->next = list;
  list->size = 0;
  list->alignment = 0;
}

/* A block from upstream, linked into list; NULL when upstream fails. lock
 * (a pmr_impl_spin *, from spin_lock.h, which this header does not include so
 * that C++ tests can; NULL: none) guards the list; it is held only while
 * the list changes, never while upstream runs. */
void *pmr_impl_big_alloc(pmr_impl_big_block *list, void *lock,
                         pmr_mem_resource *upstream, size_t bytes,
                         size_t alignment);
/* Unlinks p (under lock, NULL: none) and gives it back to upstream. */
void pmr_impl_big_free(pmr_impl_big_block *list, void *lock,
                       pmr_mem_resource *upstream, void *p, size_t bytes,
                       size_t alignment);
/* Frees every block still on the list (a sentinel). */
void pmr_impl_big_release(pmr_impl_big_block *list, pmr_mem_resource *upstream);

/* Debug builds: checks a deallocation against the live-block table t and,
 * on misuse, reports it naming `kind` and the resource. Returns true when
 * the deallocation may proceed. pooled: the block belongs to a size class. */
struct pmr_impl_track;
bool pmr_impl_pool_debug_free(struct pmr_impl_track *t, const char *kind,
                              const void *resource, void *p, size_t bytes,
                              size_t alignment, bool pooled);
/* The same, and the table's record of a new block p, for a pool whose table
 * threads share: under lock (a pmr_impl_spin *, as for pmr_impl_big_alloc),
 * which a report also holds. */
bool pmr_impl_pool_debug_free_locked(struct pmr_impl_track *t, void *lock,
                                     const char *kind, const void *resource,
                                     void *p, size_t bytes, size_t alignment,
                                     bool pooled);
void pmr_impl_pool_debug_add_locked(struct pmr_impl_track *t, void *lock,
                                    const void *p, size_t bytes,
                                    size_t alignment);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PMR_IMPL_POOL_CORE_H */
