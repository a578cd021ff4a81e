/* pmr-c as the process's malloc (pmr_dropin.h).
 *
 * Every C entry point lives in this one object, so that a static link takes
 * them over together (a program must never pair our malloc with libc's
 * free). C++'s operator new and delete are in dropin_cxx.c: a program that
 * does not take them from there gets libstdc++'s, which call these.
 *
 * Where a block's size comes from, without a header on the common ones:
 *   - a pooled block (up to 16 KiB): its page, found from its address
 *     through the page map (pmr_impl_heap_resource_free_fast);
 *   - any other block carries 16 bytes in front of it (pmr_impl_tag,
 * internal/tag_registry.h): what was asked of the engine (or of the OS), its
 * alignment, and a check word derived from its address, so free of a pointer
 * that is not ours is told apart and ignored;
 *   - blocks served while the engine is being set up (the C library
 *     allocates in pthread_atfork) come from a static arena and are never
 *     given back. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memalign, valloc, pvalloc, malloc_usable_size */
#endif
#include "malloc/pmr_dropin.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "malloc/internal/dropin.h"
#include "malloc/internal/guard.h"
#include "malloc/internal/pad.h"
#include "malloc/internal/tag_registry.h"
#include "resources/internal/heap_resource.h"
#include "resources/internal/meta_mem.h"
#include "resources/internal/platform.h"
#include "resources/internal/pool_classes.h"
#include "resources/internal/reservoir.h"
#include "resources/pmr_segment_cache.h"
#include "resources/pmr_synchronized_pool.h"
#include "resources/pmr_thread_cache.h"

#ifdef PMR_DROPIN_RENAME
#include "malloc/internal/dropin_rename.h"
#endif

/* calloc from this size on takes kept large memory, zeroed only where it
 * may be dirty (map_alloc), or maps zeroed memory of its own: no memset of
 * fresh pages, which stay not resident until the program touches them. */
#define CALLOC_MAP_MIN ((size_t)256 << 10)

/* ---- the engine -------------------------------------------------------- */

static size_t page_round(size_t n) {
  return pmr_impl_round_up(n, pmr_impl_os_page_size());
}

static union {
  pmr_thread_cache tc;
  pmr_synchronized_pool pool;
} engine;
static _Atomic(pmr_mem_resource *) engine_r; /* set once ready */
/* The engine's state, at a fixed address: the fast paths read it with no
 * indirection. Its fast path's bound is published apart, after the rest of
 * the state (0 until then, so no fast path reads a state being made); a
 * pointer is in the engine's pages only once the engine made them. */
#define STATE                                           \
  ((pmr_impl_heap_resource *)(void *)((char *)&engine + \
                                      PMR_IMPL_HEAP_RESOURCE_OFFSET))
static atomic_size_t fast_limit;
static atomic_int init_state;      /* 0 none, 1 running, 2 done */
static bool use_pool;              /* PMR_MALLOC=pool */
static bool stats_at_exit;         /* PMR_MALLOC_STATS=1 */
static atomic_size_t mapped_bytes; /* PMR_IMPL_TAG_MAP blocks */
static PMR_IMPL_THREAD_LOCAL bool tl_in_init;

/* ---- blocks served during set-up: a static arena ------------------------ */

#define BOOT_BYTES ((size_t)64 << 10)
static _Alignas(PMR_IMPL_CACHE_LINE) unsigned char boot[BOOT_BYTES];
static atomic_size_t boot_used;

static bool in_boot(const void *p) {
  return (const unsigned char *)p >= boot &&
         (const unsigned char *)p < boot + BOOT_BYTES;
}

/* The block's size sits in the 16 bytes before it. */
static void *boot_alloc(size_t bytes, size_t alignment) {
  if (alignment < PMR_IMPL_TAG_ALIGN) alignment = PMR_IMPL_TAG_ALIGN;
  if (bytes > BOOT_BYTES || alignment > BOOT_BYTES) return NULL;
  if (bytes == 0) bytes = 1;
  size_t used = atomic_load_explicit(&boot_used, memory_order_relaxed);
  for (;;) {
    size_t at = pmr_impl_round_up(used + PMR_IMPL_TAG_ALIGN, alignment);
    size_t end = at + pmr_impl_round_up(bytes, PMR_IMPL_TAG_ALIGN);
    if (end > BOOT_BYTES) return NULL;
    if (atomic_compare_exchange_weak_explicit(&boot_used, &used, end,
                                              memory_order_relaxed,
                                              memory_order_relaxed)) {
      memcpy(boot + at - PMR_IMPL_TAG_ALIGN, &bytes, sizeof bytes);
      return boot + at;
    }
  }
}

