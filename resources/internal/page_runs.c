/* The page source's runs: oversize blocks of up to PMR_IMPL_RUN_PAGES pages
 * in a row taken from its free pages, and their return (page_source.h). */
#include <stddef.h>
#include <stdint.h>

#include "resources/internal/page_source.h"
#include "resources/internal/page_source_impl.h"

/* Segments a run is looked for in, newest first (64 MiB of them). */
#define RUN_SCAN_SEGMENTS 64u

/* Under the lock: the segment and first page index of k free pages in a
 * row (never a segment's first page, which holds its frame's table), the
 * fewest of them not resident; *fresh: how many. NULL when none. */
static pmr_impl_page *run_find(const pmr_impl_page_source *src, uint32_t k,
                               uint32_t *first, uint32_t *fresh) {
  pmr_impl_page *best = NULL;
  *fresh = k + 1;
  /* The newest segments only: the lock is held, and a run is worth less
   * than the time every other thread's page event would wait. */
  unsigned scan = RUN_SCAN_SEGMENTS;
  for (pmr_impl_page *seg = src->segments;
       seg != NULL && *fresh != 0 && scan-- != 0; seg = seg->seg_next) {
    if (seg->seg_free < k) continue;
    /* The free set's pages by the mask, not their state: a page a heap
     * holds is its owner's to write, with no lock. */
    uint32_t run = 0, clean = 0; /* the free pages ending at i */
    for (uint32_t i = 1; i < seg->seg_pages; ++i) {
      if ((seg->seg_free_mask >> i & 1u) == 0) {
        run = clean = 0;
        continue;
      }
      clean += !pmr_impl_seg_page(src, seg, i)->dirty;
      if (++run > k)
        clean -= !pmr_impl_seg_page(src, seg, i - k)->dirty, run = k;
      if (run == k && clean < *fresh) {
        best = seg;
        *first = i + 1 - k;
        *fresh = clean;
        if (clean == 0) break;
      }
    }
  }
  return best;
}

void *pmr_impl_source_take_run(pmr_impl_page_source *src, size_t bytes,
                               size_t alignment) {
  if (!src->os || bytes <= PMR_IMPL_HEAP_LARGEST ||
      bytes > (size_t)PMR_IMPL_RUN_PAGES * PMR_IMPL_PAGE_SIZE ||
      alignment > PMR_IMPL_PAGE_SIZE)
    return NULL;
  uint32_t k =
      (uint32_t)((bytes + PMR_IMPL_PAGE_SIZE - 1) >> PMR_IMPL_PAGE_SHIFT);
  uint32_t first = 0, fresh = 0;
  pmr_impl_source_lock(src);
  pmr_impl_page *seg = run_find(src, k, &first, &fresh);
  if (seg == NULL) {
    pmr_impl_source_unlock(src);
    return NULL;
  }
  for (uint32_t i = first; i < first + k; ++i) {
    pmr_impl_page *pg = pmr_impl_seg_page(src, seg, i);
    pmr_impl_source_unfree(src, pg);
    pg->state = PMR_IMPL_PAGE_RUN;
  }
  pmr_impl_page *head = pmr_impl_seg_page(src, seg, first);
  head->block = k << PMR_IMPL_PAGE_SHIFT;
  head->capacity = k;
  src->run_bytes += (size_t)k << PMR_IMPL_PAGE_SHIFT;
  pmr_impl_source_unlock(src);
  if (fresh != 0) { /* memory that comes in: as for a mapping */
    pmr_impl_source_make_room(src, (size_t)fresh << PMR_IMPL_PAGE_SHIFT);
    pmr_impl_source_resident_add(src, (size_t)fresh << PMR_IMPL_PAGE_SHIFT);
  }
  char *p = pmr_impl_page_base(src, head);
  PMR_IMPL_UNDEFINED(p, (size_t)k << PMR_IMPL_PAGE_SHIFT);
  return p;
}

/* Pages [keep, k) of the run at p (of k pages) back to the free set; the
 * run keeps the others (none when keep is 0). */
static void give_pages(pmr_impl_page_source *src, void *p, uint32_t keep,
                       bool give_back) {
  pmr_impl_page *head = pmr_impl_page_of(src, p);
  uint32_t k = head->capacity;
  char *from = (char *)p + ((size_t)keep << PMR_IMPL_PAGE_SHIFT);
  /* Its pages are src's again in the page map (a pool that took them as a
   * segment recorded them as its own, then as no one's). */
  pmr_impl_page_map_set(from, (size_t)(k - keep) << PMR_IMPL_PAGE_SHIFT, src);
  pmr_impl_source_lock(src);
  src->run_bytes -= (size_t)(k - keep) << PMR_IMPL_PAGE_SHIFT;
  pmr_impl_source_unlock(src);
  head->block = keep << PMR_IMPL_PAGE_SHIFT;
  head->capacity = keep;
  for (uint32_t i = keep; i < k; ++i) {
    pmr_impl_page *pg =
        pmr_impl_page_of(src, (char *)p + ((size_t)i << PMR_IMPL_PAGE_SHIFT));
    pmr_impl_page_noaccess(src, pg);
    pmr_impl_source_give_page(src, pg, give_back);
  }
}

void pmr_impl_source_give_run(pmr_impl_page_source *src, void *p,
                              bool give_back) {
  give_pages(src, p, 0, give_back);
}

bool pmr_impl_source_run_resize(pmr_impl_page_source *src, void *p,
                                size_t bytes) {
  pmr_impl_page *head = pmr_impl_page_of(src, p);
  if (bytes > head->block) return false;
  uint32_t keep =
      (uint32_t)((bytes + PMR_IMPL_PAGE_SIZE - 1) >> PMR_IMPL_PAGE_SHIFT);
  if (keep == 0) keep = 1; /* the block stays a block */
  if (keep < head->capacity) give_pages(src, p, keep, false);
  return true;
}
