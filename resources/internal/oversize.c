/* Oversize blocks shared by the pool resources (oversize.h). */
#include "resources/internal/oversize.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "resources/internal/page_heap.h"
#include "resources/internal/platform.h"
#include "resources/internal/reservoir.h"
#include "resources/internal/segment_cache.h"
#include "resources/internal/spin_lock.h"
#include "resources/pmr_segment_cache.h"

/* ---- oversize blocks ------------------------------------------------------
 */

#define OVERSIZE_TRAILER sizeof(pmr_impl_oversize_block)

/* Where the trailer of a block in use for `bytes` lies: right after them,
 * at the basic alignment. A kept block has its trailer at its end, and may
 * serve a request smaller than itself: its trailer then moves. */
static size_t oversize_offset(size_t bytes) {
  return pmr_impl_pool_block_size(bytes, PMR_MAX_ALIGN);
}

/* The bin of a block of `size` bytes, or -1 when it is never kept. */
static int oversize_bin(size_t size, size_t alignment) {
  if (alignment > PMR_MAX_ALIGN || size >= PMR_IMPL_OVERSIZE_KEEP_MAX ||
      size < ((size_t)1 << PMR_IMPL_OVERSIZE_BIN_SHIFT))
    return -1;
  return 63 - __builtin_clzll((unsigned long long)size) -
         PMR_IMPL_OVERSIZE_BIN_SHIFT;
}

/* A kept block's trailer, at the end of the block that starts at start. */
static pmr_impl_oversize_block *kept_trailer(char *start, size_t size) {
  return (pmr_impl_oversize_block *)(void *)(start + size - OVERSIZE_TRAILER);
}

static void lock_list(void *lock) {
  if (lock != NULL) pmr_impl_spin_lock((pmr_impl_spin *)lock);
}
static void unlock_list(void *lock) {
  if (lock != NULL) pmr_impl_spin_unlock((pmr_impl_spin *)lock);
}

/* The check word of a block in use whose trailer is at b: its address
 * under the per-process secret of page_heap.h. */
static uintptr_t oversize_check(const pmr_impl_oversize_block *b) {
  return ((uintptr_t)b * (uintptr_t)0x9e3779b97f4a7c15u) ^
         pmr_impl_free_mark_value;
}

static void link_live(pmr_impl_oversize_list *list,
                      pmr_impl_oversize_block *b) {
  b->check = oversize_check(b);
  pmr_impl_oversize_block *s = &list->live;
  s->size += b->size;
  b->prev = s;
  b->next = s->next;
  s->next->prev = b;
  s->next = b;
}

/* The smallest kept block of at least `size` bytes in bin `bin` (whose
 * blocks are less than twice `size`), unlinked, or NULL. */
static pmr_impl_oversize_block *take_kept(pmr_impl_oversize_list *list,
                                          size_t size, int bin) {
  pmr_impl_oversize_block **best = NULL;
  for (pmr_impl_oversize_block **at = &list->bins[bin]; *at != NULL;
       at = &(*at)->next) {
    size_t s = (*at)->size;
    if (s >= size && (best == NULL || s < (*best)->size)) {
      best = at;
      if (s == size) break;
    }
  }
  if (best == NULL) return NULL;
  pmr_impl_oversize_block *b = *best;
  *best = b->next;
  list->kept -= b->size;
  return b;
}

/* Unlinks kept blocks, largest bins first, until at most `bound` bytes stay
 * kept; returns them linked by next, for the caller to give back. */
static pmr_impl_oversize_block *evict(pmr_impl_oversize_list *list,
                                      size_t bound) {
  pmr_impl_oversize_block *out = NULL;
  for (int i = PMR_IMPL_OVERSIZE_BINS; list->kept > bound && i-- > 0;) {
    while (list->kept > bound && list->bins[i] != NULL) {
      pmr_impl_oversize_block *b = list->bins[i];
      list->bins[i] = b->next;
      list->kept -= b->size;
      b->next = out;
      out = b;
    }
  }
  return out;
}

/* Whether a block of `size` bytes (its trailer included) is mapped. */
static bool oversize_mapped(const pmr_mem_resource *upstream, size_t size) {
  return size >= PMR_IMPL_OS_LARGE_MIN && pmr_impl_os_direct(upstream);
}

