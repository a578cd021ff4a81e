/* PRIVATE: which of the drop-in's tagged blocks outside the engine's pages
 * are live (dropin.c).
 *
 * A tagged block in the engine's pages (a run) lies in memory the page map
 * says is the engine's, so its tag can be read. Any other (a mapping of its
 * own, a block of the engine's upstream) may be unmapped once freed: its
 * tag is read only when this registry says the block is live, so that a
 * second free, or a pointer that was never ours, is told without reading
 * memory. A freed block stays in the registry as freed (a tombstone) until
 * the address is handed out again or the table grows, so that a double
 * free is reported rather than ignored. Open addressing under a spin lock;
 * slots from the library's own records (meta_mem.h). */
#ifndef PMR_IMPL_MALLOC_TAG_REGISTRY_H
#define PMR_IMPL_MALLOC_TAG_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Blocks beyond the engine's classes, and mapped ones, carry 16 bytes in
 * front of them (dropin.c): what was asked of the engine (or of the OS),
 * their alignment, and a check word derived from their address. */
#define PMR_IMPL_TAG_ALIGN ((size_t)16)
#define PMR_IMPL_TAG_COOKIE ((uintptr_t)0x5be0cd19137e2179ull)

enum { PMR_IMPL_TAG_ENGINE = 0, PMR_IMPL_TAG_MAP = 1 };

typedef struct pmr_impl_tag {
  size_t total;   /* asked of the engine, or the mapping's length */
  uintptr_t word; /* address check | origin << 7 | log2(alignment) */
} pmr_impl_tag;
_Static_assert(sizeof(pmr_impl_tag) == PMR_IMPL_TAG_ALIGN,
               "a tag fills the minimum alignment");

static inline unsigned pmr_impl_tag_log2(size_t a) {
  unsigned k = 0;
  while (((size_t)1 << k) < a) ++k;
  return k;
}

static inline uintptr_t pmr_impl_tag_check(const void *p) {
  return ((uintptr_t)p ^ PMR_IMPL_TAG_COOKIE) & ~(uintptr_t)0xff;
}

/* The room in front of a tagged block of alignment a: at least the tag,
 * and a multiple of a. */
static inline size_t pmr_impl_tag_front(size_t alignment) {
  return alignment > PMR_IMPL_TAG_ALIGN ? alignment : PMR_IMPL_TAG_ALIGN;
}

static inline void *pmr_impl_tag_block(unsigned char *start, size_t total,
                                       size_t alignment, unsigned origin) {
  unsigned char *p = start + pmr_impl_tag_front(alignment);
  pmr_impl_tag t = {total, pmr_impl_tag_check(p) | (uintptr_t)origin << 7 |
                               pmr_impl_tag_log2(alignment)};
  memcpy(p - sizeof t, &t, sizeof t);
  return p;
}

/* p's tag when p is a tagged block, else false. */
static inline bool pmr_impl_tag_of(const void *p, pmr_impl_tag *t,
                                   size_t *alignment, unsigned *origin) {
  if (((uintptr_t)p & (PMR_IMPL_TAG_ALIGN - 1)) != 0) return false;
  memcpy(t, (const unsigned char *)p - sizeof *t, sizeof *t);
  if ((t->word & ~(uintptr_t)0xff) != pmr_impl_tag_check(p)) return false;
  *alignment = (size_t)1 << (t->word & 0x7f);
  *origin = (unsigned)(t->word >> 7) & 1;
  return true;
}

/* A freed tagged block's tag says so (until its memory is used again), so
 * that a second free is told from a block never ours. */
#define PMR_IMPL_TAG_FREED_FLIP ((uintptr_t)0xa3c59ac2f1e04b00ull)

static inline void pmr_impl_tag_forget(void *p) {
  uintptr_t w = pmr_impl_tag_check(p) ^ PMR_IMPL_TAG_FREED_FLIP;
  memcpy(
      (unsigned char *)p - sizeof(pmr_impl_tag) + offsetof(pmr_impl_tag, word),
      &w, sizeof w);
}

static inline bool pmr_impl_tag_freed(const void *p) {
  if (((uintptr_t)p & (PMR_IMPL_TAG_ALIGN - 1)) != 0) return false;
  uintptr_t w;
  memcpy(&w,
         (const unsigned char *)p - sizeof(pmr_impl_tag) +
             offsetof(pmr_impl_tag, word),
         sizeof w);
  return (w & ~(uintptr_t)0xff) ==
         (pmr_impl_tag_check(p) ^ PMR_IMPL_TAG_FREED_FLIP);
}

enum {
  PMR_IMPL_TAGREG_NONE = 0, /* never recorded, or forgotten */
  PMR_IMPL_TAGREG_LIVE = 1,
  PMR_IMPL_TAGREG_FREED = 2 /* freed, the address not handed out since */
};

/* Records p as live; false (nothing recorded) when there is no memory for
 * the table. Thread-safe, fork-safe. */
bool pmr_impl_tag_registry_add(const void *p);

/* p's state; with `take`, a live p becomes freed in the same step, so that
 * of two threads freeing it at once one sees it live. */
int pmr_impl_tag_registry_state(const void *p, bool take);

#endif /* PMR_IMPL_MALLOC_TAG_REGISTRY_H */
