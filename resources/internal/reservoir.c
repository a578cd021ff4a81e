/* The process-wide reservoir of freed large memory (reservoir.h,
 * pmr_segment_cache.h). */
/* POSIX 2008 (clock_gettime, platform.h) for builds that ask for strict ISO C
 * (-std=c11) and define nothing. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "resources/internal/reservoir.h"

#include <stdatomic.h>
#include <stdint.h>

#include "resources/internal/fork_guard.h"
#include "resources/internal/mem_check.h"
#include "resources/internal/platform.h"
#include "resources/internal/spin_lock.h"
#include "resources/pmr_segment_cache.h"

/* Kept ranges at most (a freed range beyond unmaps the oldest). */
#define MAX_SPANS 64

typedef struct span {
  char *p;
  size_t len;
  size_t dirty;   /* at most the first `dirty` bytes may be resident */
  uint64_t since; /* when it was last freed into (pmr_impl_coarse_ns) */
} span;

static pmr_impl_spin lock;
/* By address; the lock guards everything below. */
static span spans[MAX_SPANS];
static size_t count, kept, dirty_total;
static size_t hits, grown, misses, purged, moved;
static size_t max_bytes = PMR_LARGE_RESERVOIR_DEFAULT_MAX_BYTES;
static uint64_t delay_ns =
    (uint64_t)PMR_LARGE_RESERVOIR_DEFAULT_DELAY_MS * 1000000u;
/* count, readable without the lock (a hint: no lock when 0), and when the
 * oldest span's delay ends (UINT64_MAX: none). */
static atomic_size_t count_hint;
static _Atomic uint64_t due_hint = UINT64_MAX;
static atomic_bool off_hint; /* max_bytes == 0 */

static const pmr_impl_fork_client fork_client = {.spin = &lock};

static void lock_res(void) {
  pmr_impl_fork_register(&fork_client);
  pmr_impl_spin_lock(&lock);
}

static void unlock_res(void) {
  atomic_store_explicit(&count_hint, count, memory_order_relaxed);
  uint64_t due = UINT64_MAX;
  for (size_t i = 0; i < count; ++i)
    if (spans[i].since + delay_ns < due) due = spans[i].since + delay_ns;
  atomic_store_explicit(&due_hint, due, memory_order_relaxed);
  pmr_impl_spin_unlock(&lock);
}

/* Spans taken out under the lock, to unmap after it. */
typedef struct out_list {
  span s[MAX_SPANS + 2]; /* a put may take out every span and its own */
  size_t n;
} out_list;

static void remove_at(size_t i, out_list *out) {
  if (out != NULL) out->s[out->n++] = spans[i];
  kept -= spans[i].len;
  dirty_total -= spans[i].dirty;
  for (size_t j = i + 1; j < count; ++j) spans[j - 1] = spans[j];
  --count;
}

static void insert_at(size_t i, span s) {
  for (size_t j = count; j > i; --j) spans[j] = spans[j - 1];
  spans[i] = s;
  ++count;
  kept += s.len;
  dirty_total += s.dirty;
}

/* The oldest span (with resident memory when `dirty_only`), or count. */
static size_t oldest(bool dirty_only) {
  size_t at = count;
  for (size_t i = 0; i < count; ++i)
    if ((!dirty_only || spans[i].dirty != 0) &&
        (at == count || spans[i].since < spans[at].since))
      at = i;
  return at;
}

/* The oldest spans beyond the bound, into out. */
static void purge_bound(out_list *out) {
  while (dirty_total > max_bytes) remove_at(oldest(true), out);
}

/* Spans past their delay, and the oldest beyond the bound, into out. */
static void purge_due(uint64_t now, out_list *out) {
  for (size_t i = 0; i < count;) {
    if (now >= spans[i].since && now - spans[i].since >= delay_ns)
      remove_at(i, out);
    else
      ++i;
  }
  purge_bound(out);
}

static void unmap_all(out_list *out) {
  for (size_t i = 0; i < out->n; ++i)
    pmr_impl_os_unmap(out->s[i].p, out->s[i].len);
}

static void count_purged(const out_list *out) {
  for (size_t i = 0; i < out->n; ++i) purged += out->s[i].len;
}

bool pmr_impl_reservoir_on(void) {
#if defined(PMR_IMPL_ASAN)
  return false;
#else
  return !atomic_load_explicit(&off_hint, memory_order_relaxed);
#endif
}

/* Resident pages moved from other kept spans into a block being carved, to
 * do after the lock is let go. */
#define MAX_MOVES 8
/* Fewer bytes are not moved: a move costs system calls (and, with other
 * threads running, TLB shootdowns) that cost more than faulting so few
 * pages in. */
#define MOVE_MIN ((size_t)256 << 10)
typedef struct move_list {
  struct {
    char *from, *to;
    size_t len;
  } m[MAX_MOVES];
  size_t n;
} move_list;

