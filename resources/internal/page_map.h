/* PRIVATE: the page map: which page source's segment holds a page,
 * process-wide (page_heap.h). Not for C++ translation units (C11 atomics). */
#ifndef PMR_IMPL_PAGE_MAP_H
#define PMR_IMPL_PAGE_MAP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "resources/internal/page_geometry.h"

struct pmr_impl_page_source;

/* The page map: which source's segment holds a page, process-wide, kept as
 * segments come from and go back to upstream. Two levels over the 48-bit
 * address space: a static table of leaves, each leaf (calloc'd on first
 * use, never freed) the owners of 2^16 pages (4 GiB). Readers take no lock:
 * an entry a reader relies on (a block of its own in use) was written
 * before the block was handed out. */
#define PMR_IMPL_MAP_LEAF_BITS 16
#define PMR_IMPL_MAP_TOP_BITS \
  (48 - PMR_IMPL_PAGE_SHIFT - PMR_IMPL_MAP_LEAF_BITS)
typedef struct pmr_impl_map_entry {
  _Atomic(const struct pmr_impl_page_source *) owner;
} pmr_impl_map_entry;
extern _Atomic(pmr_impl_map_entry *)
    pmr_impl_page_map[(size_t)1 << PMR_IMPL_MAP_TOP_BITS];

/* The source whose segment holds the page of p, or NULL when none does.
 * Lock-free; safe for any address. Inline: a malloc-shaped client (SQLite)
 * asks a block's size at every allocation and free. */
static inline const struct pmr_impl_page_source *pmr_impl_page_map_get(
    const void *p) {
  uintptr_t i = (uintptr_t)p >> PMR_IMPL_PAGE_SHIFT;
  uintptr_t top = i >> PMR_IMPL_MAP_LEAF_BITS;
  if (top >= ((uintptr_t)1 << PMR_IMPL_MAP_TOP_BITS)) return NULL;
  pmr_impl_map_entry *leaf =
      atomic_load_explicit(&pmr_impl_page_map[top], memory_order_acquire);
  if (leaf == NULL) return NULL;
  return atomic_load_explicit(
      &leaf[i & (((uintptr_t)1 << PMR_IMPL_MAP_LEAF_BITS) - 1)].owner,
      memory_order_relaxed);
}

/* Records owner (NULL: none) as the owner of the pages of [mem, mem +
 * bytes) (whole pages, page-aligned). False, changing nothing, when the map
 * has no room (a leaf could not be allocated); never fails for NULL. */
bool pmr_impl_page_map_set(const void *mem, size_t bytes,
                           const struct pmr_impl_page_source *owner);

#endif /* PMR_IMPL_PAGE_MAP_H */
