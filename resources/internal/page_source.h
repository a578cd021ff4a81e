/* PRIVATE: the page source, the lower half of the page core (page_heap.h
 * describes the whole): segments from upstream, the descriptors of their
 * pages, the set of free pages, runs of free pages for oversize blocks, and
 * what goes back to upstream and to the OS. One per pool resource, shared by
 * its heaps. Not for C++ translation units (C11 atomics). */
#ifndef PMR_IMPL_PAGE_SOURCE_H
#define PMR_IMPL_PAGE_SOURCE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "mem_resource/pmr_mem_resource.h"
#include "resources/internal/mem_check.h"
#include "resources/internal/page_geometry.h"
#include "resources/internal/page_map.h"
#include "resources/internal/platform.h"
#include "resources/internal/spin_lock.h"
#include "resources/pmr_pool_options.h"

/* The largest pooled block: at least 7 blocks fit a page. */
#define PMR_IMPL_HEAP_LARGEST PMR_POOL_PAGE_LARGEST_BLOCK
/* Segments beyond the retention bound go back once no segment was taken
 * from upstream for this long. */
#define PMR_IMPL_GIVE_BACK_DELAY_NS ((uint64_t)1000000000u)
/* How long a page stays free before its memory goes back to the OS. */
#define PMR_IMPL_PURGE_DELAY_NS ((uint64_t)1000000000u)
/* Free pages kept by default before segments go back to upstream. */
#define PMR_IMPL_DEFAULT_RETAINED_BYTES ((size_t)1 << 20)

enum {
  PMR_IMPL_PAGE_FREE,    /* in the source's free set */
  PMR_IMPL_PAGE_CURRENT, /* its class's current page */
  PMR_IMPL_PAGE_PARTIAL, /* in its class's partial ring */
  PMR_IMPL_PAGE_FULL,    /* no free block, in no list */
  PMR_IMPL_PAGE_RUN      /* a page of a run serving one oversize block */
};

struct pmr_impl_page_heap;

/* A page's descriptor, in its frame's table. The first page of a segment
 * also describes the segment. */
typedef struct pmr_impl_page {
  void *free; /* free blocks, most recently freed first */
  /* What the owner's frees count down: a free that leaves it 0 takes the
   * slow path (pmr_impl_heap_free_slow), because the page was full or its
   * last block in use came back. It encodes `used`, the blocks out of the
   * page's hands (in use, in its class's list while current, or freed by
   * other threads and not collected yet), by state: PARTIAL: used; FULL: 1
   * (used is capacity); CURRENT: used + PMR_IMPL_PAGE_CURRENT_BIAS, never
   * 0: the current page needs neither event, so a block allocated and freed
   * alone stays on the fast path. One counter, tested by the decrement
   * itself. */
  uint32_t count;
  uint32_t block;    /* block size; 0 when the page is free; a run's first
                        page: the run's bytes */
  uint32_t capacity; /* blocks the page holds; a run's first page: its pages */
  uint16_t carved;   /* blocks laid out so far */
  uint8_t cls;
  uint8_t state;
  bool dirty;    /* free page whose memory may be resident (decommit) */
  bool decommit; /* its memory may go back to the OS (see the source's) */
  /* While the page serves a class: ceil(2^32 / block), so that an offset
   * `off` in the page (below 2^16) is a multiple of block exactly when
   * (uint32_t)(off * start_check) < start_check (page_heap.h:
   * pmr_impl_block_suspect); 0 otherwise, which no offset passes. */
  uint32_t start_check;
  /* Blocks never handed out: [carve, end) in the region being carved, then
   * (while carve is below the frame's table) the region after it. */
  char *carve;
  char *end;
  union {
    /* While the page serves a class and is not its current page: the sum
     * of pmr_impl_free_hash over the blocks of `free` (page_heap.h,
     * "misuse"), so that a free need not read the block to keep a double
     * free from emptying the page early. */
    uint64_t free_sum;
    uint64_t freed_ns; /* in the free set: when it entered it */
  };
  /* Owner while the page serves a class. On the first line, with `free`
   * and `count`: the owner's free reads it and writes those two, so it
   * touches one line of the descriptor, not two (a free in shuffled order
   * over many pages misses on each line it touches). */
  struct pmr_impl_page_heap *heap;
  /* Second cache line: what a free by another thread writes, and what only
   * slow paths touch. A thread freeing the owner's blocks (a consumer)
   * reads the first line (`heap`) and writes only here; the owner writes
   * the first line when it frees, takes the page's list or carves, not at
   * each allocation (its class holds the list), so the two seldom take
   * that line from each other. */
  /* Blocks freed by other threads. The thread whose push finds it empty
   * queues the page on heap->delayed; the owner empties it there. */
  _Atomic(void *) remote;
  struct pmr_impl_page *prev, *next; /* partial ring or free set */
  struct pmr_impl_page *delayed_next;
  struct pmr_impl_page *segment; /* the first page of its segment */
  /* First page of a segment only. */
  uint16_t seg_pages, seg_free;
  uint32_t seg_free_mask; /* bit i: page i is in the free set (the lock's) */
  struct pmr_impl_page *seg_prev, *seg_next;
} pmr_impl_page;

