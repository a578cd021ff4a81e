/* PRIVATE: the secure drop-in's guard pages (malloc/README.md, "Secure
 * mode").
 *
 * Secure builds (PMR_SECURE): a tagged block (dropin.c: larger than the
 * pooled classes, or aligned beyond them) takes its request rounded up to
 * whole OS pages and one page more, the guard, made inaccessible while the
 * block lives: a read or write running past the block's pages faults
 * there, before it reaches another block. The bytes between the request's
 * end and the guard hold PMR_IMPL_PAD_FILL, checked by free and realloc, so
 * an overflow too short to reach the guard is reported there. The tag's
 * total is the request with its front (malloc_usable_size tells the
 * request); what the block takes of the engine or the OS is
 * pmr_impl_guard_len(total). A block whose start is not page-aligned, or
 * whose guard the OS refused (too many mappings), goes without one.
 *
 * Default builds: pmr_impl_guard_len(total) is total and the rest does
 * nothing (the compiler removes the calls). */
#ifndef PMR_IMPL_MALLOC_GUARD_H
#define PMR_IMPL_MALLOC_GUARD_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "malloc/internal/pad.h"
#include "resources/internal/platform.h"

#ifdef PMR_SECURE
#define PMR_IMPL_GUARDED true

/* What a block of `total` bytes (its front included, at most SIZE_MAX / 2)
 * takes: whole OS pages, and the guard. */
static inline size_t pmr_impl_guard_len(size_t total) {
  size_t ps = pmr_impl_os_page_size();
  return pmr_impl_round_up(total, ps) + ps;
}

/* The block of `total` bytes at start, just handed out: its slack filled,
 * its guard set. */
static inline void pmr_impl_guard_set(unsigned char *start, size_t total) {
  size_t ps = pmr_impl_os_page_size(), end = pmr_impl_round_up(total, ps);
  memset(start + total, PMR_IMPL_PAD_FILL, end - total);
  if ((uintptr_t)start % ps == 0) pmr_impl_os_protect(start + end, ps, false);
}

/* Why the block at start may not go back (its slack written: an overflow),
 * or NULL. */
static inline const char *pmr_impl_guard_broken(const unsigned char *start,
                                                size_t total) {
  size_t end = pmr_impl_round_up(total, pmr_impl_os_page_size());
  unsigned char diff = 0;
  for (size_t i = total; i < end; ++i)
    diff |= (unsigned char)(start[i] ^ PMR_IMPL_PAD_FILL);
  return diff == 0 ? NULL
                   : "a write past the end of the block (its padding changed)";
}

/* The block at start goes back: its guard readable and writable again, as
 * the engine and the OS expect their memory. */
static inline void pmr_impl_guard_clear(unsigned char *start, size_t total) {
  size_t ps = pmr_impl_os_page_size();
  if ((uintptr_t)start % ps == 0)
    pmr_impl_os_protect(start + pmr_impl_round_up(total, ps), ps, true);
}
#else
#define PMR_IMPL_GUARDED false
static inline size_t pmr_impl_guard_len(size_t total) { return total; }
static inline void pmr_impl_guard_set(unsigned char *start, size_t total) {
  (void)start;
  (void)total;
}
static inline const char *pmr_impl_guard_broken(const unsigned char *start,
                                                size_t total) {
  (void)start;
  (void)total;
  return NULL;
}
static inline void pmr_impl_guard_clear(unsigned char *start, size_t total) {
  (void)start;
  (void)total;
}
#endif

#endif /* PMR_IMPL_MALLOC_GUARD_H */