static size_t boot_size(const void *p) {
  size_t n;
  memcpy(&n, (const unsigned char *)p - PMR_IMPL_TAG_ALIGN, sizeof n);
  return n;
}

/* ---- tagged blocks (internal/tag_registry.h) ----------------------------- */

static bool engine_pages(const void *p) {
  return atomic_load_explicit(&engine_r, memory_order_acquire) != NULL &&
         pmr_impl_page_map_get(p) == &STATE->heaps.src;
}

/* Gives back a tagged block's `len` bytes (its tag forgotten), its guard
 * cleared: to the reservoir or the OS, or the engine. errno untouched. */
static void release_tagged(unsigned char *start, size_t len, size_t alignment,
                           unsigned origin) {
  pmr_impl_guard_clear(start, len);
  int saved = errno;
  pmr_mem_resource *r = atomic_load_explicit(&engine_r, memory_order_acquire);
  if (origin == PMR_IMPL_TAG_MAP) {
    atomic_fetch_sub_explicit(&mapped_bytes, len, memory_order_relaxed);
    /* Kept for the next large request (of the engine too). */
    if (!pmr_impl_reservoir_put(start, len, len)) pmr_impl_os_unmap(start, len);
  } else if (r != NULL) {
    pmr_impl_heap_resource_deallocate(r, start, len, alignment);
  }
  errno = saved;
}

static void *map_alloc(size_t bytes, size_t alignment, bool zero) {
  size_t front = pmr_impl_tag_front(alignment);
  if (bytes > SIZE_MAX / 2 - front) {
    errno = ENOMEM;
    return NULL;
  }
  size_t len = page_round(pmr_impl_guard_len(front + bytes)), dirty = 0;
  /* The tag's total: the mapping's length, or the request (guard.h). A
   * kept guarded block, else kept large memory (zeroed where it may be
   * dirty: cheaper than faulting fresh pages in), else a new mapping. */
  size_t total = PMR_IMPL_GUARDED ? front + bytes : len;
  unsigned char *m = pmr_impl_guard_take(len, alignment, PMR_IMPL_TAG_MAP);
  bool kept = m != NULL;
  if (kept) {
    if (zero) memset(m + front, 0, bytes);
  } else if ((m = (unsigned char *)pmr_impl_reservoir_take(len, alignment,
                                                           &dirty)) != NULL) {
    if (zero) memset(m, 0, dirty < len ? dirty : len);
  } else if ((m = (unsigned char *)pmr_impl_os_map(len, alignment)) == NULL) {
    return NULL; /* errno ENOMEM */
  }
  if (!kept)
    atomic_fetch_add_explicit(&mapped_bytes, len, memory_order_relaxed);
  void *p = pmr_impl_tag_block(m, total, alignment, PMR_IMPL_TAG_MAP);
  if (!pmr_impl_tag_registry_add(p)) {
    release_tagged(m, len, alignment, PMR_IMPL_TAG_MAP);
    errno = ENOMEM;
    return NULL;
  }
  pmr_impl_guard_set(m, total, !kept);
  return p;
}

/* ---- set-up ------------------------------------------------------------- */

/* The engine, made at the first allocation of the process; NULL while the
 * calling thread is making it (then the static arena serves), or when it
 * could not be made (then blocks are mapped one by one). */
PMR_NOINLINE static pmr_mem_resource *engine_slow(void) {
  if (tl_in_init) return NULL;
  int expected = 0;
  if (atomic_compare_exchange_strong(&init_state, &expected, 1)) {
    int saved = errno;
    tl_in_init = true;
    /* Before anything that takes records: malloc would come back here. */
    pmr_impl_meta_use_os();
    use_pool = pmr_impl_dropin_env_is("PMR_MALLOC", "pool");
    /* A double free or a bad pointer stops the process, as glibc's does,
     * unless the program asks to go on (the bad call then does nothing). */
    pmr_impl_misuse_set_stop(
        !pmr_impl_dropin_env_is("PMR_MALLOC_MISUSE", "report"));
    stats_at_exit = pmr_impl_dropin_env_is("PMR_MALLOC_STATS", "1");
    pmr_impl_dropin_env_reservoir();
    bool ok =
        use_pool ? pmr_synchronized_pool_init(&engine.pool, NULL,
                                              &pmr_impl_dropin_os)
                 : pmr_thread_cache_init(&engine.tc, NULL, &pmr_impl_dropin_os);
#ifdef PMR_SECURE
    /* Before any heap is made: every heap delays its frees' reuse. */
    if (ok) STATE->heaps.delay_reuse = true;
#endif
    if (ok) {
      atomic_store_explicit(&engine_r, &engine.tc.base, memory_order_release);
      atomic_store_explicit(&fast_limit, STATE->small_limit,
                            memory_order_release);
    }
    tl_in_init = false;
    atomic_store_explicit(&init_state, 2, memory_order_release);
    errno = saved;
  }
  while (atomic_load_explicit(&init_state, memory_order_acquire) != 2)
    pmr_impl_os_yield();
  return atomic_load_explicit(&engine_r, memory_order_acquire);
}