typedef struct pmr_impl_page_source {
  /* Set at init and only read after: every free of every thread reads the
   * frame geometry. What changes (the lock and what it guards) lies a cache
   * line further on (`apart`), so that a thread taking or giving a page
   * does not take these lines from the threads that only read them. */
  /* Frame geometry (pmr_impl_page_of): ~(frame size - 1), and the bits of
   * (address >> PMR_IMPL_PAGE_OF_SHIFT) that give a page's descriptor its
   * offset in the frame
   * (its index in the table, and the frame's colour). */
  uintptr_t frame_mask;
  uint32_t color_mask;
  bool shared; /* the lock is taken */
  bool os;     /* maps its segments itself (pmr_impl_os_direct) */
  /* Frames are whole segments (PMR_IMPL_SEG_FRAME_SHIFT), segments aligned
   * to that: os, or upstream maps its large blocks
   * (pmr_impl_os_maps_large: a pool over the malloc resource, which maps
   * them at any alignment asked). Else frames are single pages. */
  bool seg_frames;
  /* Gives the OS the memory of free pages: os, or upstream is a pool over
   * the malloc resource whose blocks as large as segments are mappings
   * (pmr_impl_os_backed: it says PMR_TRAIT_MAPS_LARGE; a segment of less than
   * PMR_IMPL_OS_LARGE_MIN bytes, asked for when upstream failed a larger one,
   * is not). */
  bool decommit;
  unsigned max_blocks; /* most blocks a page serves (option) */
  size_t retain_pages; /* free pages kept before segments go back */
  pmr_mem_resource *upstream;
  /* Called (no lock held) before the source takes a new segment from
   * upstream (NULL: nothing), with before_grow_arg: see
   * pmr_impl_source_before_grow. */
  void (*before_grow)(void *arg);
  void *before_grow_arg;
  unsigned char apart[PMR_IMPL_CACHE_LINE];
  pmr_impl_spin lock; /* taken only when shared */
  /* Set while pmr_impl_source_shrink has work (trim_wanted, cache_wait);
   * allocation slow paths then call it. */
  atomic_bool shrink_wanted;
  /* Set when a segment became all free beyond the retention bound while
   * it could not go back (deallocation of a shared source, or a segment
   * taken less than PMR_IMPL_GIVE_BACK_DELAY_NS ago). */
  atomic_bool trim_wanted;
  /* Set when the source gave a segment to the process-wide segment cache
   * (segment_cache.h), whose memory stays resident there until its delay
   * has passed and something uses the cache: the slow paths tell the cache
   * (pmr_impl_segment_cache_tick) until none of its memory is resident, so a
   * program that stops needing segments still gets its memory back. */
  atomic_bool cache_wait;
  /* Set, for a shared decommit source, when a free page became due to give its
   * memory to the OS under a lock that must not be held through system
   * calls (a heap's); the slow paths that check shrink_wanted then call
   * pmr_impl_source_shrink, which does it. */
  atomic_bool purge_wanted;
  unsigned next_pages; /* pages of the next segment */
  /* Doubly linked through prev/next, most recently freed first; from
   * clean_from (when not NULL) to free_tail no page is dirty. */
  pmr_impl_page *free_pages, *free_tail, *clean_from;
  size_t free_count;
  pmr_impl_page *segments; /* doubly linked through seg_prev/seg_next */
  size_t segment_bytes;    /* held from upstream for pages */
  /* Of segments given back to upstream since init, by any path (what a
   * trim reports is the difference across it). */
  size_t released_bytes;
  size_t empty_segments; /* segments whose pages are all free */
  size_t run_bytes;      /* of runs serving oversize blocks */
  /* When the last segment came from upstream: written under the lock,
   * read without it by pmr_impl_source_shrink's first test. */
  _Atomic uint64_t last_grow_ns;
  /* Decommit sources: the memory the pool holds resident, as far as it
   * knows (pages taken since their memory last went to the OS, whole, and
   * its oversize blocks that are mappings, at the most each has used), and
   * the most it has held so since init or the last full trim. */
  atomic_size_t resident, resident_peak;
} pmr_impl_page_source;