/* Mapped blocks that are the segments of a pool over this one (aligned to
 * a page or a frame, up to twice a segment's size with the trailer) are
 * mapped aligned as segments, and go to the segment cache (for the next
 * pool that needs one) rather than back to the OS. Other large blocks (an
 * interpreter's growing arrays) are not: a cached one would rarely fit the
 * next request, and would stay resident meanwhile (benchmark R: +3.6 MiB
 * at the peak). */
static bool oversize_cached(size_t size, size_t align) {
  return size <= 2 * PMR_IMPL_SEGMENT_CACHE_MAX &&
         align >= PMR_IMPL_PAGE_SIZE && align <= PMR_IMPL_SEGMENT_CACHE_MAX;
}

/* Whether list's page source counts a block of `size` bytes as resident
 * memory: a mapping, made here or by the pool upstream. */
static bool oversize_counted(const pmr_impl_oversize_list *list, size_t size) {
  return list->src != NULL && list->src->decommit &&
         size >= PMR_IMPL_OS_LARGE_MIN;
}

static void oversize_free_memory(pmr_impl_oversize_list *list,
                                 pmr_mem_resource *upstream,
                                 const pmr_impl_oversize_block *b) {
  if (oversize_counted(list, b->size))
    pmr_impl_source_resident_sub(list->src, b->size);
  if (oversize_mapped(upstream, b->size)) {
    size_t ps = pmr_impl_os_page_size();
    size_t len = pmr_impl_round_up(b->cap, ps);
    if (oversize_cached(len, b->alignment)) {
      if (!pmr_impl_segment_cache_put(b->start, len))
        pmr_impl_os_unmap(b->start, len);
    } else if (pmr_impl_reservoir_put(b->start, len,
                                      pmr_impl_round_up(b->size, ps))) {
      /* Kept: the slow paths of the pool come back until it went. */
      if (list->src != NULL) pmr_impl_source_wait_cache(list->src);
    } else {
      pmr_impl_os_unmap(b->start, len);
    }
  } else
    pmr_deallocate(upstream, b->start, b->size, b->alignment);
}

static size_t give_back(pmr_impl_oversize_list *list,
                        pmr_mem_resource *upstream,
                        pmr_impl_oversize_block *b) {
  size_t given = 0;
  while (b != NULL) {
    pmr_impl_oversize_block *next = b->next;
    given += b->size;
    oversize_free_memory(list, upstream, b);
    b = next;
  }
  return given;
}

/* What the page source calls before it grows (pmr_impl_oversize_attach). */
static void oversize_before_grow(void *arg) {
  pmr_impl_oversize_list *list = (pmr_impl_oversize_list *)arg;
  pmr_impl_oversize_trim(list, list->lock, list->src->upstream);
}

void pmr_impl_oversize_attach(pmr_impl_oversize_list *list, void *lock,
                              struct pmr_impl_page_source *src) {
  list->src = src;
  list->lock = lock;
  pmr_impl_source_before_grow(src, oversize_before_grow, list);
}

void pmr_impl_oversize_init(pmr_impl_oversize_list *list,
                            const pmr_mem_resource *upstream, size_t retain) {
  pmr_impl_free_mark_init(); /* oversize_check's secret */
  memset(list, 0, sizeof *list);
  list->live.prev = list->live.next = &list->live;
  list->retain =
      (pmr_resource_traits(upstream) & PMR_TRAIT_KEEPS_FREED) != 0 ? 0 : retain;
}

/* Room to grow in place that a mapped block gets: address space for
 * OVERSIZE_ROOM times its length, at most OVERSIZE_ROOM_MAX more (untouched, it
 * costs no memory). Not on 32-bit targets, whose address space is scarce, nor
 * for lengths whose room would not fit a size_t (the OS refuses those). */
#define OVERSIZE_ROOM 4u
#define OVERSIZE_ROOM_MAX ((size_t)1 << 30)

/* A new block of *size bytes (*size grows to a cached block's); *cap: the
 * bytes it spans (more than *size with room to grow). */