static inline pmr_mem_resource *engine_get(void) {
  pmr_mem_resource *r = atomic_load_explicit(&engine_r, memory_order_acquire);
  return PMR_LIKELY(r != NULL) ? r : engine_slow();
}

_Static_assert(offsetof(pmr_thread_cache, base) == 0 &&
                   offsetof(pmr_synchronized_pool, base) == 0,
               "both types' resource lies at the union's start");

/* ---- allocation --------------------------------------------------------- */

static bool pooled(size_t bytes, size_t alignment) {
  /* First the bound: rounding a size near SIZE_MAX up would wrap. */
  return bytes <= PMR_POOL_PAGE_LARGEST_BLOCK &&
         pmr_impl_pool_class_for(pmr_impl_pool_block_size(bytes, alignment),
                                 alignment, PMR_POOL_PAGE_LARGEST_BLOCK) >= 0;
}

/* Any size, any power-of-two alignment (at least 8). errno ENOMEM on
 * failure, untouched on success. */
PMR_NOINLINE static void *alloc_slow(size_t bytes, size_t alignment) {
  pmr_mem_resource *r = engine_get();
  if (r == NULL) {
    if (tl_in_init) {
      void *p = boot_alloc(bytes, alignment);
      if (p != NULL) return p;
    }
    return map_alloc(bytes, alignment, false);
  }
  if (pooled(pmr_impl_pad_size(bytes), alignment)) {
    void *p =
        pmr_impl_heap_resource_allocate(r, pmr_impl_pad_size(bytes), alignment);
    if (p == NULL) errno = ENOMEM;
    return pmr_impl_pad_block(&STATE->heaps.src, p, bytes);
  }
  if (alignment < PMR_IMPL_TAG_ALIGN) alignment = PMR_IMPL_TAG_ALIGN;
  if (bytes == 0) bytes = 1; /* a usable byte: its usable size says "ours" */
  size_t front = pmr_impl_tag_front(alignment);
  if (bytes > SIZE_MAX / 2 - front || alignment > SIZE_MAX / 4) {
    errno = ENOMEM;
    return NULL;
  }
  size_t total = front + bytes, len = pmr_impl_guard_len(total);
  unsigned char *m = pmr_impl_guard_take(len, alignment, PMR_IMPL_TAG_ENGINE);
  bool kept = m != NULL;
  if (!kept)
    m = (unsigned char *)pmr_impl_heap_resource_allocate(r, len, alignment);
  if (m == NULL) {
    errno = ENOMEM;
    return NULL;
  }
  void *p = pmr_impl_tag_block(m, total, alignment, PMR_IMPL_TAG_ENGINE);
  if (!engine_pages(p) && !pmr_impl_tag_registry_add(p)) {
    release_tagged(m, len, alignment, PMR_IMPL_TAG_ENGINE);
    errno = ENOMEM;
    return NULL;
  }
  pmr_impl_guard_set(m, total, !kept);
  return p;
}

/* Every block is 16-aligned and at least 16 bytes, as glibc's. */
void *malloc(size_t bytes) {
  size_t key = pmr_impl_heap_key(pmr_impl_pad_size(bytes), PMR_IMPL_TAG_ALIGN);
  void *p = pmr_impl_heap_resource_alloc_fast(
      STATE, key, atomic_load_explicit(&fast_limit, memory_order_acquire));
  if (PMR_LIKELY(p != NULL))
    return pmr_impl_pad_block(&STATE->heaps.src, p, bytes);
  return alloc_slow(bytes, PMR_IMPL_TAG_ALIGN);
}

/* ---- deallocation ------------------------------------------------------- */