/* ---- source ---- */
void pmr_impl_source_init(pmr_impl_page_source *src, pmr_mem_resource *up,
                          size_t max_blocks, size_t retained_bytes,
                          bool shared);
/* Names what src calls, with no lock held, before it takes a new segment
 * from upstream: the resource gives back the oversize blocks it keeps for
 * reuse (pmr_impl_oversize_attach, oversize.h), since a pool that grows is not
 * reusing them and their memory would only add to its peak. Call before
 * src is used. */
void pmr_impl_source_before_grow(pmr_impl_page_source *src,
                                 void (*fn)(void *arg), void *arg);
/* The resource gave a large block to the process-wide reservoir
 * (reservoir.h): the slow paths tell it (as the segment cache, cache_wait)
 * until nothing is kept there. */
void pmr_impl_source_wait_cache(pmr_impl_page_source *src);
/* Gives every segment back to upstream (after the resource's oversize
 * blocks went back: nothing is held resident then). */
void pmr_impl_source_release(pmr_impl_page_source *src);
/* Gives segments beyond the retention bound back to upstream if no segment
 * was taken for PMR_IMPL_GIVE_BACK_DELAY_NS, the OS the memory of the
 * pages due, and the segment cache its due memory (call with no lock held,
 * when shrink_wanted or purge_wanted is set). */
void pmr_impl_source_shrink(pmr_impl_page_source *src);
/* Whether src asks an allocation slow path to call pmr_impl_source_shrink
 * (shrink_wanted, or purge_wanted, which only a shared source sets): the
 * one test every slow path makes. */
static inline bool pmr_impl_source_waits(pmr_impl_page_source *src) {
  return atomic_load_explicit(&src->shrink_wanted, memory_order_relaxed) ||
         atomic_load_explicit(&src->purge_wanted, memory_order_relaxed);
}
/* Adds a segment from upstream to the free pages; call with no lock held
 * (upstream may take locks of its own, or wait). False when upstream
 * fails. */
bool pmr_impl_source_grow(pmr_impl_page_source *src);
/* Gives back segments whose pages are all free while more than `keep` free
 * pages would remain; returns the bytes given back. With keep 0 it also
 * gives the OS the memory of every other free page (decommit sources). */
size_t pmr_impl_source_trim(pmr_impl_page_source *src, size_t keep);

/* Bytes of segments given back to upstream since init (under the lock). */
size_t pmr_impl_source_released(pmr_impl_page_source *src);

/* Gives the OS the memory of free pages, the longest free first, at least
 * `bytes` of it if there is that much (decommit sources; no lock held). */
void pmr_impl_source_purge(pmr_impl_page_source *src, size_t bytes);

/* Before `bytes` of new memory are mapped for an oversize block (no lock
 * held): free pages give the OS as much memory as the block would take the
 * pool above its peak (src->resident_peak), so that memory moving from
 * small blocks to large ones does not raise the peak, and memory below it
 * is not given back only to be faulted in again. */
void pmr_impl_source_make_room(pmr_impl_page_source *src, size_t bytes);
/* Counts `bytes` of memory the pool now holds resident (raising the peak
 * past them), or no longer holds. */