/* The block being carved has [to, to + need) not resident (beyond its
 * span's dirty prefix): the dirty prefixes of other spans, newest first
 * (the likeliest to be in the CPU's caches still; the bound takes the
 * oldest), are
 * taken out of them to be moved there (pmr_impl_os_move: the page tables
 * move, nothing faults in, the memory stays as resident as it was). The
 * block's memory is then as its last owners left it, as any kept memory.
 *
 * A move is not free: a TLB shootdown on the other cores and, on a host
 * that shadows page tables, an exit per moved page at its first touch; the
 * OS refuses one whose source spans two mappings (earlier moves leave such
 * sources), and a refused move's source goes back to the OS. So a program
 * whose blocks keep landing where memory is not resident (a producer and a
 * consumer trading blocks of 64 KiB-4 MiB) pays about a fault per page.
 * Keeping resident memory in one piece (freed neighbours merged while
 * resident, as mimalloc's arenas keep pages where they were) would make
 * moves rare; it is not done. */
static void gather_moves(char *to, size_t need, size_t ps, move_list *moves) {
  while (need >= MOVE_MIN && moves->n < MAX_MOVES) {
    size_t d = count;
    for (size_t i = 0; i < count; ++i)
      if (spans[i].dirty >= MOVE_MIN &&
          (d == count || spans[i].since > spans[d].since))
        d = i;
    if (d == count) return;
    span *s = &spans[d];
    size_t n = s->dirty & ~(ps - 1);
    if (n > need) n = need;
    moves->m[moves->n].from = s->p;
    moves->m[moves->n].to = to;
    moves->m[moves->n].len = n;
    ++moves->n;
    to += n;
    need -= n;
    moved += n;
    if (n == s->len) {
      remove_at(d, NULL);
    } else { /* the span's front goes: the rest stays kept, sorted */
      s->p += n;
      s->len -= n;
      s->dirty -= n;
      kept -= n;
      dirty_total -= n;
    }
  }
}

void *pmr_impl_reservoir_take(size_t len, size_t alignment, size_t *dirty) {
  if (len == 0) return NULL;
  if (!pmr_impl_reservoir_on() ||
      atomic_load_explicit(&count_hint, memory_order_relaxed) == 0) {
    if (pmr_impl_reservoir_on()) {
      lock_res();
      ++misses;
      unlock_res();
    }
    return NULL;
  }
  size_t ps = pmr_impl_os_page_size();
  if (alignment < ps) alignment = ps;
  uint64_t now = pmr_impl_coarse_ns();
  out_list out;
  out.n = 0;
  move_list moves;
  moves.n = 0;
  char *got = NULL;
  lock_res();
  purge_due(now, &out);
  count_purged(&out);
  /* The span giving the most resident bytes, then the smallest. */
  size_t best = count, best_warm = 0;
  for (size_t i = 0; i < count; ++i) {
    const span *s = &spans[i];
    uintptr_t a = pmr_impl_align_up((uintptr_t)s->p, alignment);
    size_t lead = (size_t)(a - (uintptr_t)s->p);
    if (lead > s->len || s->len - lead < len) continue;
    size_t warm = s->dirty > lead ? s->dirty - lead : 0;
    if (warm > len) warm = len;
    if (best == count || warm > best_warm ||
        (warm == best_warm && s->len < spans[best].len)) {
      best = i;
      best_warm = warm;
    }
  }
  if (best != count) {
    span s = spans[best];
    char *a = (char *)pmr_impl_align_up((uintptr_t)s.p, alignment);
    size_t lead = (size_t)(a - s.p), rest = s.len - lead - len;
    if (lead == 0 || rest == 0 || count < MAX_SPANS) {
      remove_at(best, NULL);
      size_t at = best;
      if (lead != 0) {
        span l = {s.p, lead, s.dirty < lead ? s.dirty : lead, s.since};
        insert_at(at++, l);
      }
      if (rest != 0) {
        size_t used = lead + len;
        span r = {a + len, rest, s.dirty > used ? s.dirty - used : 0, s.since};
        insert_at(at, r);
      }
      got = a;
      ++hits;
      size_t warm = pmr_impl_round_up(best_warm, ps);
      if (warm < len) gather_moves(a + warm, len - warm, ps, &moves);
      if (dirty != NULL) {
        *dirty = warm;
        for (size_t i = 0; i < moves.n; ++i) *dirty += moves.m[i].len;
      }
    }
  }
  if (got == NULL) ++misses;
  unlock_res();
  unmap_all(&out);
  for (size_t i = 0; i < moves.n; ++i) {
    /* Not moved: the pages at `to` fault in as before, and those at `from`
     * went back to the OS as a purge would. */
    (void)pmr_impl_os_move(moves.m[i].from, moves.m[i].to, moves.m[i].len);
  }
  return got;
}

