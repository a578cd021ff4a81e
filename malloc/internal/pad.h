/* PRIVATE: the secure drop-in's padding (malloc/README.md, "Secure mode").
 *
 * Secure builds (PMR_SECURE): every pooled block malloc hands out is asked
 * of the engine PMR_IMPL_PAD_BYTES larger than the request. The block's
 * last word then holds how many bytes the request left unused at its end,
 * encoded with the block's address and the per-process key (page_heap.h),
 * and up to PMR_IMPL_PAD_CHECKED bytes right after the request hold
 * PMR_IMPL_PAD_FILL. free and realloc check both before the block goes
 * back: a write past the request's end (an overflow of one byte too), or
 * before a block's start into its neighbour's last word, is reported there.
 * malloc_usable_size tells the request's size, so that a program writes
 * no further.
 *
 * Default builds: PMR_IMPL_PAD_BYTES is 0 and every function below does
 * nothing (the compiler removes the calls). */
#ifndef PMR_IMPL_PAD_H
#define PMR_IMPL_PAD_H

#include <stdbool.h>
#include <stdint.h>

#include "resources/internal/page_heap.h"
#include "resources/internal/page_source.h"

#ifdef PMR_SECURE
#define PMR_IMPL_PAD_BYTES sizeof(uint64_t)
#else
#define PMR_IMPL_PAD_BYTES 0
#endif
/* What the bytes after a request hold, and how many of them are checked. */
#define PMR_IMPL_PAD_FILL 0xde
#define PMR_IMPL_PAD_CHECKED 16

/* bytes and the padding; SIZE_MAX when that overflows. */
static inline size_t pmr_impl_pad_size(size_t bytes) {
  return bytes > SIZE_MAX - PMR_IMPL_PAD_BYTES ? SIZE_MAX
                                               : bytes + PMR_IMPL_PAD_BYTES;
}

#ifdef PMR_SECURE
static inline uint64_t pmr_impl_pad_key(const void *p) {
  return (uint64_t)(uintptr_t)p * (uint64_t)pmr_impl_free_mark_value;
}

/* Eight bytes of the fill. */
#define PMR_IMPL_PAD_FILL8 (UINT64_MAX / 0xff * PMR_IMPL_PAD_FILL)

/* The n bytes at f (n <= PMR_IMPL_PAD_CHECKED): filled, or compared with
 * the fill (true: intact). Word by word (two words may overlap), not by
 * memset or a loop of bytes: the drop-in is built with -fno-builtin, where
 * memset would be a call. */
static inline void pmr_impl_pad_fill(unsigned char *f, size_t n) {
  uint64_t w = PMR_IMPL_PAD_FILL8;
  if (n >= 8) {
    __builtin_memcpy(f, &w, 8);
    __builtin_memcpy(f + n - 8, &w, 8);
  } else {
    for (size_t i = 0; i < n; ++i) f[i] = PMR_IMPL_PAD_FILL;
  }
}
static inline bool pmr_impl_pad_filled(const unsigned char *f, size_t n) {
  if (n >= 8) {
    uint64_t a, b;
    __builtin_memcpy(&a, f, 8);
    __builtin_memcpy(&b, f + n - 8, 8);
    return (a & b) == PMR_IMPL_PAD_FILL8 && (a | b) == PMR_IMPL_PAD_FILL8;
  }
  for (size_t i = 0; i < n; ++i)
    if (f[i] != PMR_IMPL_PAD_FILL) return false;
  return true;
}

/* How many bytes of the fill follow a request of `bytes` in a block whose
 * last word starts at `end`. */
static inline size_t pmr_impl_pad_fill_length(size_t bytes, size_t end) {
  return end - bytes > PMR_IMPL_PAD_CHECKED ? PMR_IMPL_PAD_CHECKED
                                            : end - bytes;
}

/* The request block p (of `block` bytes) was handed out for, read from its
 * padding; SIZE_MAX when the padding changed. */
static inline size_t pmr_impl_pad_decode(const void *p, size_t block) {
  const unsigned char *b = (const unsigned char *)p;
  size_t end = block - PMR_IMPL_PAD_BYTES;
  uint64_t w;
  __builtin_memcpy(&w, b + end, sizeof w);
  uint64_t unused = w ^ pmr_impl_pad_key(p);
  if (unused < PMR_IMPL_PAD_BYTES || unused > block) return SIZE_MAX;
  size_t bytes = block - (size_t)unused;
  if (!pmr_impl_pad_filled(b + bytes, pmr_impl_pad_fill_length(bytes, end)))
    return SIZE_MAX;
  return bytes;
}
#endif

/* Pads p, NULL or a pooled block of src's that malloc hands out for
 * `bytes` (its page tells its size, at least pmr_impl_pad_size(bytes)).
 * Returns p. */
static inline void *pmr_impl_pad_block(const pmr_impl_page_source *src, void *p,
                                       size_t bytes) {
#ifdef PMR_SECURE
  if (p != NULL) {
    size_t block = pmr_impl_page_of(src, p)->block;
    unsigned char *b = (unsigned char *)p;
    size_t end = block - PMR_IMPL_PAD_BYTES;
    pmr_impl_pad_fill(b + bytes, pmr_impl_pad_fill_length(bytes, end));
    uint64_t w = (uint64_t)(block - bytes) ^ pmr_impl_pad_key(p);
    __builtin_memcpy(b + end, &w, sizeof w);
  }
#else
  (void)src;
  (void)bytes;
#endif
  return p;
}

/* Before p goes back (free, realloc): what is wrong with its padding, or
 * NULL when nothing is, or p is no block in use of src's pages (the free
 * path tells those apart, and reports misuse). */
static inline const char *pmr_impl_pad_broken(const pmr_impl_page_source *src,
                                              void *p) {
#ifdef PMR_SECURE
  pmr_impl_page *pg;
  size_t block;
  if (!pmr_impl_source_class_page(src, p, &pg, &block) ||
      !pmr_impl_block_starts(pg, p))
    return NULL;
  /* A free block's fill covers its last word: a second free, which the
   * free path tells apart. */
  uint64_t last;
  __builtin_memcpy(&last, (const unsigned char *)p + block - sizeof last,
                   sizeof last);
  if (last == UINT64_MAX / 0xff * PMR_IMPL_FREE_FILL) return NULL;
  if (pmr_impl_pad_decode(p, block) == SIZE_MAX)
    return "a write past the end of the block, or before the next one's "
           "start (its padding changed)";
  if (!pmr_impl_page_gaps_intact(src, pg, p))
    return "a write past the end of a block, or before the start of one, "
           "into the bytes around its page's table of descriptors";
  return NULL;
#else
  (void)src;
  (void)p;
  return NULL;
#endif
}

/* The usable size of p, a pooled block of `block` bytes: the request it was
 * handed out for in secure builds (at most block - PMR_IMPL_PAD_BYTES when
 * its padding changed), else block. */
static inline size_t pmr_impl_pad_usable(const void *p, size_t block) {
#ifdef PMR_SECURE
  size_t bytes = pmr_impl_pad_decode(p, block);
  return bytes != SIZE_MAX ? bytes : block - PMR_IMPL_PAD_BYTES;
#else
  (void)p;
  return block;
#endif
}

#endif /* PMR_IMPL_PAD_H */
