/* The page core's source: segments from upstream, the set of free pages,
 * and the give-back of memory to upstream and to the OS (see
 * page_source.h; runs of free pages are in page_runs.c). */
/* POSIX 2008 (clock_gettime, platform.h) for builds that ask for strict ISO C
 * (-std=c11) and define nothing. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "resources/internal/page_source.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "resources/internal/page_source_impl.h"
#include "resources/internal/platform.h"
#include "resources/internal/reservoir.h"
#include "resources/internal/segment_cache.h"

/* ---- source: segments and free pages ------------------------------------ */

_Static_assert(sizeof(pmr_impl_page) <= PMR_IMPL_PAGE_SLOT,
               "a descriptor fits its slot");
_Static_assert(offsetof(pmr_impl_page, heap) + sizeof(void *) <=
                       PMR_IMPL_CACHE_LINE &&
                   offsetof(pmr_impl_page, remote) >= PMR_IMPL_CACHE_LINE,
               "an owner's free reads and writes the descriptor's first line "
               "only; a remote free writes the second only");
_Static_assert(PMR_IMPL_PAGE_SLOT % PMR_MAX_ALIGN == 0,
               "blocks after the descriptor keep the basic alignment");

/* pg's index in segment seg. */
static unsigned seg_index(const pmr_impl_page_source *src,
                          const pmr_impl_page *seg, const pmr_impl_page *pg) {
  return (unsigned)((size_t)(pmr_impl_page_base(src, pg) -
                             pmr_impl_page_base(src, seg)) >>
                    PMR_IMPL_PAGE_SHIFT);
}

_Static_assert(PMR_IMPL_SEGMENT_PAGES <= 32, "a segment's pages fit its mask");

/* Free segments beyond the bound go back only once no new segment was
 * needed for a while: a program that frees everything and allocates it
 * again (a round of work, a request burst) keeps its pages instead of
 * giving them to malloc and faulting them in again. */
static bool quiet_since_grow(const pmr_impl_page_source *src) {
  return pmr_impl_coarse_ns() -
             atomic_load_explicit(&src->last_grow_ns, memory_order_relaxed) >=
         PMR_IMPL_GIVE_BACK_DELAY_NS;
}

void pmr_impl_source_init(pmr_impl_page_source *src, pmr_mem_resource *up,
                          size_t max_blocks, size_t retained_bytes,
                          bool shared) {
  memset(src, 0, sizeof *src);
  atomic_init(&src->lock, 0);
  atomic_init(&src->shrink_wanted, false);
  atomic_init(&src->trim_wanted, false);
  atomic_init(&src->cache_wait, false);
  atomic_init(&src->purge_wanted, false);
  atomic_init(&src->last_grow_ns, 0);
  atomic_init(&src->resident, 0);
  atomic_init(&src->resident_peak, 0);
  src->shared = shared;
  src->upstream = pmr_resource_or_default(up);
  src->os = pmr_impl_os_direct(src->upstream);
  src->decommit =
      src->os || pmr_impl_os_backed(src->upstream, PMR_IMPL_OS_LARGE_MIN);
  src->seg_frames = pmr_impl_os_maps_large(src->upstream);
  /* pmr_impl_page_of_seg assumes this geometry without reading it: both
   * come from the same macros. */
  unsigned shift =
      src->seg_frames ? PMR_IMPL_SEG_FRAME_SHIFT : PMR_IMPL_PAGE_SHIFT;
  src->frame_mask = PMR_IMPL_FRAME_MASK(shift);
  src->color_mask = PMR_IMPL_COLOR_MASK(shift);
  src->max_blocks = max_blocks > UINT32_MAX ? UINT32_MAX : (unsigned)max_blocks;
  if (retained_bytes == 0) retained_bytes = PMR_IMPL_DEFAULT_RETAINED_BYTES;
  src->retain_pages = retained_bytes / PMR_IMPL_PAGE_SIZE;
  src->next_pages = PMR_IMPL_SEGMENT_PAGES / 4; /* small programs stay small */
}

