/* PRIVATE: the pools' size classes (the one definition of them) and their
 * effective options. Not installed, not public. */
#ifndef PMR_IMPL_POOL_CLASSES_H
#define PMR_IMPL_POOL_CLASSES_H

#include <stddef.h>
#include <stdint.h>

#include "mem_resource/pmr_mem_resource.h"
#include "resources/internal/mem_check.h"
#include "resources/pmr_pool_options.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Size classes: multiples of 8 up to 64; then four classes per power of two
 * (2^k + j * 2^(k-2), j = 1..4) up to 4 KiB; then, up to 16 KiB, the
 * largest multiple of 16 that n blocks fit in a 64 KiB page, for
 * n = 15 .. 4 (a page of such a class wastes less than n * 16 bytes, where a
 * power-of-two quarter such as 5120 would waste a whole 4 KiB, and 4 KiB
 * plus a header of up to 272 bytes, as SQLite's page cache asks, costs
 * 4368); then four per power of two again up to 1 MiB (the table's bound;
 * pages serve up to 16 KiB): 68 classes in all. */
#define PMR_IMPL_POOL_CLASSES 68
/* The largest class: it bounds the table, not the option (whose clamp is
 * PMR_POOL_PAGE_LARGEST_BLOCK, pmr_pool_options.h). */
#define PMR_IMPL_POOL_MAX_CLASS_SIZE ((size_t)1 << 20)
/* Sizes up to this are served by the lookup table (1 KiB). */
#define PMR_IMPL_POOL_TABLE_SHIFT 10
#define PMR_IMPL_POOL_TABLE_LIMIT (1 << PMR_IMPL_POOL_TABLE_SHIFT)
/* The classes of sizes up to PMR_IMPL_POOL_TABLE_LIMIT, by the rule above:
 * the 8 multiples of 8 up to 64 = 2^6, then four per power of two. */
#define PMR_IMPL_POOL_TABLE_CLASSES (8 + 4 * (PMR_IMPL_POOL_TABLE_SHIFT - 6))
/* Alignments above this bypass the pools (blocks in a page are aligned at
 * most so). */
#define PMR_IMPL_POOL_MAX_BLOCK_ALIGN ((size_t)4096)
/* The page-fitted classes: above 4 KiB, up to 16 KiB (n = 15 .. 4). */
#define PMR_IMPL_POOL_FIT_FIRST 32u /* the class of 4097 bytes */
#define PMR_IMPL_POOL_FIT_CLASSES 12u

extern const uint8_t
    pmr_impl_pool_class_table[PMR_IMPL_POOL_TABLE_LIMIT / 8 + 1];
extern const uint32_t pmr_impl_pool_class_sizes[PMR_IMPL_POOL_CLASSES];

/* The class of a request, given that its size rounded up to its alignment is
 * s (s <= 1 MiB): the smallest class that holds s. */
static inline unsigned pmr_impl_pool_class_of(size_t s) {
  if (PMR_LIKELY(s <= PMR_IMPL_POOL_TABLE_LIMIT))
    return pmr_impl_pool_class_table[(s + 7) >> 3];
  unsigned k = 63u - (unsigned)__builtin_clzll((unsigned long long)(s - 1));
  if (k < 12) return 8u + (k - 6u) * 4u + (unsigned)(((s - 1) >> (k - 2)) & 3u);
  if (k < 14) /* page-fitted: n blocks of 16 * floor(4096 / n) bytes hold s
                 while n <= 4096 / ceil(s / 16); the largest such n */
    return PMR_IMPL_POOL_FIT_FIRST + 15u - 4096u / (unsigned)((s + 15) >> 4);
  return PMR_IMPL_POOL_FIT_FIRST + PMR_IMPL_POOL_FIT_CLASSES + (k - 14u) * 4u +
         (unsigned)(((s - 1) >> (k - 2)) & 3u);
}

/* The block size of class idx: one load (pool_classes.c's table; a test
 * checks it against the rule above). */
static inline size_t pmr_impl_pool_class_size(unsigned idx) {
  return pmr_impl_pool_class_sizes[idx];
}

/* The class of a request of s bytes (its size rounded up to its alignment)
 * at that alignment, or -1 when it is not pooled under `largest` (a class
 * size, at most 16 KiB): the smallest class that holds s and whose size is a
 * multiple of the alignment, so that its blocks (at multiples of their size
 * from a page's start) are aligned for it. That is pmr_impl_pool_class_of(s)
 * except for a page-fitted class (a multiple of 16) asked for a larger
 * alignment: then the next class that is a multiple of it (16 KiB at the
 * most). */
static inline int pmr_impl_pool_class_for(size_t s, size_t alignment,
                                          size_t largest) {
  if (s > largest || alignment > PMR_IMPL_POOL_MAX_BLOCK_ALIGN) return -1;
  unsigned c = pmr_impl_pool_class_of(s);
  if (PMR_UNLIKELY(alignment > 16)) {
    while (pmr_impl_pool_class_size(c) & (alignment - 1)) ++c;
    if (pmr_impl_pool_class_size(c) > largest) return -1;
  }
  return (int)c;
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

/* An option's effective value: 0 means dflt, and at most max. */
static inline size_t pmr_impl_clamp_option(size_t v, size_t dflt, size_t max) {
  if (v == 0) return dflt;
  return v > max ? max : v;
}

/* Resolves options (NULL = defaults) to their effective values. */
pmr_pool_options pmr_impl_pool_effective_options(const pmr_pool_options *opts);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PMR_IMPL_POOL_CLASSES_H */
