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
 * segments it maps itself (platform.h), or whose upstream maps its large
 * blocks (a pool over the malloc resource), uses frames of a whole segment
 * (PMR_IMPL_SEGMENT_PAGES pages, aligned to that; page_source.h:
 * seg_frames): a program freeing blocks across many pages touches one small
 * table per MiB, not one OS page per page (a TLB miss at every free in a
 * shuffled free), and the free finds the descriptor from constants. Over
 * any other upstream a frame is one page (segments then need only page
 * alignment, so a pool works over a small buffer): its descriptor sits in
 * the page. Tables all at frame starts would compete for one set of every
 * cache level; a program freeing into a few dozen pages would miss on the
 * descriptor at every free.
 *
 * A page whose blocks are all free leaves its class for the source's set of
 * free pages, where any class (of any heap sharing the source) can take it;
 * a class's current page stays until the heap would ask upstream for a
 * segment.
 * A segment whose pages are all free goes back to upstream once the free
 * pages exceed the retention bound, or on trim.
 *
 * When the pool maps its segments itself (platform.h: its upstream is the
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
 * The modules, each using only those listed below it:
 *   page_heap.h    the heaps (classes and their pages)
 *   page_source.h  the source (descriptors, segments, free set, runs,
 *                  give-back to upstream and the OS)
 *   page_map.h     which source holds a page, process-wide
 *   page_geometry.h  page, segment and frame sizes; descriptor slots
 *   pool_classes.h the size classes (the one definition);
 *                  segment_cache.h the segments kept between pools;
 *                  platform.h the OS (maps, purge, the delays' clock).
 * Above them oversize.h (oversize blocks: runs, mappings) and the
 * resources. */
#ifndef PMR_IMPL_PAGE_HEAP_H
#define PMR_IMPL_PAGE_HEAP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "resources/internal/page_source.h"
#include "resources/internal/pool_classes.h"

/* Classes 8 .. 16384 bytes of the class rule in pool_classes.h: the last one
 * is the last page-fitted class. */
#define PMR_IMPL_HEAP_CLASSES \
  (PMR_IMPL_POOL_FIT_FIRST + PMR_IMPL_POOL_FIT_CLASSES)
/* How much of a page's untouched blocks a class lays out at a time: what
 * it will touch soon, in L1 while it does. */
#define PMR_IMPL_CARVE_BYTES 4096u

typedef struct pmr_impl_page_class {
  /* The current page's free blocks, taken from its list whole: the fast
   * path pops here, a load fewer than through the page, and touches no
   * descriptor; the page's own list gathers the owner's frees meanwhile.
   * Blocks of no other page. */
  void *free;
  pmr_impl_page *current; /* never NULL: the heap's no_page when none */
  pmr_impl_page *partial;
  uint32_t block; /* block size (0 for the empty class) */
  uint8_t index;
  uint8_t pad;
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
  /* Per class: the free_sum of a page with every block free and no frame
   * table in it, once computed (0 until then). */
  uint64_t full_sums[PMR_IMPL_HEAP_CLASSES];
#ifdef PMR_SECURE
  struct pmr_impl_heap_delay *delay; /* NULL: frees are not delayed */
#endif
} pmr_impl_page_heap;

#ifdef PMR_SECURE
/* Secure builds, the drop-in's heaps: delayed reuse. A block its owner
 * frees waits here, filled and linked as a free block, until
 * PMR_IMPL_DELAY_BLOCKS more frees by the same heap push it onto its page's
 * list, so that a pointer kept after free does not reach the block's next
 * owner at once. Its page counts it in use meanwhile. A second free of it
 * is found here (pmr_impl_page_misuse); a write into it while it waits is
 * reported when it leaves, and the block dropped (never handed out again).
 * Another thread's frees wait on the page's remote list instead, until the
 * owner collects them. */
#define PMR_IMPL_DELAY_BLOCKS 32u
typedef struct pmr_impl_heap_delay {
  void *blocks[PMR_IMPL_DELAY_BLOCKS]; /* NULL: an empty slot */
  uint32_t next;                       /* the oldest slot */
} pmr_impl_heap_delay;
/* Delays p, which starts a block of pg in use (the push's checks passed);
 * the oldest block waiting goes to its page (pmr_impl_heap_free_slow when
 * due). The caller owns pg->heap, whose delay is not NULL. */
void pmr_impl_heap_delay_push(pmr_impl_page *pg, void *p);
/* Whether p waits in h's delay. */
bool pmr_impl_heap_delayed(const pmr_impl_page_heap *h, const void *p);
/* Every block waiting in h's delay to its page; true when there was one.
 * Called by a trim the program asks for, a thread's exit, and when the
 * source can grow no more; not by the engine's own trims, which would cut
 * the wait short whenever the heap takes new memory. */
bool pmr_impl_heap_delay_flush(pmr_impl_page_heap *h);
#endif

/* A counter only one thread writes at a time, others read: a plain load
 * and store, no read-modify-write. */
static inline void pmr_impl_count_up(atomic_size_t *n) {
  atomic_store_explicit(n, atomic_load_explicit(n, memory_order_relaxed) + 1,
                        memory_order_relaxed);
}

/* Options with zeros replaced by the defaults, clamped to what pages serve
 * (largest_required_pool_block at most PMR_POOL_PAGE_LARGEST_BLOCK). */
pmr_pool_options pmr_impl_heap_options(const pmr_pool_options *opts);

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
#define PMR_IMPL_HEAP_SMALL_CLASSES PMR_IMPL_POOL_TABLE_CLASSES

/* The fast paths' size-class map, derived from pool_classes.h's class rule
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

/* A block of class k, or NULL when upstream fails (k != &h->empty). */
void *pmr_impl_heap_alloc_slow(pmr_impl_page_heap *h, pmr_impl_page_class *k);

/* The per-process key ("misuse" below), random and odd: free blocks' links
 * are encoded with it (mem_check.h), the pages' free sums hash with it, and
 * oversize blocks' check words derive from it. Set once, before the first
 * heap is made (pmr_impl_heap_init, under a pthread_once), and only read
 * after; a plain load, which the compiler may keep in a register. */
extern uintptr_t pmr_impl_free_mark_value;
/* Sets the key, once per process (what pmr_impl_heap_init calls). */
void pmr_impl_free_mark_init(void);

/* A free block of k's list (its current page's), or NULL when the list is
 * empty or its first block is not to be handed out (then nothing changed:
 * pmr_impl_heap_pop_checked). No call: the pools' fast paths inline it and
 * stay leaves.
 *
 * The next block's line is prefetched: the next pop of the class reads its
 * link, and a list that frees built in random order (a churn, frees
 * shuffled) makes those reads a chain of cache misses, one per pop, that
 * the prefetch starts a whole allocation early. A list carved in address
 * order costs nothing more (the line is on its way already); the end of
 * the list prefetches NULL, which never faults. */
/* The pop of b (k's first block), whose link leads out of b's page (a
 * write after free or an overflow wrote it), or which does not hold the
 * mark (handed out already: it was on the list twice, freed twice; or
 * written after it was freed): reported, and k's list dropped (never
 * followed), unless the process stops. Returns b when only its link was
 * bad, else NULL. */
void *pmr_impl_heap_pop_broken(pmr_impl_page_class *k, void *b);

#ifdef PMR_SECURE
/* Secure builds: b's body changed while it was free; reported; b handed
 * out all the same, unless the process stops. */
void pmr_impl_heap_fill_broken(pmr_impl_page_class *k, void *b);
/* The fill of a free block's body (past its link), checked when it is
 * handed out. */
#define PMR_IMPL_FREE_FILL 0xdf
bool pmr_impl_fill_intact(const void *b, size_t block);
void pmr_impl_fill(void *b, size_t block);
/* The bytes between a frame's table of descriptors and the blocks on
 * either side of it: at least this many, holding the fill from when the
 * page starts serving a class, so that a write running out of the blocks
 * next to the table meets them before the descriptors. */
#define PMR_IMPL_TABLE_GAP 16u
/* Fills them (pg starts serving its class). */
void pmr_impl_page_gaps_fill(const pmr_impl_page *pg);
/* Whether block p of pg (a page of src serving a class) leaves the gap next
 * to it intact: the PMR_IMPL_TABLE_GAP bytes after it when it is the last
 * block below the table, before it when it is the first above; true for
 * any other block (no division; one compare when the page does not hold
 * the table). */
static inline bool pmr_impl_page_gaps_intact(const pmr_impl_page_source *src,
                                             const pmr_impl_page *pg,
                                             const void *p) {
  /* Only a frame's first page holds the table. */
  if (((uintptr_t)p & ~src->frame_mask) >= PMR_IMPL_PAGE_SIZE) return true;
  char *base, *table, *past;
  pmr_impl_page_span(src, pg, &base, &table, &past);
  if (table == past) return true;
  const unsigned char *c = (const unsigned char *)p, *g;
  size_t block = pg->block;
  if (c + block <= (unsigned char *)table - PMR_IMPL_TABLE_GAP &&
      c + 2 * block > (unsigned char *)table - PMR_IMPL_TABLE_GAP)
    g = c + block; /* the last block below the table */
  else if (c >= (unsigned char *)past + PMR_IMPL_TABLE_GAP &&
           c - block < (unsigned char *)past + PMR_IMPL_TABLE_GAP)
    g = c - PMR_IMPL_TABLE_GAP; /* the first block above it */
  else
    return true;
  uint64_t w[PMR_IMPL_TABLE_GAP / 8];
  __builtin_memcpy(w, g, sizeof w);
  uint64_t diff = 0;
  for (unsigned i = 0; i < PMR_IMPL_TABLE_GAP / 8; ++i)
    diff |= w[i] ^ (UINT64_MAX / 0xff * PMR_IMPL_FREE_FILL);
  return diff == 0;
}
#endif

static inline void *pmr_impl_heap_pop(pmr_impl_page_class *k) {
  void *b = k->free;
  if (PMR_LIKELY(b != NULL)) {
    void *next = pmr_impl_link_peek(b);
    /* The list holds blocks of one page, linked by encoded links
     * (mem_check.h). One that decodes to an address out of the page is not
     * a free block's: a block handed out already (on the list twice: freed
     * twice), whose link word the pop cleared or the program wrote, or a
     * free block the program wrote after freeing it. It is never handed
     * out, its link never followed (page_heap.h, "misuse"). */
    if (PMR_UNLIKELY(
            (((uintptr_t)next ^ (uintptr_t)b) >> PMR_IMPL_PAGE_SHIFT) != 0 &&
            next != NULL))
      return NULL; /* nothing changed: see pmr_impl_heap_pop_checked */
    k->free = next;
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(next);
#endif
    pmr_impl_word_set(b, 0, NULL); /* decodes out of the page from now on */
    PMR_IMPL_UNDEFINED(b, k->block);
#ifdef PMR_SECURE
    if (PMR_UNLIKELY(!pmr_impl_fill_intact(b, k->block)))
      pmr_impl_heap_fill_broken(k, b);
    /* In use from now on: a free finds no fill there
     * (pmr_impl_block_filled), even if the program never writes it. */
    if (k->block > sizeof(void *)) pmr_impl_word_set(b, 1, NULL);
#endif
  }
  return b;
}

/* pmr_impl_heap_pop for slow paths: a block, or NULL when k's list is
 * empty or was dropped (reported). A pop that will not hand its block out
 * returns NULL with nothing changed and no call made, so that the fast
 * paths stay leaves: their slow path pops again through this, which
 * reports it (pmr_impl_heap_pop_broken). */
static inline void *pmr_impl_heap_pop_checked(pmr_impl_page_class *k) {
  void *first = k->free;
  void *b = pmr_impl_heap_pop(k);
  if (PMR_UNLIKELY(b == NULL && first != NULL))
    b = pmr_impl_heap_pop_broken(k, first);
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

/* ---- misuse: double frees, and pointers that start no block ----------
 *
 * In release builds too, a program's double free, a bad pointer or a write
 * into a free block never puts a block in two owners' hands, nor a page
 * back to the source with a block in use:
 *   - a free's pointer must start a block of a page serving a class: its
 *     offset in the page a multiple of the block size (one multiplication,
 *     start_check), else it is reported;
 *   - a block past those laid out so far was never handed out: the owner's
 *     free tells it from the page's carve (pmr_impl_block_uncarved), the
 *     owner's collection of another thread's frees too;
 *   - a free of the block at the head of its page's list (a block freed
 *     twice with no free into its page between) is reported at once: the
 *     head is read anyway;
 *   - free blocks hold their link encoded with a per-process random key
 *     (mem_check.h), and a block handed out has its link word cleared: a
 *     pop (pmr_impl_heap_pop) whose block's link decodes out of the page
 *     (its word cleared or written since: a block on a list twice, handed
 *     out already; or a write after free) reports it and never hands the
 *     block out nor follows the link. So any other double free is reported
 *     when the list would hand the block out a second time;
 *   - the owner's free reads nothing of the block (a free in shuffled order
 *     would wait for that cache miss): it adds the block's
 *     pmr_impl_free_hash to its page's free_sum. A page whose count says
 *     every block came back goes to the source only if its sum is that of
 *     all its blocks; else (a double free brought the count down early) the
 *     heap walks the list, reports the block found twice, and keeps the page
 *     with the blocks in use;
 *   - another thread's free decodes the block's link word: one that decodes
 *     into the page (or to NULL) is free already, a double free (the
 *     program would have to hold the key to write such a word by chance).
 * What is reported goes through pmr_report_misuse; the call then does
 * nothing (a pop drops its class's list: those blocks stay out of use), or
 * the process stops (abort) when pmr_impl_misuse_stops() (the drop-in
 * malloc's default, as glibc's). */
/* Whether a reported misuse stops the process (false by default: the
 * resources report it and ignore the call; the drop-in malloc sets it). */
void pmr_impl_misuse_set_stop(bool stop);
bool pmr_impl_misuse_stops(void);

/* p's offset in the page times pg's start_check (page_source.h). Whether
 * p starts a block of pg: the product's low half is below start_check
 * (false when pg serves no class: start_check 0, and then pg has no heap
 * either; or p lies inside a block). One multiplication and a compare. */
static inline uint64_t pmr_impl_block_prod(const pmr_impl_page *pg,
                                           const void *p) {
  uint32_t off = (uint32_t)((uintptr_t)p & (PMR_IMPL_PAGE_SIZE - 1));
  return (uint64_t)off * pg->start_check;
}
static inline bool pmr_impl_block_starts(const pmr_impl_page *pg,
                                         const void *p) {
  return (uint32_t)pmr_impl_block_prod(pg, p) < pg->start_check;
}
/* The index in its page of block p, which starts a block of pg: for an
 * offset i * block, the product is i * 2^32 + i * (start_check * block -
 * 2^32), whose second term is below 2^32. */
static inline uint32_t pmr_impl_block_index(const pmr_impl_page *pg,
                                            const void *p) {
  return (uint32_t)(pmr_impl_block_prod(pg, p) >> 32);
}

/* What free block p adds to its page's free_sum: a rotation of its offset
 * in the page times the key (random, odd), so that no set of blocks other
 * than all of a page's sums to the sum of all of them but by a chance of
 * about 2^-64, whatever a program frees twice. */
static inline uint64_t pmr_impl_free_hash_at(uint32_t off) {
  uint64_t x = (uint64_t)off * (uint64_t)pmr_impl_free_mark_value;
  return (x << 29) | (x >> 35);
}
static inline uint64_t pmr_impl_free_hash(const void *p) {
  return pmr_impl_free_hash_at(
      (uint32_t)((uintptr_t)p & (PMR_IMPL_PAGE_SIZE - 1)));
}

/* Whether block p of pg looks free: its first word decodes (mem_check.h)
 * to NULL or to an address in p's page. A block in use holds the
 * program's bytes there, which decode so only by a chance of about 2^-48. */
static inline bool pmr_impl_block_looks_free(void *p) {
  uintptr_t next = (uintptr_t)pmr_impl_word_peek(p, 0) ^ PMR_IMPL_LINK_KEY(p);
  return next == 0 || ((next ^ (uintptr_t)p) >> PMR_IMPL_PAGE_SHIFT) == 0;
}

/* Whether another thread's free of p into pg needs a closer look: p starts
 * no block of a class, or looks free. */
static inline bool pmr_impl_block_suspect(const pmr_impl_page *pg, void *p) {
  if (PMR_UNLIKELY(!pmr_impl_block_starts(pg, p))) return true;
  return PMR_UNLIKELY(pmr_impl_block_looks_free(p));
}

/* Whether block p (which starts a block of pg) was never handed out: it
 * lies past the blocks laid out so far, which are laid out in address
 * order (pmr_impl_page's carve). Only pg's owner may ask (carve is its). */
static inline bool pmr_impl_block_uncarved(const pmr_impl_page *pg,
                                           const void *p) {
  return (const char *)p >= pg->carve;
}

/* p onto pg's list, its hash added to the page's free_sum; true when the
 * page then needs pmr_impl_heap_free_slow. */
static inline bool pmr_impl_page_push_now(pmr_impl_page *pg, void *p) {
  void *head = pg->free;
  pg->free_sum += pmr_impl_free_hash(p);
  PMR_IMPL_NOACCESS(p, pg->block);
  pg->free = p;
  pmr_impl_link_set(p, head);
  return PMR_UNLIKELY(--pg->count == 0);
}

/* The push itself, after the checks (secure builds: the block filled, or
 * delayed: pmr_impl_heap_delay_push). */
static inline bool pmr_impl_page_push_checked(pmr_impl_page *pg, void *p) {
#ifdef PMR_SECURE
  if (pg->heap->delay != NULL) {
    pmr_impl_heap_delay_push(pg, p);
    return false;
  }
  pmr_impl_fill(p, pg->block);
#endif
  return pmr_impl_page_push_now(pg, p);
}

/* Reports a broken list or block (what, the class's block size, where),
 * and stops the process when pmr_impl_misuse_stops(). */
void pmr_impl_heap_broken(const char *what, size_t block, const void *at);

/* A free of p into pg that looked suspect (pmr_impl_block_suspect, or for
 * the owner: p starts no block, was never handed out, or heads the page's
 * list): true when it is misuse (reported; the process stops if
 * pmr_impl_misuse_stops()), false when p is a block in use after all (its
 * first word decoded into the page by chance).
 * owner: the caller owns pg->heap and may read its lists and carve. */
bool pmr_impl_page_misuse(pmr_impl_page *pg, void *p, bool owner);

/* Walks pg's free list (the owner's): a block found a second time (freed
 * twice), a link out of the page, a pointer that starts no block, or one
 * never handed out is reported, and the list cut there (what follows is
 * never followed: those blocks stay out of the page's hands). Returns how
 * many blocks the list keeps, each once, and sets free_sum to theirs. */
uint32_t pmr_impl_page_list_check(pmr_impl_page *pg);
/* A list of pg's blocks (other threads' frees, each in pg and laid out)
 * longer than the blocks pg laid out: it holds a block twice. Reported;
 * the list is cut before the block's second visit. Returns how many blocks
 * it keeps, each once, and its last block. */
uint32_t pmr_impl_page_list_cut_loop(pmr_impl_page *pg, void *list,
                                     void **tail);
/* The free_sum of pg with all its blocks free (every block laid out); h's
 * heap owns pg. */
uint64_t pmr_impl_page_full_sum(pmr_impl_page_heap *h, const pmr_impl_page *pg);

/* Where pg's blocks of `block` bytes lie: n_before from start (up to its
 * frame's table, when the page holds it), n_after from after (past the
 * table); at most max_blocks in all (at least one). */
void pmr_impl_page_layout(const pmr_impl_page_source *src,
                          const pmr_impl_page *pg, size_t block,
                          size_t max_blocks, char **start, size_t *n_before,
                          char **after, size_t *n_after);

/* A suspect free by pg's owner (pmr_impl_block_suspect): reported when it
 * is misuse (then nothing is freed), else freed whole (pushed, and
 * pmr_impl_heap_free_slow when due). Nothing to do after it: the fast
 * paths call it last, as a tail call, and stay leaves. */
void pmr_impl_page_free_suspect(pmr_impl_page *pg, void *p);

#ifdef PMR_SECURE
/* Secure builds: whether p, which its owner frees, looks free already: its
 * body still holds the fill a free gave it (a block of one word: its link
 * decodes into its page). A second free of a block anywhere on the lists
 * is then found at the free itself, not only when it heads them;
 * pmr_impl_page_misuse confirms it on the lists, so a block in use whose
 * bytes happen to match is pushed as any other. */
static inline bool pmr_impl_block_filled(const pmr_impl_page *pg, void *p) {
  if (pg->block <= sizeof(void *)) return pmr_impl_block_looks_free(p);
  return (uintptr_t)pmr_impl_word_peek(p, 1) ==
         UINTPTR_MAX / 0xff * PMR_IMPL_FREE_FILL;
}
#define PMR_IMPL_SECURE_FREED(pg, p) pmr_impl_block_filled(pg, p)
#else
#define PMR_IMPL_SECURE_FREED(pg, p) false
#endif

/* Pushes p, which starts a block of pg (pmr_impl_block_starts), onto pg's
 * free list; true when the page then needs pmr_impl_heap_free_slow. The
 * caller owns pg->heap. A block never handed out, or the one at the list's
 * head (freed twice in a row), is reported and ignored (false); the block
 * is not read (see "misuse" above), except in secure builds
 * (pmr_impl_block_filled). */
static inline bool pmr_impl_page_push_started(pmr_impl_page *pg, void *p) {
  if (PMR_UNLIKELY(pmr_impl_block_uncarved(pg, p) || p == pg->free ||
                   PMR_IMPL_SECURE_FREED(pg, p))) {
    pmr_impl_page_free_suspect(pg, p);
    return false;
  }
  return pmr_impl_page_push_checked(pg, p);
}

/* Pushes pooled block p onto its page pg's free list; true when the page
 * then needs pmr_impl_heap_free_slow. The caller owns pg->heap. A pointer
 * that starts no block is reported and ignored; the rest as by
 * pmr_impl_page_push_started. */
static inline bool pmr_impl_page_push(pmr_impl_page *pg, void *p) {
  if (PMR_UNLIKELY(!pmr_impl_block_starts(pg, p))) {
    pmr_impl_page_free_suspect(pg, p);
    return false;
  }
  return pmr_impl_page_push_started(pg, p);
}

/* Gives back pooled block p of src's pages; the caller owns the page's
 * heap (its lock). */
static inline void pmr_impl_heap_free(const pmr_impl_page_source *src,
                                      void *p) {
  pmr_impl_page *pg = pmr_impl_page_of(src, p);
  if (pmr_impl_page_push(pg, p)) pmr_impl_heap_free_slow(pg);
}

/* Gives back pooled block p (of the page pg) from a thread that does not
 * own pg->heap; misuse is reported and ignored, as by pmr_impl_page_push. */
void pmr_impl_heap_free_remote(pmr_impl_page *pg, void *p);

#endif /* PMR_IMPL_PAGE_HEAP_H */