/* The free set's list through prev/next, most recently freed first. */
static void page_push(pmr_impl_page **head, pmr_impl_page *pg) {
  pg->prev = NULL;
  pg->next = *head;
  if (*head != NULL) (*head)->prev = pg;
  *head = pg;
}

static void page_unlink(pmr_impl_page **head, pmr_impl_page *pg) {
  if (pg->prev != NULL)
    pg->prev->next = pg->next;
  else
    *head = pg->next;
  if (pg->next != NULL) pg->next->prev = pg->prev;
}

static void free_set_count(pmr_impl_page_source *src, pmr_impl_page *pg) {
  pg->state = PMR_IMPL_PAGE_FREE;
  src->free_count++;
  pmr_impl_page *seg = pg->segment;
  seg->seg_free_mask |= 1u << seg_index(src, seg, pg);
  if (++seg->seg_free == seg->seg_pages) src->empty_segments++;
}

/* pg (dirty: its memory was used) joins the free set at its head. */
static void free_set_push(pmr_impl_page_source *src, pmr_impl_page *pg,
                          bool dirty, uint64_t now) {
  page_push(&src->free_pages, pg);
  if (src->free_tail == NULL) src->free_tail = pg;
  pg->dirty = dirty && pg->decommit;
  pg->freed_ns = now;
  free_set_count(src, pg);
}

/* pg, whose memory went back to the OS, joins the free set at its tail. */
static void free_set_append_clean(pmr_impl_page_source *src,
                                  pmr_impl_page *pg) {
  pg->next = NULL;
  pg->prev = src->free_tail;
  if (src->free_tail != NULL)
    src->free_tail->next = pg;
  else
    src->free_pages = pg;
  src->free_tail = pg;
  if (src->clean_from == NULL) src->clean_from = pg;
  pg->dirty = false;
  free_set_count(src, pg);
}

static void free_set_remove(pmr_impl_page_source *src, pmr_impl_page *pg) {
  if (src->free_tail == pg) src->free_tail = pg->prev;
  if (src->clean_from == pg) src->clean_from = pg->next;
  page_unlink(&src->free_pages, pg);
  src->free_count--;
  pmr_impl_page *seg = pg->segment;
  seg->seg_free_mask &= ~(1u << seg_index(src, seg, pg));
  if (seg->seg_free-- == seg->seg_pages) src->empty_segments--;
}

void pmr_impl_source_unfree(pmr_impl_page_source *src, pmr_impl_page *pg) {
  free_set_remove(src, pg);
}

static size_t segment_bytes(const pmr_impl_page *seg) {
  return (size_t)seg->seg_pages * PMR_IMPL_PAGE_SIZE;
}

/* Unlinks segment seg (all pages free) from src; the caller frees it. */
static void segment_unlink(pmr_impl_page_source *src, pmr_impl_page *seg) {
  size_t dirty = 0;
  for (uint32_t i = 0; i < seg->seg_pages; ++i) {
    pmr_impl_page *pg = pmr_impl_seg_page(src, seg, i);
    dirty += pg->dirty;
    free_set_remove(src, pg);
  }
  pmr_impl_source_resident_sub(src, dirty * PMR_IMPL_PAGE_SIZE);
  if (seg->seg_prev != NULL)
    seg->seg_prev->seg_next = seg->seg_next;
  else
    src->segments = seg->seg_next;
  if (seg->seg_next != NULL) seg->seg_next->seg_prev = seg->seg_prev;
  src->segment_bytes -= segment_bytes(seg);
  src->released_bytes += segment_bytes(seg);
}

/* Sets one of the reasons (trim_wanted, cache_wait) for the slow paths to
 * call pmr_impl_source_shrink, then the flag they read; shrink clears the
 * flag before it reads the reasons, so none is lost. */
static void want_shrink(atomic_bool *reason, pmr_impl_page_source *src) {
  atomic_store(reason, true);
  atomic_store(&src->shrink_wanted, true);
}

