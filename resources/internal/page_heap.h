/* PRIVATE: the page-based core under the pool resources.
 *
 * Memory comes from upstream in segments: runs of pages of 64 KiB, each page
 * aligned to 64 KiB and described by a descriptor found from the address of
 * any of its blocks (no per-block header; see frames below). A page
 * serves one size class at a time and keeps its own free list; allocation
 * works through one page (the class's current page) before it moves to the
 * next, so blocks allocated close in time lie close in memory whatever order
 * they were freed in. The class holds its current page's free blocks as a
 * list of its own, taken from the page whole, so the allocation fast path
 * reads no descriptor; frees go to the page's list, which the class takes
 * when its own runs out. Blocks are carved lazily, a few KiB at a time, so
 * untouched memory stays untouched.
 *
 * Descriptors live in frames: aligned runs of pages whose descriptors sit
 * side by side in a table inside the frame's first page, at one of
 * PMR_IMPL_PAGE_COLORS offsets chosen by the frame's address, with blocks
 * before and after it; a frame's other pages are all blocks. A source whose
 * segments it maps itself (os_mem.h) uses frames of a whole segment
 * (PMR_IMPL_SEGMENT_PAGES pages, aligned to that): a program freeing blocks
 * across many pages touches one small table per MiB, not one OS page per
 * page (a TLB miss at every free in a shuffled free). Over any other
 * upstream a frame is one page (segments then need only page alignment, so
 * a pool works over a small buffer): its descriptor sits in the page. Tables
 * all at frame starts would compete for one set of every cache level; a
 * program freeing into a few dozen pages would miss on the descriptor at
 * every free.
 *
 * A page whose blocks are all free leaves its class for the source's set of
 * free pages, where any class (of any heap sharing the source) can take it;
 * a class's current page stays until the heap would ask upstream for a
 * segment.
 * A segment whose pages are all free goes back to upstream once the free
 * pages exceed the retention bound, or on trim.
 *
 * When the pool maps its segments itself (os_mem.h: its upstream is the
 * malloc resource), or its upstream is a pool that maps them (a pool over
 * the malloc resource), a page free for PMR_IMPL_PURGE_DELAY_NS gives its
 * memory back to the OS (all but the OS page of its frame's table, if it
 * holds it) and stays in
 * the free set; trim does so for every free page at once. The delay lets a
 * page that empties and fills again, as a round of work ends and the next
 * begins, skip the system call and the page faults. Before an oversize
 * block is mapped, free pages give back as much memory as it would take the
 * pool above its peak (pmr_impl_source_make_room), so a program moving
 * from small blocks to large buffers does not hold both; a block of a few
 * pages takes a run of free pages instead (pmr_impl_source_take_run).
 *
 *   source (segments, free pages; one per pool resource, shared by heaps)
 *     <- heap (size classes: current page + partial pages; the
 *        unsynchronized pool's one, or one per thread: thread_heap.h)
 *
 * Threads: a heap is used by one thread at a time, its owner. Blocks freed
 * by any other thread go to the page's atomic `remote` list; the page is
 * then queued once on its heap's atomic `delayed` list and the owner
 * collects it in its allocation slow path. A shared source has its own
 * spin lock; upstream is never called with it held. When a source maps its
 * segments itself, segments it gives back go to the process-wide segment
 * cache (segment_cache.h), and new ones come from there first. Not for C++
 * translation units (C11 atomics).
 *
 * page_source.c holds the source (segments, free set, page map, give-back),
 * page_heap.c the heaps (classes and their pages). */
#ifndef PMR_IMPL_PAGE_HEAP_H
#define PMR_IMPL_PAGE_HEAP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "mem_resource/pmr_mem_resource.h"
#include "resources/internal/mem_check.h"
#include "resources/internal/pool_core.h"
#include "resources/internal/spin_lock.h"
#include "resources/pmr_pool_options.h"

#define PMR_IMPL_PAGE_SHIFT 16
#define PMR_IMPL_PAGE_SIZE ((size_t)1 << PMR_IMPL_PAGE_SHIFT)
/* Pages a segment asks of upstream at most (1 MiB); fewer when upstream
 * cannot give that much. */
#define PMR_IMPL_SEGMENT_PAGES 16u
/* The largest pooled block: at least 7 blocks fit a page. */
#define PMR_IMPL_HEAP_LARGEST PMR_POOL_PAGE_LARGEST_BLOCK
/* Classes 8 .. 8192 bytes of the class rule in pool_core.h: the last one
 * is the last page-fitted class. */