void pmr_impl_source_resident_add(pmr_impl_page_source *src, size_t bytes);
void pmr_impl_source_resident_sub(pmr_impl_page_source *src, size_t bytes);

/* The descriptor of the page holding p (or starting at p): the frame's
 * start plus (table colour, index in the table) from the bits above. */
static inline pmr_impl_page *pmr_impl_page_of(const pmr_impl_page_source *src,
                                              const void *p) {
  uintptr_t a = (uintptr_t)p;
  /* The bits the mask takes lie below bit 32 of the address (asserted
   * above): a 32-bit shift finds them in one instruction fewer. */
  uint32_t slot = ((uint32_t)a >> PMR_IMPL_PAGE_OF_SHIFT) & src->color_mask;
  return (pmr_impl_page *)((a & src->frame_mask) + slot);
}

/* pmr_impl_page_of for a source whose frames are segments (seg_frames),
 * from constants: its deallocation fast path reads nothing but the
 * block's descriptor. In
 * benchmark C (blocks freed in shuffled order over more memory than the
 * caches hold) a free's time is set by how many frees overlap their cache
 * misses, and each load besides the descriptor's, even of a line in L1,
 * makes that fewer (resources/README.md, "Measured choices"). */
static inline pmr_impl_page *pmr_impl_page_of_seg(const void *p) {
  uintptr_t a = (uintptr_t)p;
  uint32_t slot = ((uint32_t)a >> PMR_IMPL_PAGE_OF_SHIFT) &
                  PMR_IMPL_COLOR_MASK(PMR_IMPL_SEG_FRAME_SHIFT);
  return (pmr_impl_page *)((a & PMR_IMPL_FRAME_MASK(PMR_IMPL_SEG_FRAME_SHIFT)) +
                           slot);
}

/* The block size of p when it lies in one of src's pages serving a class
 * (a pooled block in use), else 0 (an oversize block, in a run or not: its
 * size is the caller's to know). Any thread. */
/* Whether p lies in a page of src's serving a class; if so, *pg is that
 * page and *block its block size. Reads only `block`, which does not change
 * while p is in use (another thread may be moving the page between
 * states): a run's is above any class, a free page's 0. */
static inline bool pmr_impl_source_class_page(const pmr_impl_page_source *src,
                                              const void *p, pmr_impl_page **pg,
                                              size_t *block) {
  if (pmr_impl_page_map_get(p) != src) return false;
  *pg = pmr_impl_page_of(src, p);
  *block = (*pg)->block;
  return *block - 1 < PMR_IMPL_HEAP_LARGEST;
}

static inline size_t pmr_impl_source_usable_size(
    const pmr_impl_page_source *src, const void *p) {
  pmr_impl_page *pg;
  size_t block;
  return pmr_impl_source_class_page(src, p, &pg, &block) ? block : 0;
}

/* Whether p is the start of one of src's runs (any thread). Asked of the
 * page map through p's frame's first page, never part of a run: a run's
 * own pages may be another source's meanwhile (a pool above with frames of
 * one page, over a resource that hides this one's traits, may take its
 * segments from runs, and records them as its own). */
static inline bool pmr_impl_source_is_run(const pmr_impl_page_source *src,
                                          const void *p) {
  if (pmr_impl_page_map_get((const void *)((uintptr_t)p & src->frame_mask)) !=
      src)
    return false;
  return pmr_impl_page_of(src, p)->block > PMR_IMPL_HEAP_LARGEST;
}

/* The start of pg's page. */
static inline char *pmr_impl_page_base(const pmr_impl_page_source *src,
                                       const pmr_impl_page *pg) {
  uintptr_t d = (uintptr_t)pg,
            index_mask = ~src->frame_mask >> PMR_IMPL_PAGE_SHIFT;
  return (char *)((d & src->frame_mask) +
                  (((d >> PMR_IMPL_PAGE_SLOT_SHIFT) & index_mask)
                   << PMR_IMPL_PAGE_SHIFT));
}

/* The bytes of pg's page around its frame's table of descriptors: blocks
 * lie in [*base, *table) and [*past, *base + PMR_IMPL_PAGE_SIZE). A page
 * that is not its frame's first has no table: *table and *past are its
 * end. */
