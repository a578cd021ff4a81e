/* pmr_segment_cache: the process-wide cache of free segments under the
 * pools, so that short-lived pools start warm.
 *
 * A pool, synchronized pool or thread cache over the malloc resource maps
 * its segments (runs of 64 KiB pages, up to 1 MiB) from the OS itself.
 * When it gives one back (destroy, release, trim, or beyond max_free_bytes)
 * the segment (or an oversize block that holds a segment of a pool over
 * the pool) goes to this cache instead of the OS, and the next pool that
 * needs a segment takes a warm one from here: a pool made per request,
 * frame, task or thread then reuses memory the process already has, as
 * malloc would, instead of mapping and faulting in fresh memory each time.
 *
 * Bounds: the cache holds at most `max_bytes` of segments (default
 * PMR_SEGMENT_CACHE_DEFAULT_MAX_BYTES); beyond, segments go back to the OS
 * at once. When a pool maps new memory because no cached segment fits, or
 * takes one whose memory went back already (it faults it in again), cached
 * segments give back at least as much physical memory first, so
 * the cache does not make the process hold more than it would without it.
 * A pool that takes a warm segment treats its pages as used memory: free
 * ones give their memory back after the delay, as its own do. A segment cached
 * for `delay_ms` (default PMR_SEGMENT_CACHE_DEFAULT_DELAY_MS) with no use gives
 * its physical memory back to the OS (its address range stays reserved, and
 * reads as zeros when a pool takes it again); this happens when the cache is
 * next used, by any thread, or from an allocation slow path of a pool that
 * gave segments to it (so a pool that stops needing segments still gets
 * their memory back), or at once with pmr_segment_cache_trim. Pools over
 * any other upstream never use the cache: their segments go back to their
 * upstream.
 *
 * A pool's held_bytes and trim stay exact for that pool: what it gives to
 * the cache is no longer its.
 *
 * Thread safety: every function from any thread at any time; fork() keeps
 * the cache consistent in the child (a pthread_atfork handler takes its
 * lock). A segment is never handed to two pools. */
#ifndef PMR_RESOURCES_SEGMENT_CACHE_H
#define PMR_RESOURCES_SEGMENT_CACHE_H

#include "../mem_resource/pmr_mem_resource.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 256 MiB: room for what the pools of a busy round give back (several
 * threads' pools of tens of MiB each); a bound below that sends segments
 * back to the OS only for the next round to map and fault them in again.
 * Resident only until the delay has passed and the cache is used again;
 * pmr_segment_cache_trim when going idle gives it back at once. */
#define PMR_SEGMENT_CACHE_DEFAULT_MAX_BYTES ((size_t)256 << 20)
/* 1 s: as the pools' own free pages (pmr_pool_options.h). */
#define PMR_SEGMENT_CACHE_DEFAULT_DELAY_MS 1000u

typedef struct pmr_segment_cache_stats {
  size_t cached_bytes;   /* segments in the cache now */
  size_t resident_bytes; /* of which not yet given back to the OS */
  size_t hits;           /* segments taken from the cache, since start */
  size_t misses;         /* segments mapped because the cache had none */
  size_t max_bytes;      /* the bounds in effect */
  unsigned delay_ms;
} pmr_segment_cache_stats;

pmr_segment_cache_stats pmr_segment_cache_get_stats(void);

/* Sets the bounds (max_bytes 0: no cache, every segment goes back to the
 * OS; delay_ms 0: cached segments give their memory back when the cache is
 * next used). Segments beyond the new bound go back at once. */
void pmr_segment_cache_set_limits(size_t max_bytes, unsigned delay_ms);

/* Gives every cached segment back to the OS now (a process-wide trim);
 * returns their bytes. */
size_t pmr_segment_cache_trim(void);

/* pmr_large_reservoir: the process-wide reservoir of freed large memory.
 *
 * Blocks of 128 KiB and more that the pools, the thread cache and the
 * drop-in map from the OS themselves (over the malloc resource) are not
 * unmapped when freed: their address range is kept, merged with adjacent
 * kept ranges, and a later large request of any size is carved out of a
 * kept range (the one that gives it the most memory still resident, then
 * the smallest; the rest stays kept), so replacing a 20 MiB buffer with a
 * 15 MiB one faults no page in and maps nothing. Where that range holds
 * fewer resident bytes than the request, resident pages of other kept
 * ranges are moved under the rest of it (Linux: mremap; the page tables
 * move, no page faults in), so replacing it with a 25 MiB one after other
 * large blocks were freed faults in none either. Carved memory holds what
 * its last owners left in it (zero where it was never touched). A block that
 * grows (realloc, try_resize) takes the kept range right after it, in place.
 *
 * Bounds: kept memory that may be resident totals at most `max_bytes`
 * (default PMR_LARGE_RESERVOIR_DEFAULT_MAX_BYTES; the oldest ranges go back
 * beyond); a range unused for `delay_ms` (default
 * PMR_LARGE_RESERVOIR_DEFAULT_DELAY_MS) is unmapped when the reservoir or an
 * allocation slow path of a pool that fed it next runs; before new memory
 * is mapped because no kept range fits, kept ranges give back at least as
 * much resident memory first, so the process's peak resident memory is
 * never above what it would be without the reservoir.
 * pmr_large_reservoir_trim (and every pool's trim, malloc_trim under the
 * drop-in) gives everything back at once. Off under AddressSanitizer.
 * Thread-safe and fork-safe, as the segment cache. */
#define PMR_LARGE_RESERVOIR_DEFAULT_MAX_BYTES ((size_t)64 << 20)
#define PMR_LARGE_RESERVOIR_DEFAULT_DELAY_MS 1000u

typedef struct pmr_large_reservoir_stats {
  size_t kept_bytes;     /* address space of the kept ranges */
  size_t resident_bytes; /* of which may be resident (bounded by max_bytes) */
  size_t ranges;         /* kept ranges (adjacent ones merge) */
  size_t hits;           /* large blocks carved from it, since start */
  size_t grown;          /* blocks grown in place into a kept range */
  size_t misses;         /* large blocks mapped because no range fitted */
  size_t purged_bytes;   /* bytes unmapped by the delay, bound or trim */
  size_t moved_bytes;    /* resident bytes moved into carved blocks */
  size_t max_bytes;      /* the bounds in effect */
  unsigned delay_ms;
} pmr_large_reservoir_stats;

pmr_large_reservoir_stats pmr_large_reservoir_get_stats(void);

/* Sets the bounds (max_bytes 0: nothing kept, freed large blocks are
 * unmapped at once, as before; delay_ms 0: a kept range is unmapped when
 * the reservoir is next used after it). Ranges beyond go back at once. */
void pmr_large_reservoir_set_limits(size_t max_bytes, unsigned delay_ms);

/* Unmaps every kept range now; returns their bytes. */
size_t pmr_large_reservoir_trim(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PMR_RESOURCES_SEGMENT_CACHE_H */