/* Gives the memory of a segment (unlinked, or never linked) back. */
static void segment_memory_free(pmr_impl_page_source *src, char *mem,
                                size_t bytes) {
  if (src->os) {
    if (pmr_impl_segment_cache_put(mem, bytes))
      want_shrink(&src->cache_wait, src);
    else
      pmr_impl_os_unmap(mem, bytes);
  } else /* as segment_new asked for it */
    pmr_deallocate(src->upstream, mem, bytes, ~src->frame_mask + 1);
}

void pmr_impl_source_wait_cache(pmr_impl_page_source *src) {
  if (!atomic_load_explicit(&src->cache_wait, memory_order_relaxed))
    want_shrink(&src->cache_wait, src);
}

/* The process-wide caches' delays (segment_cache.h, reservoir.h): true
 * while either still keeps memory. */
static bool caches_tick(void) {
  bool seg = pmr_impl_segment_cache_tick();
  return pmr_impl_reservoir_tick() || seg;
}

static void segment_free(pmr_impl_page_source *src, pmr_impl_page *seg) {
  size_t bytes = segment_bytes(seg);
  char *mem = pmr_impl_page_base(src, seg);
  pmr_impl_page_map_set(mem, bytes, NULL);
  PMR_IMPL_UNDEFINED(mem, bytes);
  segment_memory_free(src, mem, bytes);
}

/* A new segment from upstream, its pages in the free set (under no lock). */
static pmr_impl_page *segment_new(pmr_impl_page_source *src) {
  int saved = errno;
  pmr_impl_source_lock(src);
  unsigned n = src->next_pages;
  pmr_impl_source_unlock(src);
  char *mem = NULL;
  bool warm = false; /* its memory may be resident: free pages to purge */
  if (src->os) {     /* a warm segment another pool gave back, if any */
    size_t got = 0;
    _Static_assert(
        (size_t)1 << PMR_IMPL_SEG_FRAME_SHIFT == PMR_IMPL_SEGMENT_CACHE_MAX,
        "cached blocks are aligned as the frames of mapped segments");
    mem = (char *)pmr_impl_segment_cache_take((size_t)n * PMR_IMPL_PAGE_SIZE,
                                              PMR_IMPL_SEGMENT_CACHE_MAX,
                                              PMR_IMPL_PAGE_SIZE, &got, &warm);
    if (mem != NULL) n = (unsigned)(got / PMR_IMPL_PAGE_SIZE);
  }
  for (; mem == NULL && n >= 1; n /= 2) {
    size_t bytes = (size_t)n * PMR_IMPL_PAGE_SIZE;
    mem = src->os ? (char *)pmr_impl_os_map(bytes, ~src->frame_mask + 1)
                  : (char *)pmr_allocate(src->upstream, bytes,
                                         ~src->frame_mask + 1);
    if (mem != NULL) break;
  }
  if (mem == NULL) return NULL; /* errno as the last attempt left it */
  if (((uintptr_t)mem & ~src->frame_mask) != 0) {
    /* An upstream that broke the contract of alignment (of
     * PMR_TRAIT_MAPS_LARGE's blocks, for segment frames): its pages'
     * descriptors would lie outside the memory. */
    pmr_report_misuse(
        "pool: upstream %p gave a block of %zu bytes at %p, not aligned to "
        "the %zu bytes asked; the pool fails the request",
        (void *)src->upstream, (size_t)n * PMR_IMPL_PAGE_SIZE, (void *)mem,
        (size_t)(~src->frame_mask + 1));
    pmr_deallocate(src->upstream, mem, (size_t)n * PMR_IMPL_PAGE_SIZE,
                   ~src->frame_mask + 1);
    errno = ENOMEM;
    return NULL;
  }
  if (!pmr_impl_page_map_set(mem, (size_t)n * PMR_IMPL_PAGE_SIZE, src)) {
    segment_memory_free(src, mem, (size_t)n * PMR_IMPL_PAGE_SIZE);
    errno = ENOMEM;
    return NULL;
  }
  errno = saved;
  bool decommit = src->os || (src->decommit && (size_t)n * PMR_IMPL_PAGE_SIZE >=
                                                   PMR_IMPL_OS_LARGE_MIN);
  pmr_impl_page *seg = pmr_impl_page_of(src, mem);
  for (unsigned i = 0; i < n; ++i) {
    pmr_impl_page *pg = pmr_impl_seg_page(src, seg, i);
    memset(pg, 0, sizeof *pg);
    atomic_init(&pg->remote, NULL);
    pg->segment = seg;
    pg->decommit = decommit;
    pg->dirty = warm; /* for segment_link */
    pmr_impl_page_noaccess(src, pg);
  }
  seg->seg_pages = n;
  return seg;
}

