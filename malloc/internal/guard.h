/* PRIVATE: the secure drop-in's guard pages (malloc/README.md, "Secure
 * mode").
 *
 * Secure builds (PMR_SECURE): a tagged block (dropin.c: larger than the
 * pooled classes, or aligned beyond them) of PMR_IMPL_GUARD_MIN bytes or
 * more takes its request rounded up to whole OS pages (pmr_impl_guard_len)
 * and one page more, the guard, made inaccessible while the block lives: a
 * read or write running past the block's pages faults there, before it
 * reaches another block. Up to PMR_IMPL_PAD_CHECKED bytes after the request
 * of any tagged block hold PMR_IMPL_PAD_FILL, checked by free and realloc,
 * so an overflow too short to reach a guard, or from a block without one,
 * is reported there. The tag's total is the request with its front
 * (malloc_usable_size tells the request); what the block takes of the
 * engine or the OS is pmr_impl_guard_len(total). A block whose start is not
 * page-aligned, or whose guard the OS refused (too many mappings), goes
 * without one.
 *
 * Default builds: pmr_impl_guard_len(total) is total and the rest does
 * nothing (the compiler removes the calls). */
#ifndef PMR_IMPL_MALLOC_GUARD_H
#define PMR_IMPL_MALLOC_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "malloc/internal/pad.h"
#include "resources/internal/platform.h"

/* A freed guarded block kept whole (secure builds: guard_cache.c). */
typedef struct pmr_impl_guard_kept {
  unsigned char *start;
  size_t len; /* pmr_impl_guard_len of its total */
  size_t alignment;
  unsigned origin; /* PMR_IMPL_TAG_ENGINE or PMR_IMPL_TAG_MAP */
} pmr_impl_guard_kept;

#ifdef PMR_SECURE
#define PMR_IMPL_GUARDED true

/* Blocks of this many bytes (their front included) and more get a guard:
 * the sizes the OS would map. Smaller ones come and go too often for two
 * system calls each (a server's 16 KiB reply buffers), and take
 * PMR_IMPL_PAD_CHECKED bytes more instead, the fill checked at the free. */
#define PMR_IMPL_GUARD_MIN PMR_IMPL_OS_LARGE_MIN

/* What a block of `total` bytes (its front included, at most SIZE_MAX / 2)
 * takes. Guarded: its OS pages, rounded up to one of four steps per
 * doubling from 4 pages on (at most a quarter more, none of it another
 * block's), and the guard; the steps let a kept block (below) serve a later
 * request of a nearby size, as a program growing a buffer asks. */
static inline size_t pmr_impl_guard_len(size_t total) {
  if (total < PMR_IMPL_GUARD_MIN) return total + PMR_IMPL_PAD_CHECKED;
  size_t ps = pmr_impl_os_page_size();
  size_t n = pmr_impl_round_up(total, ps) / ps;
  if (n > 4) {
    size_t unit = (size_t)1
                  << (63 - __builtin_clzll((unsigned long long)n) - 2);
    n = pmr_impl_round_up(n, unit);
  }
  return (n + 1) * ps;
}

/* Whether a block of `len` bytes (pmr_impl_guard_len) has a guard. */
static inline bool pmr_impl_guard_has(size_t len) {
  return len >= PMR_IMPL_GUARD_MIN + pmr_impl_os_page_size();
}

/* How many bytes after the request hold the fill: as many as there are up
 * to the guard or the block's end, at most PMR_IMPL_PAD_CHECKED. An
 * overflow runs through them first. */
static inline size_t pmr_impl_guard_slack(size_t total) {
  size_t len = pmr_impl_guard_len(total);
  size_t room =
      len - total - (pmr_impl_guard_has(len) ? pmr_impl_os_page_size() : 0);
  return room < PMR_IMPL_PAD_CHECKED ? room : PMR_IMPL_PAD_CHECKED;
}

/* The block of `total` bytes at start, just handed out: the bytes after
 * its request filled, its guard (its last page) set; protect false: a kept
 * block's is. */
static inline void pmr_impl_guard_set(unsigned char *start, size_t total,
                                      bool protect) {
  size_t ps = pmr_impl_os_page_size(), len = pmr_impl_guard_len(total);
  pmr_impl_pad_fill(start + total, pmr_impl_guard_slack(total));
  if (protect && pmr_impl_guard_has(len) && (uintptr_t)start % ps == 0)
    pmr_impl_os_protect(start + len - ps, ps, false);
}

/* Why the block at start may not go back (the bytes after its request
 * written: an overflow), or NULL. */
static inline const char *pmr_impl_guard_broken(const unsigned char *start,
                                                size_t total) {
  return pmr_impl_pad_filled(start + total, pmr_impl_guard_slack(total))
             ? NULL
             : "a write past the end of the block (its padding changed)";
}

/* The block at start, of `len` bytes (pmr_impl_guard_len of its total),
 * goes back: its guard readable and writable
 * again, as the engine and the OS expect their memory. */
static inline void pmr_impl_guard_clear(unsigned char *start, size_t len) {
  size_t ps = pmr_impl_os_page_size();
  if (pmr_impl_guard_has(len) && (uintptr_t)start % ps == 0)
    pmr_impl_os_protect(start + len - ps, ps, true);
}

/* A freed guarded block kept whole (guard_cache.c), its guard still set,
 * for the next request of the same length, alignment and origin: neither
 * pays the two mprotect calls. At most PMR_IMPL_GUARD_KEPT blocks and
 * PMR_IMPL_GUARD_KEPT_BYTES in all; malloc_trim gives them back.
 * Thread-safe, fork-safe. */
#define PMR_IMPL_GUARD_KEPT 16u
#define PMR_IMPL_GUARD_KEPT_BYTES ((size_t)4 << 20)
/* Keeps b; false when there is no room (then the caller gives it back). */
bool pmr_impl_guard_keep(const pmr_impl_guard_kept *b);
/* A kept block of that shape, taken out; NULL when none. */
unsigned char *pmr_impl_guard_take(size_t len, size_t alignment,
                                   unsigned origin);
/* Takes out any kept block, for the caller to give back; false when none. */
bool pmr_impl_guard_evict(pmr_impl_guard_kept *out);
#else
#define PMR_IMPL_GUARDED false
static inline size_t pmr_impl_guard_len(size_t total) { return total; }
static inline void pmr_impl_guard_set(unsigned char *start, size_t total,
                                      bool protect) {
  (void)start;
  (void)total;
  (void)protect;
}
static inline const char *pmr_impl_guard_broken(const unsigned char *start,
                                                size_t total) {
  (void)start;
  (void)total;
  return NULL;
}
static inline void pmr_impl_guard_clear(unsigned char *start, size_t len) {
  (void)start;
  (void)len;
}
static inline bool pmr_impl_guard_keep(const pmr_impl_guard_kept *b) {
  (void)b;
  return false;
}
static inline unsigned char *pmr_impl_guard_take(size_t len, size_t alignment,
                                                 unsigned origin) {
  (void)len;
  (void)alignment;
  (void)origin;
  return NULL;
}
static inline bool pmr_impl_guard_evict(pmr_impl_guard_kept *out) {
  (void)out;
  return false;
}
#endif

#endif /* PMR_IMPL_MALLOC_GUARD_H */