#define PMR_IMPL_HEAP_CLASSES \
  (PMR_IMPL_POOL_FIT_FIRST + PMR_IMPL_POOL_FIT_CLASSES)
/* Segments beyond the retention bound go back once no segment was taken
 * from upstream for this long. */
#define PMR_IMPL_GIVE_BACK_DELAY_NS ((uint64_t)1000000000u)
/* How long a page stays free before its memory goes back to the OS. */
#define PMR_IMPL_PURGE_DELAY_NS ((uint64_t)1000000000u)
/* How much of a page's untouched blocks a class lays out at a time: what
 * it will touch soon, in L1 while it does. */
#define PMR_IMPL_CARVE_BYTES 4096u
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
  uint32_t carved;   /* blocks laid out so far */
  uint8_t cls;
  uint8_t state;
  bool dirty;    /* free page whose memory may be resident (decommit) */
  bool decommit; /* its memory may go back to the OS (see the source's) */
  /* Blocks never handed out: [carve, end) in the region being carved, then
   * (while carve is below the frame's table) the region after it. */
  char *carve;
  char *end;
  struct pmr_impl_page *prev, *next; /* partial ring or free set */
  /* Second cache line: what a free by another thread reads and writes. Its
   * owner's allocations and frees write the first line all the time; a
   * thread freeing the owner's blocks (a consumer) checks the owner and
   * pushes here without pulling that line away. */
  struct pmr_impl_page_heap *heap; /* owner while the page serves a class */
  /* Blocks freed by other threads. The thread whose push finds it empty
   * queues the page on heap->delayed; the owner empties it there. */
  _Atomic(void *) remote;
  struct pmr_impl_page *segment; /* the first page of its segment */
  struct pmr_impl_page *delayed_next;
  /* First page of a segment only. */
  uint16_t seg_pages, seg_free;
  uint32_t seg_free_mask; /* bit i: page i is in the free set (the lock's) */
  struct pmr_impl_page *seg_prev, *seg_next;
  uint64_t freed_ns; /* when it entered the free set */
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
  /* Gives the OS the memory of free pages: os, or upstream is a pool over
   * the malloc resource whose blocks as large as segments are mappings
   * (pmr_impl_os_backed: it says PMR_TRAIT_MAPS_LARGE; a segment of less than
   * PMR_IMPL_OS_BIG_MIN bytes, asked for when upstream failed a larger one, is
   * not). */
  bool decommit;
  unsigned max_blocks; /* most blocks a page serves (option) */
  size_t retain_pages; /* free pages kept before segments go back */
  pmr_mem_resource *upstream;
  /* The resource's kept oversize blocks (pool_core.h; NULL: none) and the
   * lock of their list (NULL: none): they go back to upstream before the
   * source takes a new segment, so memory kept for reuse never makes the
   * pool take more (see pmr_impl_source_keep). */
  struct pmr_impl_big_list *kept;
  void *kept_lock;
  unsigned char apart[PMR_IMPL_CACHE_LINE];
  pmr_impl_spin lock; /* taken only when shared */
  /* Set when a segment became all free beyond the retention bound while
   * it could not go back (deallocation of a shared source, or a segment
   * taken less than PMR_IMPL_GIVE_BACK_DELAY_NS ago); allocation slow paths
   * then call pmr_impl_source_shrink. */
  atomic_bool shrink_wanted;
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

typedef struct pmr_impl_page_class {
  /* The current page's free blocks, taken from its list whole: the fast
   * path pops here, a load fewer than through the page, and touches no
   * descriptor; the page's own list gathers the owner's frees meanwhile.
   * Blocks of no other page. */
  void *free;
  pmr_impl_page *current; /* never NULL: the heap's no_page when none */
  pmr_impl_page *partial;
  uint32_t block; /* block size (0 for the empty class) */
  uint16_t index;
  uint16_t carve_bytes; /* blocks laid out at a time: whole blocks in
                           PMR_IMPL_CARVE_BYTES, at least one */
} pmr_impl_page_class;