static void segment_link(pmr_impl_page_source *src, pmr_impl_page *seg) {
  seg->seg_prev = NULL;
  seg->seg_next = src->segments;
  if (src->segments != NULL) src->segments->seg_prev = seg;
  src->segments = seg;
  src->segment_bytes += segment_bytes(seg);
  uint64_t now = pmr_impl_coarse_ns();
  atomic_store_explicit(&src->last_grow_ns, now, memory_order_relaxed);
  size_t warm = 0;
  for (uint32_t i = 0; i < seg->seg_pages; ++i) {
    pmr_impl_page *pg = pmr_impl_seg_page(src, seg, i);
    free_set_push(src, pg, pg->dirty, now);
    warm += pg->dirty;
  }
  pmr_impl_source_resident_add(src, warm * PMR_IMPL_PAGE_SIZE);
  if (src->next_pages < PMR_IMPL_SEGMENT_PAGES) src->next_pages *= 2;
}

void pmr_impl_source_before_grow(pmr_impl_page_source *src,
                                 void (*fn)(void *arg), void *arg) {
  src->before_grow = fn;
  src->before_grow_arg = arg;
}

bool pmr_impl_source_grow(pmr_impl_page_source *src) {
  if (src->before_grow != NULL) /* no lock held */
    src->before_grow(src->before_grow_arg);
  pmr_impl_page *seg = segment_new(src); /* no lock held */
  if (seg == NULL) return false;
  pmr_impl_source_lock(src);
  segment_link(src, seg);
  pmr_impl_source_unlock(src);
  return true;
}

/* ---- resident memory and its peak ---------------------------------------- */

void pmr_impl_source_resident_add(pmr_impl_page_source *src, size_t bytes) {
  size_t now =
      atomic_fetch_add_explicit(&src->resident, bytes, memory_order_relaxed) +
      bytes;
  size_t peak = atomic_load_explicit(&src->resident_peak, memory_order_relaxed);
  while (now > peak && !atomic_compare_exchange_weak_explicit(
                           &src->resident_peak, &peak, now,
                           memory_order_relaxed, memory_order_relaxed)) {
  }
}

void pmr_impl_source_resident_sub(pmr_impl_page_source *src, size_t bytes) {
  atomic_fetch_sub_explicit(&src->resident, bytes, memory_order_relaxed);
}

void pmr_impl_source_make_room(pmr_impl_page_source *src, size_t bytes) {
  if (!src->decommit) return;
  size_t held = atomic_load_explicit(&src->resident, memory_order_relaxed);
  size_t peak = atomic_load_explicit(&src->resident_peak, memory_order_relaxed);
  /* Room below the peak (none when another thread's count got ahead of
   * its peak); no sum that could wrap. */
  size_t room = held < peak ? peak - held : 0;
  if (bytes > room) pmr_impl_source_purge(src, bytes - room);
}

/* ---- purge: the memory of pages long free goes back to the OS ---------- */

/* Pages taken out of the free set in one go, so the lock is not held
 * through many system calls. */
#define PURGE_BATCH 16u

