/* PRIVATE: the process-wide cache of free segments (pmr_segment_cache.h),
 * for page sources that map their segments themselves (os_mem.h). */
#ifndef PMR_IMPL_SEGMENT_CACHE_H
#define PMR_IMPL_SEGMENT_CACHE_H

#include <stdbool.h>
#include <stddef.h>

/* A cached segment of at least `bytes` bytes (its size in *got), aligned as
 * every mapped segment is, taken out of the cache; NULL (a miss) when there
 * is none. Its memory is zero or as its last pool left it. */
void *pmr_impl_segcache_take(size_t bytes, size_t *got);

/* Keeps segment p of `bytes` bytes (from pmr_impl_os_map) for the next
 * pool; false when the cache is full or off: the caller unmaps it. */
bool pmr_impl_segcache_put(void *p, size_t bytes);

#endif /* PMR_IMPL_SEGMENT_CACHE_H */