/* A free (or realloc) of p that is misuse: reported; the process stops
 * unless PMR_MALLOC_MISUSE=report (then the call does nothing). */
PMR_NOINLINE static void bad_free(const char *call, void *p, const char *what) {
  bool stop = pmr_impl_misuse_stops();
  pmr_report_misuse("%s(%p): %s; %s", call, p, what,
                    stop ? "stopping" : "ignored");
  if (stop) abort();
}

/* Frees p (not NULL), not a pooled block (pmr_impl_heap_resource_free_fast
 * took those): an oversize or mapped block, a block of the set-up arena, a
 * pointer that is not ours, or misuse; debug builds: every block. */
PMR_NOINLINE static void free_slow(void *p) {
  pmr_mem_resource *r = atomic_load_explicit(&engine_r, memory_order_acquire);
  bool in_pages = r != NULL && pmr_impl_page_map_get(p) == &STATE->heaps.src;
  if (in_pages && pmr_impl_heap_resource_free_unsized(r, p) != 0) return;
  if (in_boot(p)) return;
  if (!in_pages) { /* its tag is read only if the registry says it is live */
    int st = pmr_impl_tag_registry_state(p, true);
    if (st == PMR_IMPL_TAGREG_FREED)
      bad_free("free", p, "a double free of a large block");
    if (st != PMR_IMPL_TAGREG_LIVE) { /* not ours */
      const char *what = pmr_impl_dropin_never_a_block(p);
      if (what != NULL) bad_free("free", p, what);
      return; /* else left alone */
    }
  }
  pmr_impl_tag t;
  size_t alignment;
  unsigned origin;
  if (!pmr_impl_tag_of(p, &t, &alignment, &origin)) {
    if (pmr_impl_tag_freed(p))
      bad_free("free", p, "a double free of a large block");
    else
      bad_free("free", p, "not the start of a block in use");
    return;
  }
  unsigned char *start = (unsigned char *)p - pmr_impl_tag_front(alignment);
  const char *bad = pmr_impl_guard_broken(start, t.total);
  if (bad != NULL) {
    if (!in_pages) pmr_impl_tag_registry_add(p); /* still live */
    bad_free("free", p, bad);
    return;
  }
  pmr_impl_tag_forget(p);
  pmr_impl_guard_kept k = {start,
                           origin == PMR_IMPL_TAG_MAP
                               ? page_round(pmr_impl_guard_len(t.total))
                               : pmr_impl_guard_len(t.total),
                           alignment, origin};
  if (!pmr_impl_guard_keep(&k)) release_tagged(start, k.len, alignment, origin);
}

void free(void *p) {
  const char *bad = pmr_impl_pad_broken(&STATE->heaps.src, p);
  if (PMR_UNLIKELY(bad != NULL)) {
    bad_free("free", p, bad);
    return;
  }
  if (PMR_LIKELY(pmr_impl_heap_resource_free_fast(STATE, p))) return;
  if (p != NULL) free_slow(p);
}

/* The usable size of p (not NULL), or 0 when p is not ours. */
static size_t usable_of(const void *p) {
  size_t n = pmr_impl_source_usable_size(&STATE->heaps.src, p);
  if (n != 0) return n;
  if (in_boot(p)) return boot_size(p);
  if (!engine_pages(p) &&
      pmr_impl_tag_registry_state(p, false) != PMR_IMPL_TAGREG_LIVE)
    return 0;
  pmr_impl_tag t;
  size_t alignment;
  unsigned origin;
  if (!pmr_impl_tag_of(p, &t, &alignment, &origin)) return 0;
  return t.total - pmr_impl_tag_front(alignment);
}

/* Secure builds: a pooled block's request (pad.h). */
size_t malloc_usable_size(void *p) {
  if (p == NULL) return 0;
  size_t n = usable_of(p);
  return pmr_impl_source_usable_size(&STATE->heaps.src, p) != 0
             ? pmr_impl_pad_usable(p, n)
             : n;
}

bool pmr_dropin_owns(const void *p) { return p != NULL && usable_of(p) != 0; }

/* ---- the rest of the family --------------------------------------------- */

void *calloc(size_t count, size_t size) {
  size_t bytes;
  if (PMR_UNLIKELY(__builtin_mul_overflow(count, size, &bytes))) {
    errno = ENOMEM;
    return NULL;
  }
  if (bytes >= CALLOC_MAP_MIN && engine_get() != NULL)
    return map_alloc(bytes, PMR_IMPL_TAG_ALIGN, true);
  void *p = malloc(bytes);
  if (p != NULL && !in_boot(p)) memset(p, 0, bytes);
  return p;
}