/* Whether pg entered the free set at least PMR_IMPL_PURGE_DELAY_NS before
 * now (a time read before the lock may be older than pg's). */
static bool purge_is_due(const pmr_impl_page *pg, uint64_t now) {
  return pg->freed_ns <= now && now - pg->freed_ns >= PMR_IMPL_PURGE_DELAY_NS;
}

/* Under the lock: up to min(max, PURGE_BATCH) dirty free pages, oldest
 * first, that entered the free set at least PMR_IMPL_PURGE_DELAY_NS before
 * now (all: any), out of the free set (their segments cannot go back
 * meanwhile), linked by delayed_next. */
static pmr_impl_page *purge_take(pmr_impl_page_source *src, uint64_t now,
                                 bool all, size_t max) {
  pmr_impl_page *out = NULL;
  size_t n = 0;
  if (max > PURGE_BATCH) max = PURGE_BATCH;
  pmr_impl_page *pg =
      src->clean_from != NULL ? src->clean_from->prev : src->free_tail;
  /* Before clean_from the set is (about) in the order pages entered it:
   * the walk from the oldest stops at the first page freed too recently. */
  while (pg != NULL && n < max && (all || purge_is_due(pg, now))) {
    pmr_impl_page *prev = pg->prev;
    if (pg->dirty) {
      free_set_remove(src, pg);
      pg->delayed_next = out;
      out = pg;
      ++n;
    } else {
      src->clean_from = pg;
    }
    pg = prev;
  }
  return out;
}

/* With no lock held: gives the OS the memory of the pages purge_take took
 * (all but the OS page of a frame's table) and puts them back, clean, at
 * the free set's tail. */
static void purge_finish(pmr_impl_page_source *src, pmr_impl_page *list) {
  for (pmr_impl_page *pg = list; pg != NULL; pg = pg->delayed_next) {
    char *base, *table, *past;
    pmr_impl_page_span(src, pg, &base, &table, &past);
    pmr_impl_os_decommit(base, (size_t)(table - base));
    pmr_impl_os_decommit(past, (size_t)(base + PMR_IMPL_PAGE_SIZE - past));
  }
  pmr_impl_source_lock(src);
  while (list != NULL) {
    pmr_impl_page *next = list->delayed_next;
    pmr_impl_source_resident_sub(src, PMR_IMPL_PAGE_SIZE);
    free_set_append_clean(src, list);
    pmr_impl_page *seg = list->segment;
    if (seg->seg_free == seg->seg_pages &&
        src->free_count >= src->retain_pages + seg->seg_pages)
      want_shrink(&src->trim_wanted, src);
    list = next;
  }
  pmr_impl_source_unlock(src);
}

/* Under the lock, for a decommit source: the pages due, for the caller to pass
 * to purge_finish once unlocked. A shared source may be called under a
 * heap's lock: it only sets purge_wanted, for pmr_impl_source_shrink. */
static pmr_impl_page *purge_due(pmr_impl_page_source *src, uint64_t now) {
  if (!src->decommit) return NULL;
  if (!src->shared) return purge_take(src, now, false, PURGE_BATCH);
  pmr_impl_page *pg =
      src->clean_from != NULL ? src->clean_from->prev : src->free_tail;
  while (pg != NULL && !pg->dirty && purge_is_due(pg, now)) {
    src->clean_from = pg;
    pg = pg->prev;
  }
  if (pg != NULL && pg->dirty && purge_is_due(pg, now))
    atomic_store_explicit(&src->purge_wanted, true, memory_order_relaxed);
  return NULL;
}

/* Under the lock: the free page to take when pg heads the free set: the
 * first free page below pg in its segment that is as warm (dirty when pg
 * is) and not due to give its memory back, else pg (at most 15 descriptors
 * read, by the segment's mask). Pages filled from the start of their
 * segment leave its free pages together at its end, where a run finds
 * them, and the first page, which no run may take, serves a class before
 * any other. */