typedef struct pmr_impl_page_heap {
  pmr_impl_page_class empty; /* of sizes not pooled: current has no block */
  pmr_impl_page_class classes[PMR_IMPL_HEAP_CLASSES];
  pmr_impl_page no_page;
  pmr_impl_page_source *src;
  _Atomic(pmr_impl_page *) delayed; /* pages with remote frees */
  size_t largest;                   /* largest pooled size (a class size) */
  bool give_back;                   /* deallocation may return segments */
  /* Pages the heap took from its source to serve a class, and gave back
   * with no block in use (statistics). */
  atomic_size_t pages_taken, pages_returned; /* written by its owner only */
} pmr_impl_page_heap;

/* A counter only one thread writes at a time, others read: a plain load
 * and store, no read-modify-write. */
static inline void pmr_impl_count_up(atomic_size_t *n) {
  atomic_store_explicit(n, atomic_load_explicit(n, memory_order_relaxed) + 1,
                        memory_order_relaxed);
}

/* Options with zeros replaced by the defaults, clamped to what pages serve
 * (largest_required_pool_block at most PMR_POOL_PAGE_LARGEST_BLOCK). */
pmr_pool_options pmr_impl_heap_options(const pmr_pool_options *opts);

/* A monotonic clock for delays of milliseconds and more, in ns: a coarse
 * clock (a few ms of resolution) where there is one, which reads in a few
 * ns where the precise one costs tens; slow paths read it often while a
 * give-back waits for its delay. */
uint64_t pmr_impl_coarse_ns(void);

/* For tests: from now on pmr_impl_coarse_ns returns ns (0: the clock
 * again), so that a test of the delays moves time itself instead of
 * sleeping and hoping the machine keeps up. Declared again in
 * tests/testkit/clock.h. */
void pmr_impl_clock_set_for_tests(uint64_t ns);

/* ---- source ---- */
void pmr_impl_source_init(pmr_impl_page_source *src, pmr_mem_resource *up,
                          size_t max_blocks, size_t retained_bytes,
                          bool shared);
/* Names the list of oversize blocks src's resource keeps for reuse, and
 * its lock (NULL: none; a spin lock of spin_lock.h): they all go back to
 * upstream before src takes a new segment. A pool that grows is not reusing
 * them; their memory would only add to its peak. The list's blocks that
 * are mappings count in src's resident memory from then on. Call before
 * src is used. */
void pmr_impl_source_keep(pmr_impl_page_source *src,
                          struct pmr_impl_big_list *kept, void *kept_lock);
/* Gives every segment back to upstream (after the resource's oversize
 * blocks went back: nothing is held resident then). */
void pmr_impl_source_release(pmr_impl_page_source *src);
/* Gives segments beyond the retention bound back to upstream if no segment
 * was taken for PMR_IMPL_GIVE_BACK_DELAY_NS, and the OS the memory of the
 * pages due (call with no lock held, when shrink_wanted or purge_wanted is
 * set). */
void pmr_impl_source_shrink(pmr_impl_page_source *src);
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

/* ---- heap ---- */
void pmr_impl_heap_init(pmr_impl_page_heap *h, pmr_impl_page_source *src,
                        size_t largest, bool give_back);
/* Forgets every page (after the source released them). */
void pmr_impl_heap_reset(pmr_impl_page_heap *h);
/* Collects remote frees and moves pages with no block in use to the
 * source; returns how many pages it moved. */
size_t pmr_impl_heap_trim(pmr_impl_page_heap *h);

/* The class for (bytes, alignment), 0 bytes counted as 1; &h->empty when
 * not pooled. */
static inline pmr_impl_page_class *pmr_impl_heap_class(pmr_impl_page_heap *h,
                                                       size_t bytes,
                                                       size_t alignment) {
  int c = pmr_impl_pool_class_for(pmr_impl_pool_block_size(bytes, alignment),
                                  alignment, h->largest);
  return c < 0 ? &h->empty : &h->classes[c];
}

/* Size rounded up to the alignment, minus one: (bytes - 1) | (alignment - 1)
 * for a power-of-two alignment. SIZE_MAX-ish for 0 bytes, so one unsigned
 * comparison `key < limit` tells "1 <= rounded size <= limit". */
static inline size_t pmr_impl_heap_key(size_t bytes, size_t alignment) {
  return (bytes - 1) | (alignment - 1);
}

/* The classes of sizes up to PMR_IMPL_POOL_TABLE_LIMIT: 8 .. 1024. */
#define PMR_IMPL_HEAP_SMALL_CLASSES 24

