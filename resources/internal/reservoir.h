/* PRIVATE: the process-wide reservoir of freed large memory
 * (pmr_segment_cache.h, pmr_large_reservoir_*): address ranges that held
 * large blocks mapped by the pools, the thread cache or the drop-in, kept
 * mapped when freed so that a later large request of any size is carved out
 * of them instead of being mapped and faulted in afresh.
 *
 * Spans are kept sorted by address; a freed range adjacent to a kept one
 * merges with it (Linux unmaps across adjacent anonymous mappings) when the
 * merged span's resident bytes stay a prefix. A request takes the front of
 * the span that gives it the most memory that may still be resident, the
 * smallest such; the rest stays kept. Each span knows an upper bound of its
 * resident bytes as a prefix (`dirty`): memory beyond it (a block's room to
 * grow, never touched, or memory purged) costs nothing but address space.
 * Where a carved block (or one mapped anew) has less resident memory than
 * its length, the resident prefixes of other spans are moved under the
 * rest (pmr_impl_os_move), so no page faults in while kept memory lasts.
 *
 * Purging unmaps whole spans: a span unused for the delay, the oldest spans
 * while the dirty bytes exceed the bound, and before new memory is mapped
 * because no span fits, at least as many dirty bytes as the new mapping
 * (so the reservoir never takes the process above the resident memory it
 * would have without it). Off under AddressSanitizer (LeakSanitizer's root
 * regions are per mapping). */
#ifndef PMR_IMPL_RESERVOIR_H
#define PMR_IMPL_RESERVOIR_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Whether the reservoir is in use (not under AddressSanitizer, and its
 * bound is not 0). */
bool pmr_impl_reservoir_on(void);

/* `len` bytes (a multiple of the OS page) aligned to `alignment` carved
 * out of a kept span, or NULL (a miss). The memory is as its last owners
 * left it up to *dirty bytes (when dirty is not NULL), zero past them. */
void *pmr_impl_reservoir_take(size_t len, size_t alignment, size_t *dirty);

/* Keeps [p, p + len) (len a multiple of the OS page, from
 * pmr_impl_os_map/os_reserve or from the reservoir), of which at most the
 * first `dirty` bytes may be resident; false: the reservoir is off or full,
 * the caller unmaps it. */
bool pmr_impl_reservoir_put(void *p, size_t len, size_t dirty);

/* Takes the `need` bytes at `end` (page multiples) out of the kept span
 * that starts there, so that a block ending at `end` grows in place; false
 * when no kept span starts there or it is shorter. */
bool pmr_impl_reservoir_extend(void *end, size_t need);

/* Moves resident pages of kept spans (the oldest first) under
 * [p, p + len), memory just mapped and not touched yet, so that it faults
 * nothing in where they suffice (Linux; pmr_impl_os_move); returns the
 * bytes moved, from the front. The memory there then holds what its last
 * owners left in it. */
size_t pmr_impl_reservoir_fill(void *p, size_t len);

/* Before `bytes` of new memory are mapped: the oldest spans with resident
 * memory are unmapped until at least that many resident bytes went back. */
void pmr_impl_reservoir_make_room(size_t bytes);

/* The slow paths' call: spans whose delay has passed are unmapped; true
 * while some span is still kept (the caller should come back). No lock
 * and no clock read when nothing is kept. */
bool pmr_impl_reservoir_tick(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PMR_IMPL_RESERVOIR_H */