static pmr_impl_page *take_first_of_segment(const pmr_impl_page_source *src,
                                            pmr_impl_page *pg, uint64_t now) {
  pmr_impl_page *seg = pg->segment;
  uint32_t before = seg->seg_free_mask & ((1u << seg_index(src, seg, pg)) - 1u);
  for (; before != 0; before &= before - 1) {
    pmr_impl_page *c =
        pmr_impl_seg_page(src, seg, (unsigned)__builtin_ctz(before));
    if (!pg->dirty || (c->dirty && !purge_is_due(c, now))) return c;
  }
  return pg;
}

/* A free page, from the free set or (grow) a new segment; NULL if there is
 * none or upstream fails. */
pmr_impl_page *pmr_impl_source_take_page(pmr_impl_page_source *src, bool grow) {
  uint64_t now = src->decommit ? pmr_impl_coarse_ns() : 0;
  for (int attempt = 0; attempt < 2; ++attempt) {
    pmr_impl_source_lock(src);
    pmr_impl_page *pg = src->free_pages;
    if (pg != NULL) {
      pg = take_first_of_segment(src, pg, now);
      free_set_remove(src, pg);
      bool fresh = pg->decommit && !pg->dirty; /* its memory is not resident */
      pmr_impl_page *purge = purge_due(src, now);
      pmr_impl_source_unlock(src);
      if (fresh) pmr_impl_source_resident_add(src, PMR_IMPL_PAGE_SIZE);
      if (purge != NULL) purge_finish(src, purge);
      return pg;
    }
    pmr_impl_source_unlock(src);
    if (attempt == 1 || !grow || !pmr_impl_source_grow(src)) break;
  }
  return NULL;
}

/* Segments whose pages are all free, while more than keep free pages would
 * remain; unlinked under the lock, given back without it. */
size_t pmr_impl_source_trim(pmr_impl_page_source *src, size_t keep) {
  size_t given = 0;
  for (;;) {
    pmr_impl_source_lock(src);
    pmr_impl_page *seg = NULL;
    if (src->empty_segments != 0) {
      for (seg = src->segments; seg != NULL; seg = seg->seg_next)
        if (seg->seg_free == seg->seg_pages &&
            src->free_count >= keep + seg->seg_pages)
          break;
    }
    if (seg != NULL) segment_unlink(src, seg);
    pmr_impl_source_unlock(src);
    if (seg == NULL) break;
    given += segment_bytes(seg);
    segment_free(src, seg);
  }
  if (keep == 0) {
    pmr_impl_source_purge(src, SIZE_MAX);
    /* What stays is the peak from now on. */
    atomic_store_explicit(
        &src->resident_peak,
        atomic_load_explicit(&src->resident, memory_order_relaxed),
        memory_order_relaxed);
  }
  return given;
}

size_t pmr_impl_source_released(pmr_impl_page_source *src) {
  pmr_impl_source_lock(src);
  size_t n = src->released_bytes;
  pmr_impl_source_unlock(src);
  return n;
}

void pmr_impl_source_purge(pmr_impl_page_source *src, size_t bytes) {
  if (!src->decommit) return;
  size_t os_page = pmr_impl_os_page_size();
  if (os_page >= PMR_IMPL_PAGE_SIZE) return;      /* nothing but descriptors */
  size_t per_page = PMR_IMPL_PAGE_SIZE - os_page; /* what a page gives */
  size_t pages = bytes / per_page + (bytes % per_page != 0);
  while (pages != 0) {
    pmr_impl_source_lock(src);
    pmr_impl_page *purge = purge_take(src, 0, true, pages);
    pmr_impl_source_unlock(src);
    if (purge == NULL) break;
    for (pmr_impl_page *pg = purge; pg != NULL; pg = pg->delayed_next) --pages;
    purge_finish(src, purge);
  }
}

