/* PRIVATE: what the page source's files share: page_source.c (segments,
 * the free set, purge and trim) and page_runs.c (runs of free pages). */
#ifndef PMR_IMPL_PAGE_SOURCE_IMPL_H
#define PMR_IMPL_PAGE_SOURCE_IMPL_H

#include <stddef.h>

#include "resources/internal/page_source.h"

/* Page i of segment seg. */
static inline pmr_impl_page *pmr_impl_seg_page(const pmr_impl_page_source *src,
                                               const pmr_impl_page *seg,
                                               size_t i) {
  return pmr_impl_page_of(
      src, pmr_impl_page_base(src, seg) + i * PMR_IMPL_PAGE_SIZE);
}

/* The source's lock, taken only when heaps share it. */
static inline void pmr_impl_source_lock(pmr_impl_page_source *src) {
  if (src->shared) pmr_impl_spin_lock(&src->lock);
}
static inline void pmr_impl_source_unlock(pmr_impl_page_source *src) {
  if (src->shared) pmr_impl_spin_unlock(&src->lock);
}

/* Under the lock: takes free page pg out of the free set (its state is the
 * caller's to set). */
void pmr_impl_source_unfree(pmr_impl_page_source *src, pmr_impl_page *pg);

#endif