static inline void pmr_impl_page_span(const pmr_impl_page_source *src,
                                      const pmr_impl_page *pg, char **base,
                                      char **table, char **past) {
  char *b = pmr_impl_page_base(src, pg);
  *base = b;
  if (((uintptr_t)b & ~src->frame_mask) == 0) {
    *table = (char *)pmr_impl_page_of(src, b); /* page 0's: the table's */
    *past = *table + PMR_IMPL_PAGE_SLOT *
                         ((~src->frame_mask >> PMR_IMPL_PAGE_SHIFT) + 1);
  } else {
    *table = *past = b + PMR_IMPL_PAGE_SIZE;
  }
}

/* Marks pg's blocks (all but its frame's table) as not to be touched. */
static inline void pmr_impl_page_noaccess(const pmr_impl_page_source *src,
                                          const pmr_impl_page *pg) {
  char *base, *table, *past;
  pmr_impl_page_span(src, pg, &base, &table, &past);
  (void)base;
  (void)table;
  (void)past;
  PMR_IMPL_NOACCESS(base, (size_t)(table - base));
  PMR_IMPL_NOACCESS(past, (size_t)(base + PMR_IMPL_PAGE_SIZE - past));
}

/* A free page for a heap to serve a class with: from the free set or
 * (grow) a new segment; NULL if there is none or upstream fails. Of the
 * free set, not its head (the page freed last, or a new segment's) but the
 * first free page below the head in its segment that is as warm (dirty
 * when the head is) and not due to give its memory back, else the head;
 * so the free pages of a segment gather at its end, in runs. Call with no
 * lock but the heap's held. */
pmr_impl_page *pmr_impl_source_take_page(pmr_impl_page_source *src, bool grow);
/* Runs: an oversize block that would be a mapping (PMR_IMPL_OS_LARGE_MIN
 * bytes or more with its trailer, oversize.h), up to PMR_IMPL_RUN_PAGES
 * pages, lies in that many free pages of one segment,
 * when the source maps its segments (os) and one has them free, so that
 * memory small blocks freed serves it, and serves small blocks again once
 * it is freed, with no system call (nor page fault for its pages that were
 * resident). A pool over this one may take a run as a segment and record
 * its pages as its own in the page map: a run is known by its frame's first
 * page, and its pages are recorded as the source's again when it comes
 * back. Larger blocks are
 * mappings with room to grow in place (oversize.h): a run cannot grow
 * past its pages, and a buffer that doubles is best left where it grows. */
#define PMR_IMPL_RUN_PAGES 4u
/* The start of a run for a block of `bytes` (whole pages), or NULL (the
 * source does not map its segments, the block is not larger than
 * PMR_IMPL_HEAP_LARGEST or larger than PMR_IMPL_RUN_PAGES pages, its
 * alignment above a page's, or no segment has such a run free). Takes the
 * run with the fewest pages whose memory is not resident, and makes room
 * for those (pmr_impl_source_make_room). Call with no lock held. */
void *pmr_impl_source_take_run(pmr_impl_page_source *src, size_t bytes,
                               size_t alignment);
/* The run that starts at p back to the free set; its segment goes back to
 * upstream as pmr_impl_source_give_page says. */
void pmr_impl_source_give_run(pmr_impl_page_source *src, void *p,
                              bool give_back);
/* try_resize of the block at the start of run p to `bytes`: false when the
 * run's pages do not hold them (a run never grows); else true, and the
 * pages past the new size's last go back to the free set, so that a block
 * shrinks in place whatever its new size. Call with no lock held. */
bool pmr_impl_source_run_resize(pmr_impl_page_source *src, void *p,
                                size_t bytes);
/* pg, whose blocks are all free and which serves no class any more, back
 * to the free set; the segment goes back to upstream when it is all free
 * beyond the retention bound and give_back allows (else later, from a slow
 * path: pmr_impl_source_shrink). */
void pmr_impl_source_give_page(pmr_impl_page_source *src, pmr_impl_page *pg,
                               bool give_back);

#endif /* PMR_IMPL_PAGE_SOURCE_H */
