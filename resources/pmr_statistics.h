/* pmr_statistics: counts what goes through it, forwards everything upstream.
 *
 * Put it in front of any resource (or make it the upstream of one) to see how
 * many allocations a piece of code makes, how much memory it holds at most,
 * and which sizes it asks for. It owns no memory: every call is forwarded to
 * the upstream unchanged (same bytes, same alignment).
 *
 *   - Counters: successful and failed allocations, deallocations, successful
 *     try_resize calls, blocks and bytes in use, the peak of bytes in use,
 *     the total of bytes ever allocated, and a histogram of allocations by
 *     requested size (see PMR_STATISTICS_BUCKETS).
 *   - Calls rejected by pmr_allocate itself (bad alignment, overflowing size)
 *     never reach the resource and are not counted.
 *   - Allocations are counted after upstream returned and deallocations
 *     before they are forwarded, so bytes in use (and the peak) never exceed
 *     what is really out, even while threads race.
 *   - pmr_try_resize is forwarded to upstream's; on success bytes in use and
 *     the peak follow the new size, and growth adds to the total allocated.
 *   - Equal only to itself: memory from it given back elsewhere would not be
 *     counted.
 *
 * Thread safety: the counters are C11 atomics, so the resource is exactly as
 * thread-safe as its upstream (put it over a synchronized pool or the malloc
 * resource and use it from any thread).
 * Failure: NULL when upstream fails (counted; errno as upstream left it).
 * NULL (pmr_mem_resource.h): a NULL resource given to any function below
 * (or a NULL stream to report) is a caller error: debug builds report it
 * through pmr_report_misuse and the call changes nothing and returns false,
 * NULL or zeroed stats. */
#ifndef PMR_RESOURCES_STATISTICS_H
#define PMR_RESOURCES_STATISTICS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../mem_resource/pmr_mem_resource.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Histogram buckets by requested size, powers of two: bucket 0 is 0-8
 * bytes, bucket i (1..17) is 2^(i+2)+1 .. 2^(i+3) bytes (9-16, 17-32, ...,
 * 512 KiB+1 .. 1 MiB), bucket 18 is everything above 1 MiB. */
#define PMR_STATISTICS_BUCKETS 19

/* The bucket of a request of `bytes` bytes. */
unsigned pmr_statistics_bucket_of(size_t bytes);

/* The largest size in bucket i (8, 16, ..., 1 MiB); SIZE_MAX for the last
 * bucket and beyond. */
size_t pmr_statistics_bucket_limit(unsigned i);

/* The state is private (atomics); its size is fixed here so the resource can
 * live on the stack or inside another struct. */
typedef struct pmr_statistics {
  pmr_mem_resource base; /* first: the abstract resource */
  PMR_IMPL_STATE(256);
} pmr_statistics;

/* A copy of the counters. Each field is exact on its own; the fields are
 * read one after another, so while other threads allocate they may not
 * agree with each other (when no call is running they do). */
typedef struct pmr_statistics_stats {
  uint64_t allocations;        /* successful allocate calls */
  uint64_t failed_allocations; /* allocate calls upstream failed */
  uint64_t deallocations;
  uint64_t resizes;         /* successful try_resize calls */
  size_t blocks_in_use;     /* allocations - deallocations */
  size_t bytes_in_use;      /* requested bytes of the blocks in use */
  size_t peak_bytes_in_use; /* since init or the last reset_peak */
  uint64_t total_bytes_allocated;
  uint64_t histogram[PMR_STATISTICS_BUCKETS]; /* successful allocations */
} pmr_statistics_stats;

/* Initialises s with every counter at zero. upstream == NULL means the
 * default resource at this moment. Never fails (returns true), never calls
 * upstream. Debug builds report init over a live instance. */
bool pmr_statistics_init(pmr_statistics *s, pmr_mem_resource *upstream);

/* Ends s. s owns no memory: blocks still in use belong to upstream and may
 * be given back to it directly. Counters are no longer available.
 * Idempotent: a second destroy does nothing. */
void pmr_statistics_destroy(pmr_statistics *s);

pmr_mem_resource *pmr_statistics_upstream(const pmr_statistics *s);

/* The counters now. Thread-safe (see pmr_statistics_stats). */
pmr_statistics_stats pmr_statistics_get_stats(const pmr_statistics *s);

/* Sets the peak to the bytes in use now, to measure the peak of a phase.
 * Thread-safe; allocations racing with it may be left out of the new peak. */
void pmr_statistics_reset_peak(pmr_statistics *s);

/* Writes a human-readable report of a snapshot to out: the counters, then
 * one line per non-empty histogram bucket. Returns false when a write
 * failed. Thread-safe with respect to s (out is the caller's). */
bool pmr_statistics_report(const pmr_statistics *s, FILE *out);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PMR_RESOURCES_STATISTICS_H */