bool pmr_impl_reservoir_put(void *p, size_t len, size_t dirty) {
  if (!pmr_impl_reservoir_on() || len == 0) return false;
  if (dirty > len) dirty = len;
  uint64_t now = pmr_impl_coarse_ns();
  out_list out;
  out.n = 0;
  char *c = (char *)p;
  lock_res();
  purge_due(now, &out); /* before: the range freed now waits its delay */
  size_t i = 0;
  while (i < count && spans[i].p < c) ++i;
  span s = {c, len, dirty, now};
  /* Adjacent spans merge when the merged one still has its resident bytes
   * as a prefix (exactly): never a span with untouched room before one in
   * use, whose bound would then count that room resident. */
  if (i > 0 && spans[i - 1].p + spans[i - 1].len == c &&
      (spans[i - 1].dirty == spans[i - 1].len || s.dirty == 0)) {
    span l = spans[i - 1];
    s.p = l.p;
    s.dirty = s.dirty != 0 ? l.len + s.dirty : l.dirty;
    s.len += l.len;
    remove_at(--i, NULL);
  }
  if (i < count && s.p + s.len == spans[i].p &&
      (s.dirty == s.len || spans[i].dirty == 0)) {
    span r = spans[i];
    s.dirty = r.dirty != 0 ? s.len + r.dirty : s.dirty;
    s.len += r.len;
    remove_at(i, NULL);
  }
  if (count == MAX_SPANS) {
    size_t o = oldest(false);
    remove_at(o, &out);
    if (o < i) --i;
  }
  insert_at(i, s);
  purge_bound(&out);
  count_purged(&out);
  unlock_res();
  unmap_all(&out);
  return true;
}

bool pmr_impl_reservoir_extend(void *end, size_t need) {
  if (!pmr_impl_reservoir_on() ||
      atomic_load_explicit(&count_hint, memory_order_relaxed) == 0)
    return false;
  char *e = (char *)end;
  bool ok = false;
  lock_res();
  for (size_t i = 0; i < count; ++i) {
    if (spans[i].p != e) continue;
    if (spans[i].len >= need) {
      span s = spans[i];
      remove_at(i, NULL);
      if (s.len > need) {
        span r = {s.p + need, s.len - need, s.dirty > need ? s.dirty - need : 0,
                  s.since};
        insert_at(i, r);
      }
      ok = true;
      ++grown;
    }
    break;
  }
  unlock_res();
  return ok;
}

size_t pmr_impl_reservoir_fill(void *p, size_t len) {
  if (!pmr_impl_reservoir_on() ||
      atomic_load_explicit(&count_hint, memory_order_relaxed) == 0)
    return 0;
  size_t ps = pmr_impl_os_page_size();
  move_list moves;
  moves.n = 0;
  lock_res();
  gather_moves((char *)p, len & ~(ps - 1), ps, &moves);
  unlock_res();
  size_t filled = 0;
  for (size_t i = 0; i < moves.n; ++i) {
    if (pmr_impl_os_move(moves.m[i].from, moves.m[i].to, moves.m[i].len))
      filled += moves.m[i].len;
  }
  return filled;
}

void pmr_impl_reservoir_make_room(size_t bytes) {
  if (atomic_load_explicit(&count_hint, memory_order_relaxed) == 0) return;
  out_list out;
  out.n = 0;
  lock_res();
  size_t freed = 0;
  while (freed < bytes) {
    size_t o = oldest(true);
    if (o == count) break;
    freed += spans[o].dirty;
    remove_at(o, &out);
  }
  count_purged(&out);
  unlock_res();
  unmap_all(&out);
}

bool pmr_impl_reservoir_tick(void) {
  if (atomic_load_explicit(&count_hint, memory_order_relaxed) == 0)
    return false;
  uint64_t now = pmr_impl_coarse_ns();
  if (now < atomic_load_explicit(&due_hint, memory_order_relaxed)) return true;
  out_list out;
  out.n = 0;
  lock_res();
  purge_due(now, &out);
  count_purged(&out);
  unlock_res();
  unmap_all(&out);
  return atomic_load_explicit(&count_hint, memory_order_relaxed) != 0;
}

pmr_large_reservoir_stats pmr_large_reservoir_get_stats(void) {
  pmr_large_reservoir_stats st;
  lock_res();
  st.kept_bytes = kept;
  st.resident_bytes = dirty_total;
  st.ranges = count;
  st.hits = hits;
  st.grown = grown;
  st.misses = misses;
  st.purged_bytes = purged;
  st.moved_bytes = moved;
  st.max_bytes = max_bytes;
  st.delay_ms = (unsigned)(delay_ns / 1000000u);
  unlock_res();
  return st;
}

void pmr_large_reservoir_set_limits(size_t max, unsigned delay_ms) {
  out_list out;
  out.n = 0;
  lock_res();
  max_bytes = max;
  delay_ns = (uint64_t)delay_ms * 1000000u;
  atomic_store_explicit(&off_hint, max == 0, memory_order_relaxed);
  if (max == 0)
    while (count != 0) remove_at(count - 1, &out);
  else
    while (dirty_total > max_bytes) remove_at(oldest(true), &out);
  count_purged(&out);
  unlock_res();
  unmap_all(&out);
}

size_t pmr_large_reservoir_trim(void) {
  out_list out;
  out.n = 0;
  lock_res();
  size_t given = kept;
  while (count != 0) remove_at(count - 1, &out);
  count_purged(&out);
  unlock_res();
  unmap_all(&out);
  return given;
}
