/* The page map (page_map.h). */
#include "resources/internal/page_map.h"

#include <errno.h>
#include <stdlib.h>

#include "resources/internal/meta_mem.h"

typedef pmr_impl_map_entry map_entry;
_Atomic(map_entry *) pmr_impl_page_map[(size_t)1 << PMR_IMPL_MAP_TOP_BITS];

/* The leaf of page index i, made when `make`; NULL when there is none (or
 * i lies beyond the map, or calloc failed). */
static map_entry *map_leaf(uintptr_t i, bool make) {
  uintptr_t top = i >> PMR_IMPL_MAP_LEAF_BITS;
  if (top >= ((uintptr_t)1 << PMR_IMPL_MAP_TOP_BITS)) return NULL;
  map_entry *leaf =
      atomic_load_explicit(&pmr_impl_page_map[top], memory_order_acquire);
  if (leaf != NULL || !make) return leaf;
  int saved = errno;
  map_entry *fresh = (map_entry *)pmr_impl_meta_alloc(
      ((size_t)1 << PMR_IMPL_MAP_LEAF_BITS) * sizeof(map_entry));
  errno = saved;
  if (fresh == NULL) return NULL;
  if (atomic_compare_exchange_strong_explicit(&pmr_impl_page_map[top], &leaf,
                                              fresh, memory_order_acq_rel,
                                              memory_order_acquire))
    return fresh;
  pmr_impl_meta_free(fresh); /* another thread made it first */
  return leaf;
}

bool pmr_impl_page_map_set(const void *mem, size_t bytes,
                           const struct pmr_impl_page_source *owner) {
  uintptr_t first = (uintptr_t)mem >> PMR_IMPL_PAGE_SHIFT;
  uintptr_t n = bytes >> PMR_IMPL_PAGE_SHIFT;
  for (uintptr_t i = first; i < first + n; ++i)
    if (map_leaf(i, owner != NULL) == NULL) return owner == NULL;
  for (uintptr_t i = first; i < first + n; ++i)
    atomic_store_explicit(
        &map_leaf(i, false)[i & (((uintptr_t)1 << PMR_IMPL_MAP_LEAF_BITS) - 1)]
             .owner,
        owner, memory_order_relaxed);
  return true;
}