static char *oversize_new(pmr_mem_resource *upstream, size_t *size, size_t *cap,
                          size_t align) {
  *cap = *size;
  if (!oversize_mapped(upstream, *size))
    return (char *)pmr_allocate(upstream, *size, align);
  size_t len = pmr_impl_round_up(*size, pmr_impl_os_page_size()), got = 0;
  bool warm = false; /* a block in use: the user's memory */
  char *p = NULL;
  if (len < *size) { /* rounding wrapped: no OS maps that much */
    errno = ENOMEM;
    return NULL;
  }
  if (!oversize_cached(len, align)) {
    /* Freed large memory first, carved to the length: no new mapping, no
     * page fault where it is still resident. */
    p = (char *)pmr_impl_reservoir_take(len, align, NULL);
    if (p != NULL) {
      *cap = len;
      return p;
    }
    if (sizeof(void *) >= 8 && len != 0 && len <= SIZE_MAX / OVERSIZE_ROOM) {
      size_t room = (OVERSIZE_ROOM - 1) * len < OVERSIZE_ROOM_MAX
                        ? (OVERSIZE_ROOM - 1) * len
                        : OVERSIZE_ROOM_MAX;
      int saved = errno;
      p = (char *)pmr_impl_os_reserve(len + room, align);
      if (p != NULL) {
        *cap = len + room;
        /* Kept resident pages moved under it first; then kept memory gives
         * back what the rest will take, so the reservoir never raises the
         * process's resident memory. */
        size_t filled = pmr_impl_reservoir_fill(p, len);
        pmr_impl_reservoir_make_room(len - filled);
        pmr_impl_segment_cache_make_room(len - filled);
        return p;
      }
      errno = saved; /* no room: the block alone */
    }
    pmr_impl_reservoir_make_room(len);
    pmr_impl_segment_cache_make_room(len);
    return (char *)pmr_impl_os_map(*size, align);
  }
  p = (char *)pmr_impl_segment_cache_take(len, len + len / 4,
                                          pmr_impl_os_page_size(), &got, &warm);
  if (p != NULL) {
    *size = *cap = got; /* at most a quarter more than asked */
    return p;
  }
  return (char *)pmr_impl_os_map(*size, PMR_IMPL_SEGMENT_CACHE_MAX);
}

size_t pmr_impl_oversize_give_back(pmr_impl_oversize_list *list, void *lock,
                                   pmr_mem_resource *upstream,
                                   struct pmr_impl_page_source *pages) {
  size_t given = pmr_impl_oversize_trim(list, lock, upstream);
  given += pmr_large_reservoir_trim();
  if (pages != NULL) {
    size_t before = pmr_impl_source_released(pages);
    pmr_impl_source_trim(pages, 0);
    given += pmr_impl_source_released(pages) - before;
  }
  return given;
}

void *pmr_impl_oversize_alloc(pmr_impl_oversize_list *list, void *lock,
                              pmr_mem_resource *upstream,
                              struct pmr_impl_page_source *pages, size_t bytes,
                              size_t alignment) {
  if (bytes > SIZE_MAX - PMR_MAX_ALIGN - OVERSIZE_TRAILER - alignment) {
    errno = ENOMEM;
    return NULL;
  }
  size_t off = oversize_offset(bytes);
  size_t size = off + OVERSIZE_TRAILER;
  if (pages != NULL && size >= PMR_IMPL_OS_LARGE_MIN) {
    /* A block that would be mapped: free pages first, if they can. */
    void *run = pmr_impl_source_take_run(pages, bytes, alignment);
    if (run != NULL) return run;
  }
  size_t align = alignment > PMR_MAX_ALIGN ? alignment : PMR_MAX_ALIGN;
  size_t cap = size;
  int bin = oversize_bin(size, align);
  pmr_impl_oversize_block *k = NULL, *b;
  if (bin >= 0) {
    lock_list(lock);
    k = take_kept(list, size, bin);
    unlock_list(lock);
  }
  char *p;
  if (k != NULL) {
    p = k->start;
    size = k->size;
    cap = k->cap;
  } else {
    /* New memory for the process (mapped here, or by a pool upstream that
     * maps blocks this large unless it kept one): free pages make room
     * first. */
    if (pages != NULL && size >= PMR_IMPL_OS_LARGE_MIN)
      pmr_impl_source_make_room(pages, size);
    int saved = errno;
    p = oversize_new(upstream, &size, &cap, align);
    /* Refused: the pool's free segments and kept blocks go back, and the
     * request is tried once more, so a capped upstream serves it as it
     * would under malloc. */
    if (p == NULL &&
        pmr_impl_oversize_give_back(list, lock, upstream, pages) != 0)
      p = oversize_new(upstream, &size, &cap, align);
    if (p == NULL) return NULL;
    errno = saved;
    if (oversize_counted(list, size))
      pmr_impl_source_resident_add(list->src, size);
  }
  b = (pmr_impl_oversize_block *)(void *)(p + off);
  b->size = size;
  b->cap = cap;
  b->alignment = align;
  b->start = p;
  lock_list(lock);
  link_live(list, b);
  unlock_list(lock);
  return p;
}