void *realloc(void *p, size_t bytes) {
  if (p == NULL) return malloc(bytes);
  if (bytes == 0) { /* glibc: frees, returns NULL */
    free(p);
    return NULL;
  }
  pmr_mem_resource *r = atomic_load_explicit(&engine_r, memory_order_acquire);
  /* Pooled first: a pooled block has no tag, and the bytes in front of one
   * at the start of a segment are not mapped. */
  size_t old = pmr_impl_source_usable_size(&STATE->heaps.src, p);
  pmr_impl_tag t;
  size_t alignment;
  unsigned origin;
  /* A tag outside the engine's pages is read only for a live block. */
  int st = old != 0 || in_boot(p) || engine_pages(p)
               ? PMR_IMPL_TAGREG_LIVE
               : pmr_impl_tag_registry_state(p, false);
  if (st == PMR_IMPL_TAGREG_FREED) {
    bad_free("realloc", p, "a large block freed already");
    errno = ENOMEM;
    return NULL;
  }
  if (old != 0) {
    /* Its class holds it; a block free already, or a pointer that starts
     * none, goes the long way, whose free reports it; so does another
     * thread's block (only the owner can tell one never handed out). */
    const char *bad = pmr_impl_pad_broken(&STATE->heaps.src, p);
    if (PMR_UNLIKELY(bad != NULL)) {
      bad_free("realloc", p, bad);
      errno = ENOMEM;
      return NULL;
    }
    size_t block = old;
    old = pmr_impl_pad_usable(p, block);
    pmr_impl_page *pg = pmr_impl_page_of(&STATE->heaps.src, p);
    if (pmr_impl_pad_size(bytes) <= block && bytes >= block / 2 &&
        !pmr_impl_block_suspect(pg, p) && pmr_impl_thread_heap_mine(pg) &&
        !pmr_impl_block_uncarved(pg, p))
      return pmr_impl_pad_block(&STATE->heaps.src, p, bytes);
  } else if (in_boot(p)) {
    old = boot_size(p);
  } else if (st == PMR_IMPL_TAGREG_LIVE &&
             pmr_impl_tag_of(p, &t, &alignment, &origin)) {
    size_t front = pmr_impl_tag_front(alignment);
    old = t.total - front;
    const char *bad =
        pmr_impl_guard_broken((unsigned char *)p - front, t.total);
    if (bad != NULL) {
      bad_free("realloc", p, bad);
      errno = ENOMEM;
      return NULL;
    }
    if (PMR_IMPL_GUARDED) {
      /* Moved: the guard stays right after the block's pages. */
    } else if (origin == PMR_IMPL_TAG_ENGINE && !pooled(bytes, alignment)) {
      /* In place where the engine has room: a mapping grows into the
       * address space reserved behind it. */
      unsigned char *start = (unsigned char *)p - front;
      if (bytes <= SIZE_MAX / 2 - front &&
          r->ops->try_resize(r, start, t.total, front + bytes, alignment)) {
        t.total = front + bytes;
        memcpy((unsigned char *)p - sizeof t, &t, sizeof t);
        return p;
      }
    } else if (origin == PMR_IMPL_TAG_MAP && bytes <= old && bytes >= old / 2) {
      return p;
    }
  } else { /* not ours: refused, never written */
    const char *what = pmr_impl_dropin_never_a_block(p);
    if (engine_pages(p))
      bad_free("realloc", p,
               pmr_impl_tag_freed(p) ? "a large block freed already"
                                     : "not the start of a block in use");
    else if (what != NULL)
      bad_free("realloc", p, what);
    errno = ENOMEM;
    return NULL;
  }
  void *q = malloc(bytes);
  if (q == NULL) return NULL; /* p untouched */
  memcpy(q, p, bytes < old ? bytes : old);
  free(p);
  return q;
}

void *reallocarray(void *p, size_t count, size_t size) {
  size_t bytes;
  if (__builtin_mul_overflow(count, size, &bytes)) {
    errno = ENOMEM;
    return NULL;
  }
  return realloc(p, bytes);
}

static bool power_of_two(size_t a) { return a != 0 && (a & (a - 1)) == 0; }

void *pmr_impl_dropin_aligned(size_t alignment, size_t bytes) {
  if (alignment <= PMR_IMPL_TAG_ALIGN) return malloc(bytes);
  if (alignment > SIZE_MAX / 4) {
    errno = ENOMEM;
    return NULL;
  }
  return alloc_slow(bytes, alignment);
}

