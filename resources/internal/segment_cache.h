/* PRIVATE: the process-wide cache of free segments (pmr_segment_cache.h),
 * for page sources that map their segments themselves (platform.h). */
#ifndef PMR_IMPL_SEGMENT_CACHE_H
#define PMR_IMPL_SEGMENT_CACHE_H

#include <stdbool.h>
#include <stddef.h>

/* The alignment of every block the cache keeps: a segment of a source
 * that maps its own (platform.h). Blocks are at most twice that (an
 * oversize block holding a segment of a pool over a pool, plus its
 * trailer). */
#define PMR_IMPL_SEGMENT_CACHE_MAX ((size_t)1 << 20)

/* A cached block of `bytes` to `most` bytes, a multiple of `unit` (its
 * size in *got), aligned to PMR_IMPL_SEGMENT_CACHE_MAX, taken out of the cache;
 * NULL (a miss) when there is none. Its memory is zero or as its last
 * owner left it; *warm says whether it may still be resident (then its
 * new owner should give its unused pages back to the OS in time). */
void *pmr_impl_segment_cache_take(size_t bytes, size_t most, size_t unit,
                                  size_t *got, bool *warm);

/* Before `bytes` of new memory are mapped: cached blocks give back at
 * least that much physical memory (oldest first), so the cache does not
 * make the process hold more than it would without it. */
void pmr_impl_segment_cache_make_room(size_t bytes);

/* Keeps p, `bytes` (at most 2 * PMR_IMPL_SEGMENT_CACHE_MAX, a multiple of the
 * OS page) from pmr_impl_os_map with alignment PMR_IMPL_SEGMENT_CACHE_MAX, for
 * the next pool; false when the cache is full or off: the caller unmaps it. */
bool pmr_impl_segment_cache_put(void *p, size_t bytes);

/* For the allocation slow paths of a pool that put segments here: the
 * memory of cached blocks whose delay has passed goes back to the OS now
 * (a few per call), as it would when the cache is next used; true while
 * some cached memory is still resident (the caller should come back).
 * Without a lock or a clock read when nothing is resident, and without the
 * lock until the oldest is due. */
bool pmr_impl_segment_cache_tick(void);

#endif /* PMR_IMPL_SEGMENT_CACHE_H */