/* A deallocation of p that frees no oversize block in use (page_heap.h,
 * "misuse"): reported, and ignored unless the process stops. */
static void oversize_misuse(const void *p, size_t bytes, const char *what) {
  bool stop = pmr_impl_misuse_stops();
  pmr_report_misuse("deallocation of %p (%zu bytes): %s; %s", p, bytes, what,
                    stop ? "stopping" : "ignored");
  if (stop) abort();
}

void pmr_impl_oversize_free(pmr_impl_oversize_list *list, void *lock,
                            pmr_mem_resource *upstream, void *p, size_t bytes,
                            size_t alignment) {
  (void)alignment; /* the trailer knows what upstream got */
  if (list->src != NULL) {
    if (pmr_impl_source_is_run(list->src, p)) {
      if (((uintptr_t)p & (PMR_IMPL_PAGE_SIZE - 1)) != 0) {
        oversize_misuse(p, bytes, "not the start of an oversize block");
        return;
      }
      /* A shared source's dealloc returns no segment: no upstream call. */
      pmr_impl_source_give_run(list->src, p, !list->src->shared);
      return;
    }
    /* In the pool's own pages yet no run starts there: a run freed
     * already, or a pointer into one or into a class's page. */
    if (pmr_impl_page_map_get(p) == list->src) {
      oversize_misuse(p, bytes,
                      "no oversize block in use starts there (freed "
                      "already?)");
      return;
    }
  }
  pmr_impl_oversize_block *b =
      (pmr_impl_oversize_block *)(void *)((char *)p + oversize_offset(bytes));
  if (b->check != oversize_check(b)) {
    oversize_misuse(
        p, bytes,
        "its trailer was overwritten (an overflow past its end), or "
        "the size is not the block's, or it was freed already");
    return;
  }
  int bin = oversize_bin(b->size, b->alignment);
  pmr_impl_oversize_block *out = b;
  lock_list(lock);
  /* A block in use is linked both ways; one freed already (its trailer
   * moved when it was kept, or its neighbours moved on) is not. */
  if (b->prev->next != b || b->next->prev != b) {
    unlock_list(lock);
    oversize_misuse(p, bytes, "not an oversize block in use (freed already?)");
    return;
  }
  list->live.size -= b->size;
  b->prev->next = b->next;
  b->next->prev = b->prev;
  b->check = 0; /* freed: a second free finds no check */
  if (bin >= 0 && b->size <= list->retain) { /* kept */
    /* The trailer moves to the end (the two may overlap). */
    pmr_impl_oversize_block t = *b;
    b = kept_trailer(t.start, t.size);
    b->size = t.size;
    b->cap = t.cap;
    b->alignment = t.alignment;
    b->start = t.start;
    b->next = list->bins[bin];
    list->bins[bin] = b;
    list->kept += b->size;
    out = NULL;
    if (list->kept > list->retain) out = evict(list, list->retain);
  } else {
    b->next = NULL;
  }
  unlock_list(lock);
  give_back(list, upstream, out);
}

/* Whether b is a mapping of its own that the reservoir may extend or
 * shrink (not a segment-cache block, whose length the cache knows). */