int posix_memalign(void **out, size_t alignment, size_t bytes) {
  if (!power_of_two(alignment) || alignment % sizeof(void *) != 0)
    return EINVAL;
  int saved = errno;
  void *p = pmr_impl_dropin_aligned(alignment, bytes);
  errno = saved;
  if (p == NULL) return ENOMEM;
  *out = p;
  return 0;
}

void *aligned_alloc(size_t alignment, size_t bytes) {
  if (!power_of_two(alignment)) {
    errno = EINVAL;
    return NULL;
  }
  return pmr_impl_dropin_aligned(alignment, bytes);
}

/* glibc's: an alignment that is not a power of two is rounded up to one. */
void *memalign(size_t alignment, size_t bytes) {
  if (alignment > SIZE_MAX / 2 + 1) {
    errno = EINVAL;
    return NULL;
  }
  size_t a = 1;
  while (a < alignment) a <<= 1;
  return pmr_impl_dropin_aligned(a, bytes);
}

void *valloc(size_t bytes) {
  return pmr_impl_dropin_aligned(pmr_impl_os_page_size(), bytes);
}

void *pvalloc(size_t bytes) {
  size_t ps = pmr_impl_os_page_size();
  if (bytes > SIZE_MAX - ps) {
    errno = ENOMEM;
    return NULL;
  }
  return pmr_impl_dropin_aligned(
      ps, bytes == 0 ? ps : pmr_impl_round_up(bytes, ps));
}

/* Gives free pages and kept blocks back to the OS, as glibc's gives back
 * the top of its heap; 1 when any memory went back. */
int malloc_trim(size_t pad) {
  (void)pad;
  pmr_mem_resource *r = engine_get();
  if (r == NULL) return 0;
  size_t n = 0;
  for (pmr_impl_guard_kept k; pmr_impl_guard_evict(&k); n += k.len)
    release_tagged(k.start, k.len, k.alignment, k.origin);
  n += use_pool ? pmr_synchronized_pool_trim(&engine.pool)
                : pmr_thread_cache_trim(&engine.tc);
  n += pmr_impl_dropin_os_trim();
  n += pmr_large_reservoir_trim();
  return n != 0;
}

/* ---- statistics --------------------------------------------------------- */

pmr_mem_resource *pmr_dropin_resource(void) { return engine_get(); }

pmr_dropin_stats pmr_dropin_get_stats(void) {
  pmr_dropin_stats st;
  memset(&st, 0, sizeof st);
  pmr_mem_resource *r = engine_get();
  st.engine = use_pool ? "pool" : "thread_cache";
  if (r != NULL && use_pool) {
    pmr_pool_stats p = pmr_synchronized_pool_get_stats(&engine.pool);
    st.held_bytes = p.held_bytes;
    st.free_page_bytes = p.free_page_bytes;
    st.free_oversize_bytes = p.free_oversize_bytes;
  } else if (r != NULL) {
    pmr_thread_cache_stats t = pmr_thread_cache_get_stats(&engine.tc);
    st.threads = t.threads;
    st.held_bytes = t.held_bytes;
    st.free_page_bytes = t.free_page_bytes;
    st.free_oversize_bytes = t.free_oversize_bytes;
  }
  size_t kept = pmr_impl_dropin_os_kept(); /* its upstream's */
  st.held_bytes += kept;
  st.free_oversize_bytes += kept;
  st.mapped_bytes = atomic_load_explicit(&mapped_bytes, memory_order_relaxed);
  st.record_bytes = pmr_impl_meta_mapped_bytes();
  pmr_large_reservoir_stats res = pmr_large_reservoir_get_stats();
  st.held_bytes += res.resident_bytes;
  st.free_oversize_bytes += res.resident_bytes;
  st.reservoir_bytes = res.kept_bytes;
  st.reservoir_resident_bytes = res.resident_bytes;
  st.reservoir_hits = res.hits;
  st.reservoir_grown = res.grown;
  st.reservoir_misses = res.misses;
  st.reservoir_purged_bytes = res.purged_bytes;
  st.peak_rss_bytes = pmr_impl_os_peak_rss();
  return st;
}

/* At exit (or unload): the statistics when asked for. The engine is never
 * destroyed: other destructors may still free. */
__attribute__((destructor)) static void at_exit(void) {
  if (stats_at_exit) pmr_dropin_print_stats(2);
}