/* The fast paths' size-class map, derived from pool_core.h's class rule
 * (the one definition of the classes): map[key] is the byte offset / 8,
 * in any page heap, of the class of pmr_impl_heap_key `key`, for every key
 * below `limit` (pmr_impl_pool_small_limit). Bytes indexed by the key
 * itself: one load, no shift, one table for every heap of a resource. */
void pmr_impl_heap_small_map(uint8_t map[PMR_IMPL_POOL_TABLE_LIMIT],
                             size_t limit);

/* The class of key (below the map's limit) in h. */
static inline pmr_impl_page_class *pmr_impl_heap_small(pmr_impl_page_heap *h,
                                                       const uint8_t *map,
                                                       size_t key) {
  return (pmr_impl_page_class *)(void *)((char *)h + (size_t)map[key] * 8);
}

/* Descriptors are PMR_IMPL_PAGE_SLOT bytes; a frame's table sits at one of
 * PMR_IMPL_PAGE_COLORS multiples of its size, by address bits above the
 * frame size. 32 spreads the tables of 32 consecutive frames over a whole
 * 64 KiB page, so their descriptors' first lines (the ones every free
 * touches) fall into 512 distinct sets of a 1024-set L2 instead of 128. */
#define PMR_IMPL_PAGE_COLOR_BITS 5
#define PMR_IMPL_PAGE_COLORS (1u << PMR_IMPL_PAGE_COLOR_BITS)
#define PMR_IMPL_PAGE_SLOT_SHIFT 7
#define PMR_IMPL_PAGE_SLOT (1u << PMR_IMPL_PAGE_SLOT_SHIFT)
/* Frames of a source that maps its segments: one segment. */
#define PMR_IMPL_OS_FRAME_SHIFT 20
/* pmr_impl_page_of shifts an address right by this: a page's index in its
 * frame then lands on multiples of a descriptor's size. */
#define PMR_IMPL_PAGE_OF_SHIFT (PMR_IMPL_PAGE_SHIFT - PMR_IMPL_PAGE_SLOT_SHIFT)
_Static_assert(PMR_IMPL_PAGE_OF_SHIFT + PMR_IMPL_PAGE_SLOT_SHIFT +
                       (PMR_IMPL_OS_FRAME_SHIFT - PMR_IMPL_PAGE_SHIFT) +
                       PMR_IMPL_PAGE_COLOR_BITS <=
                   32,
               "pmr_impl_page_of takes the mask's bits from the low 32 bits "
               "of an address");

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
  _Atomic(const pmr_impl_page_source *) owner;
} pmr_impl_map_entry;
extern _Atomic(pmr_impl_map_entry *)
    pmr_impl_page_map[(size_t)1 << PMR_IMPL_MAP_TOP_BITS];

/* The source whose segment holds the page of p, or NULL when none does.
 * Lock-free; safe for any address. Inline: a malloc-shaped client (SQLite)
 * asks a block's size at every allocation and free. */