static bool oversize_own_mapping(const struct pmr_impl_page_source *pages,
                                 const pmr_impl_oversize_block *b) {
  size_t ps = pmr_impl_os_page_size();
  return pages != NULL && oversize_mapped(pages->upstream, b->size) &&
         b->cap % ps == 0 && (uintptr_t)b->start % ps == 0 &&
         !oversize_cached(b->cap, b->alignment);
}

bool pmr_impl_oversize_try_resize(pmr_impl_oversize_list *list, void *lock,
                                  struct pmr_impl_page_source *pages, void *p,
                                  size_t old_bytes, size_t new_bytes) {
  if (new_bytes > SIZE_MAX - PMR_MAX_ALIGN - OVERSIZE_TRAILER) return false;
  if (pages != NULL && pmr_impl_source_is_run(pages, p))
    return pmr_impl_source_run_resize(pages, p, new_bytes);
  /* The caller owns the block: its size, cap and start are not written
   * meanwhile (its links are, by neighbours, under lock). */
  pmr_impl_oversize_block *b =
      (pmr_impl_oversize_block *)(void *)((char *)p +
                                          oversize_offset(old_bytes));
  if (b->check != oversize_check(b)) return false; /* its free reports it */
  size_t off = oversize_offset(new_bytes), used = off + OVERSIZE_TRAILER;
  bool own = oversize_own_mapping(pages, b);
  /* Much smaller: a block of upstream's goes, to let the memory go; a
   * mapping of its own stays and gives the OS the pages past its end. */
  if (new_bytes < old_bytes / 2 && !own) return false;
  if (used > b->cap) {
    /* A mapping grows into the kept range right after it, if any. */
    size_t ps = pmr_impl_os_page_size();
    size_t need = pmr_impl_round_up(used - b->cap, ps);
    if (!own || need < used - b->cap ||
        !pmr_impl_reservoir_extend(b->start + b->cap, need))
      return false;
    b->cap += need;
  }
  if (used > b->size && pages != NULL)
    pmr_impl_source_make_room(pages, used - b->size);
  lock_list(lock);
  pmr_impl_oversize_block t = *b; /* the two places may overlap */
  b = (pmr_impl_oversize_block *)(void *)((char *)p + off);
  *b = t;
  b->check = oversize_check(b);
  if (used > t.size) {
    if (oversize_counted(list, used))
      pmr_impl_source_resident_add(list->src, used - t.size);
    list->live.size += used - t.size;
    b->size = used;
  }
  b->prev->next = b;
  b->next->prev = b;
  size_t ps = pmr_impl_os_page_size();
  /* At least the mapping threshold: the block stays one the free unmaps. */
  size_t keep = pmr_impl_round_up(
      used > PMR_IMPL_OS_LARGE_MIN ? used : PMR_IMPL_OS_LARGE_MIN, ps);
  size_t had = pmr_impl_round_up(t.size, ps);
  bool shrink = own && had > keep && had - keep >= PMR_IMPL_OS_LARGE_MIN / 2;
  if (shrink) { /* the pages past the new end go back to the OS (below) */
    if (oversize_counted(list, t.size))
      pmr_impl_source_resident_sub(list->src, t.size - keep);
    list->live.size -= t.size - keep;
    b->size = keep;
  }
  unlock_list(lock);
  if (shrink) pmr_impl_os_decommit((char *)p + keep, had - keep);
  return true;
}

size_t pmr_impl_oversize_trim(pmr_impl_oversize_list *list, void *lock,
                              pmr_mem_resource *upstream) {
  lock_list(lock);
  pmr_impl_oversize_block *out = evict(list, 0);
  unlock_list(lock);
  return give_back(list, upstream, out);
}

void pmr_impl_oversize_release(pmr_impl_oversize_list *list,
                               pmr_mem_resource *upstream) {
  pmr_impl_oversize_block *b = list->live.next;
  while (b != &list->live) {
    pmr_impl_oversize_block *next = b->next;
    oversize_free_memory(list, upstream, b);
    b = next;
  }
  give_back(list, upstream, evict(list, 0));
  list->live.prev = list->live.next = &list->live;
  list->live.size = 0;
}