void pmr_impl_source_give_page(pmr_impl_page_source *src, pmr_impl_page *pg,
                               bool give_back) {
  uint64_t now = src->decommit ? pmr_impl_coarse_ns() : 0;
  pmr_impl_source_lock(src);
  free_set_push(src, pg, true, now);
  pmr_impl_page *seg = pg->segment;
  bool release = seg->seg_free == seg->seg_pages &&
                 src->free_count >= src->retain_pages + seg->seg_pages;
  if (release && (!give_back || !quiet_since_grow(src))) {
    want_shrink(&src->trim_wanted, src);
    release = false;
  }
  if (release) segment_unlink(src, seg);
  pmr_impl_page *purge = purge_due(src, now);
  pmr_impl_source_unlock(src);
  if (release) segment_free(src, seg);
  if (purge != NULL) purge_finish(src, purge);
}

/* The memory of the free pages due goes to the OS (purge_wanted). */
PMR_NOINLINE static void purge_wanted_now(pmr_impl_page_source *src) {
  atomic_store_explicit(&src->purge_wanted, false, memory_order_relaxed);
  uint64_t now = pmr_impl_coarse_ns();
  for (;;) {
    pmr_impl_source_lock(src);
    pmr_impl_page *purge = purge_take(src, now, false, PURGE_BATCH);
    pmr_impl_source_unlock(src);
    if (purge == NULL) break;
    purge_finish(src, purge);
  }
}

/* shrink_wanted's reasons (trim_wanted, cache_wait), once one may be due:
 * quiet, whether no segment was taken for the give-back delay. */
PMR_NOINLINE static void shrink_now(pmr_impl_page_source *src, bool quiet) {
  if (atomic_load(&src->cache_wait) && !caches_tick()) {
    atomic_store(&src->cache_wait, false);
    /* A segment put meanwhile by another thread, whose flag the store
     * above may have cleared. */
    if (caches_tick()) atomic_store(&src->cache_wait, true);
  }
  if (quiet && atomic_load(&src->trim_wanted)) {
    pmr_impl_source_lock(src);
    bool due = quiet_since_grow(src);
    if (due) atomic_store(&src->trim_wanted, false);
    pmr_impl_source_unlock(src);
    if (due) pmr_impl_source_trim(src, src->retain_pages);
  }
  /* Nothing left to wait for: the slow paths stop coming, unless a reason
   * was set meanwhile (its setter stores the flag after it). */
  if (!atomic_load(&src->trim_wanted) && !atomic_load(&src->cache_wait)) {
    atomic_store(&src->shrink_wanted, false);
    if (atomic_load(&src->trim_wanted) || atomic_load(&src->cache_wait))
      atomic_store(&src->shrink_wanted, true);
  }
}

void pmr_impl_source_shrink(pmr_impl_page_source *src) {
  if (atomic_load_explicit(&src->purge_wanted, memory_order_relaxed))
    purge_wanted_now(src);
  if (!atomic_load_explicit(&src->shrink_wanted, memory_order_relaxed)) return;
  bool quiet = quiet_since_grow(src);
  /* Not yet: no lock, nothing written (allocation slow paths of every
   * thread come here while the give-back waits for its delay). */
  if (!quiet && !atomic_load_explicit(&src->cache_wait, memory_order_relaxed))
    return;
  shrink_now(src, quiet);
}

void pmr_impl_source_release(pmr_impl_page_source *src) {
  pmr_impl_page *seg = src->segments;
  while (seg != NULL) {
    pmr_impl_page *next = seg->seg_next;
    segment_free(src, seg);
    seg = next;
  }
  src->segments = NULL;
  src->run_bytes = 0;
  /* Nothing is held now (the resource's oversize blocks went first). */
  atomic_store_explicit(&src->resident, 0, memory_order_relaxed);
  atomic_store_explicit(&src->resident_peak, 0, memory_order_relaxed);
  src->free_pages = src->free_tail = src->clean_from = NULL;
  src->free_count = 0;
  src->empty_segments = 0;
  src->segment_bytes = 0;
  src->next_pages = PMR_IMPL_SEGMENT_PAGES / 4;
}