static inline const pmr_impl_page_source *pmr_impl_page_map_get(const void *p) {
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

/* The block size of p when it lies in one of src's pages serving a class
 * (a pooled block in use), else 0 (an oversize block, in a run or not: its
 * size is the caller's to know). Any thread. */
static inline size_t pmr_impl_source_usable_size(
    const pmr_impl_page_source *src, const void *p) {
  if (pmr_impl_page_map_get(p) != src) return 0;
  /* Only `block`, which does not change while p is in use (another thread
   * may be moving the page between states): a run's is above any class. */
  size_t block = pmr_impl_page_of(src, p)->block;
  return block > PMR_IMPL_HEAP_LARGEST ? 0 : block;
}

/* Whether p is the start of one of src's runs (any thread). Asked of the
 * page map through p's frame's first page, never part of a run: a run's
 * own pages may be another source's meanwhile (a pool over this one takes
 * its segments from runs, and records them as its own). */
static inline bool pmr_impl_source_is_run(const pmr_impl_page_source *src,
                                          const void *p) {
  if (pmr_impl_page_map_get((const void *)((uintptr_t)p & src->frame_mask)) !=
      src)
    return false;
  return pmr_impl_page_of(src, p)->block > PMR_IMPL_HEAP_LARGEST;
}

/* try_resize of the block at the start of run p: in place when the run's
 * pages hold new_bytes and the block shrinks by at most half (as an
 * oversize block, pool_core.h). */
static inline bool pmr_impl_source_run_fits(const pmr_impl_page_source *src,
                                            const void *p, size_t old_bytes,
                                            size_t new_bytes) {
  return new_bytes <= pmr_impl_page_of(src, p)->block &&
         new_bytes >= old_bytes / 2;
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
/* Runs: an oversize block that would be a mapping (PMR_IMPL_OS_BIG_MIN
 * bytes or more with its trailer, pool_core.h), up to PMR_IMPL_RUN_PAGES
 * pages, lies in that many free pages of one segment,
 * when the source maps its segments (os) and one has them free, so that
 * memory small blocks freed serves it, and serves small blocks again once
 * it is freed, with no system call (nor page fault for its pages that were
 * resident). A pool over this one may take a run as a segment and record
 * its pages as its own in the page map: a run is known by its frame's first
 * page, and its pages are recorded as the source's again when it comes
 * back. Larger blocks are
 * mappings with room to grow in place (pool_core.h): a run cannot grow
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
/* pg, whose blocks are all free and which serves no class any more, back
 * to the free set; the segment goes back to upstream when it is all free
 * beyond the retention bound and give_back allows (else later, from a slow
 * path: pmr_impl_source_shrink). */
void pmr_impl_source_give_page(pmr_impl_page_source *src, pmr_impl_page *pg,
                               bool give_back);

/* A block of class k, or NULL when upstream fails (k != &h->empty). */
void *pmr_impl_heap_alloc_slow(pmr_impl_page_heap *h, pmr_impl_page_class *k);

/* A free block of k's list (its current page's), or NULL when the list is
 * empty. No call: the pools' fast paths inline it and stay leaves. */
static inline void *pmr_impl_heap_pop(pmr_impl_page_class *k) {
  void *b = k->free;
  if (PMR_LIKELY(b != NULL)) {
    k->free = pmr_impl_link_get(b);
    PMR_IMPL_UNDEFINED(b, k->block);
  }
  return b;
}

/* The slow path's common case, for a fast path whose pop failed: a block
 * from k's current page (k takes the blocks freed into it since k last took
 * its list, with those freed by other threads collected, or new ones
 * carved) or from k's partial pages; NULL when k needs a page from the
 * source (then the full slow path). Touches neither the source nor errno;
 * on a heap with no page (a stand-in's) it writes nothing. The caller owns
 * h. */
void *pmr_impl_heap_alloc_local(pmr_impl_page_heap *h, pmr_impl_page_class *k);

static inline void *pmr_impl_heap_alloc(pmr_impl_page_heap *h,
                                        pmr_impl_page_class *k) {
  void *b = pmr_impl_heap_pop(k);
  if (PMR_LIKELY(b != NULL)) return b;
  return pmr_impl_heap_alloc_slow(h, k);
}

/* Like pmr_impl_heap_alloc, but only from memory the source holds already
 * (never calls upstream): for deallocation paths that need a block. */
void *pmr_impl_heap_alloc_held(pmr_impl_page_heap *h, pmr_impl_page_class *k);

/* Added to a current page's count (pmr_impl_page): more than a page's
 * blocks, so its frees never bring it to 0. */
#define PMR_IMPL_PAGE_CURRENT_BIAS ((uint32_t)1 << 31)

/* The page's count reached 0: it was full, or its last block in use
 * came back. */
void pmr_impl_heap_free_slow(pmr_impl_page *pg);

/* Pushes pooled block p onto its page pg's free list; true when the page
 * then needs pmr_impl_heap_free_slow. The caller owns pg->heap. */
static inline bool pmr_impl_page_push(pmr_impl_page *pg, void *p) {
  void *head = pg->free;
  PMR_IMPL_NOACCESS(p, pg->block);
  pmr_impl_link_set(p, head);
  pg->free = p;
  return PMR_UNLIKELY(--pg->count == 0);
}

/* Gives back pooled block p of src's pages; the caller owns the page's
 * heap (its lock). */
static inline void pmr_impl_heap_free(const pmr_impl_page_source *src,
                                      void *p) {
  pmr_impl_page *pg = pmr_impl_page_of(src, p);
  if (pmr_impl_page_push(pg, p)) pmr_impl_heap_free_slow(pg);
}

/* Gives back pooled block p (of the page pg) from a thread that does not
 * own pg->heap. */
void pmr_impl_heap_free_remote(pmr_impl_page *pg, void *p);

#endif /* PMR_IMPL_PAGE_HEAP_H */
