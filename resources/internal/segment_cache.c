/* The process-wide cache of free segments (see pmr_segment_cache.h). */
/* POSIX 2008 (clock_gettime, platform.h) for builds that ask for strict ISO C
 * (-std=c11) and define nothing. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "resources/internal/segment_cache.h"

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "resources/internal/fork_guard.h"
#include "resources/internal/mem_check.h"
#include "resources/internal/page_geometry.h"
#include "resources/internal/platform.h"
#include "resources/internal/spin_lock.h"
#include "resources/pmr_segment_cache.h"

/* Entries at most: 64 MiB of the smallest segments (4 pages). */
#define MAX_ENTRIES 256
/* Segments given back to the OS in one call of a put or take (each a
 * system call under the lock). */
#define PURGE_BATCH 4

typedef struct entry {
  char *p;
  size_t bytes;
  uint64_t since; /* when it was cached (pmr_impl_coarse_ns) */
  bool resident;  /* its memory was not given back yet */
} entry;

static pmr_impl_spin lock;
/* Oldest first; the lock guards everything below. */
static entry entries[MAX_ENTRIES];
static size_t count, cached, resident;
/* resident, readable without the lock (a hint: no lock when 0). */
static atomic_size_t resident_hint;
/* When the oldest resident entry's delay ends (UINT64_MAX: none), readable
 * without the lock: pmr_impl_segment_cache_tick takes it only then. */
static _Atomic uint64_t due_hint = UINT64_MAX;
static size_t hits, misses;
static size_t max_bytes = PMR_SEGMENT_CACHE_DEFAULT_MAX_BYTES;
static uint64_t delay_ns =
    (uint64_t)PMR_SEGMENT_CACHE_DEFAULT_DELAY_MS * 1000000u;

static const pmr_impl_fork_client fork_client = {.spin = &lock};

static void lock_cache(void) {
  pmr_impl_fork_register(&fork_client);
  pmr_impl_spin_lock(&lock);
}

static void unlock_cache(void) {
  atomic_store_explicit(&resident_hint, resident, memory_order_relaxed);
  uint64_t due = UINT64_MAX;
  for (size_t i = 0; i < count && resident != 0; ++i)
    if (entries[i].resident) {
      due = entries[i].since + delay_ns;
      break;
    }
  atomic_store_explicit(&due_hint, due, memory_order_relaxed);
  pmr_impl_spin_unlock(&lock);
}

/* Under the lock: the memory of up to PURGE_BATCH segments cached for the
 * delay goes back to the OS, oldest first; and, oldest first whatever
 * their age, at least `room` bytes of it (a miss, or a hit whose memory
 * was given back: the caller touches that much anew, and the process
 * should not hold both). */
static void purge_due(uint64_t now, size_t room) {
  size_t done = 0;
  for (size_t i = 0; i < count && (done < PURGE_BATCH || room > 0); ++i) {
    entry *e = &entries[i];
    if (room == 0 && now - e->since < delay_ns) break; /* the rest: newer */
    if (!e->resident) continue;
    pmr_impl_os_decommit(e->p, e->bytes);
    e->resident = false;
    resident -= e->bytes;
    room = room > e->bytes ? room - e->bytes : 0;
    ++done;
  }
}

static void remove_at(size_t i) {
  cached -= entries[i].bytes;
  if (entries[i].resident) resident -= entries[i].bytes;
  memmove(&entries[i], &entries[i + 1], (count - i - 1) * sizeof *entries);
  --count;
}

void *pmr_impl_segment_cache_take(size_t bytes, size_t most, size_t unit,
                                  size_t *got, bool *warm) {
  uint64_t now = pmr_impl_coarse_ns();
  char *p = NULL;
  lock_cache();
  /* The newest that fits: the warmest. */
  for (size_t i = count; i-- > 0;) {
    size_t b = entries[i].bytes;
    if (b < bytes || b > most || b % unit != 0) continue;
    p = entries[i].p;
    *got = entries[i].bytes;
    *warm = entries[i].resident;
    remove_at(i);
    break;
  }
  if (p != NULL)
    ++hits;
  else
    ++misses;
  /* A miss maps `bytes` anew, and a cold hit faults its memory in again:
   * as much resident memory goes back first. */
  purge_due(now, p == NULL ? bytes : *warm ? 0 : *got);
  unlock_cache();
  if (p != NULL) {
    pmr_impl_os_lsan_root(p, *got, true);
    PMR_IMPL_UNDEFINED(p, *got);
  }
  return p;
}

void pmr_impl_segment_cache_make_room(size_t bytes) {
  if (atomic_load_explicit(&resident_hint, memory_order_relaxed) == 0) return;
  uint64_t now = pmr_impl_coarse_ns();
  lock_cache();
  purge_due(now, bytes);
  unlock_cache();
}

bool pmr_impl_segment_cache_put(void *p, size_t bytes) {
  uint64_t now = pmr_impl_coarse_ns();
  /* Marked before another thread can take it (it unmarks what it takes). */
  pmr_impl_os_lsan_root(p, bytes, false); /* not a heap root while here */
  PMR_IMPL_NOACCESS(p, bytes);
  lock_cache();
  bool kept = count < MAX_ENTRIES && cached + bytes <= max_bytes;
  if (kept) {
    entries[count++] = (entry){(char *)p, bytes, now, true};
    cached += bytes;
    resident += bytes;
  }
  purge_due(now, 0);
  unlock_cache();
  if (!kept) { /* the caller unmaps it, as it was */
    PMR_IMPL_UNDEFINED(p, bytes);
    pmr_impl_os_lsan_root(p, bytes, true);
  }
  return kept;
}

bool pmr_impl_segment_cache_tick(void) {
  if (atomic_load_explicit(&resident_hint, memory_order_relaxed) == 0)
    return false;
  uint64_t now = pmr_impl_coarse_ns();
  if (now < atomic_load_explicit(&due_hint, memory_order_relaxed)) return true;
  lock_cache();
  purge_due(now, 0);
  unlock_cache();
  return atomic_load_explicit(&resident_hint, memory_order_relaxed) != 0;
}

pmr_segment_cache_stats pmr_segment_cache_get_stats(void) {
  pmr_segment_cache_stats st;
  lock_cache();
  st.cached_bytes = cached;
  st.resident_bytes = resident;
  st.hits = hits;
  st.misses = misses;
  st.max_bytes = max_bytes;
  st.delay_ms = (unsigned)(delay_ns / 1000000u);
  unlock_cache();
  return st;
}

/* Unmaps the oldest segments while the cache holds more than keep_bytes;
 * returns their bytes. */
static size_t release_beyond(size_t keep_bytes) {
  size_t given = 0;
  for (;;) {
    lock_cache();
    entry e = {NULL, 0, 0, false};
    if (count != 0 && cached > keep_bytes) {
      e = entries[0];
      remove_at(0);
    }
    unlock_cache();
    if (e.p == NULL) return given;
    PMR_IMPL_UNDEFINED(e.p, e.bytes);
    pmr_impl_os_lsan_root(e.p, e.bytes, true); /* os_unmap removes it */
    pmr_impl_os_unmap(e.p, e.bytes);
    given += e.bytes;
  }
}

void pmr_segment_cache_set_limits(size_t max, unsigned delay_ms) {
  lock_cache();
  max_bytes = max;
  delay_ns = (uint64_t)delay_ms * 1000000u;
  unlock_cache();
  release_beyond(max);
}

size_t pmr_segment_cache_trim(void) { return release_beyond(0); }
