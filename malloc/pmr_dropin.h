/* pmr_dropin: pmr-c as the process's malloc.
 *
 * libpmr_malloc.so (or libpmr_malloc.a) defines malloc, free, calloc,
 * realloc, reallocarray, posix_memalign, aligned_alloc, memalign, valloc,
 * pvalloc, malloc_usable_size and every standard form of C++'s operator new
 * and delete, over one process-wide resource on the thread cache's engine
 * (per-thread page heaps, lock-free remote frees): a program runs on it
 * unchanged,
 *     LD_PRELOAD=/path/to/libpmr_malloc.so ./program
 * or is linked with it: `-lpmr_malloc` ahead of the C library (the archive's
 * one object defines every entry point, so all of them are taken over
 * together). The program's own calls, its libraries' and libc's go to it
 * alike, from the first allocation (also before main, during static
 * initialisation and in ld.so's relocation of other libraries) to exit.
 *
 * Behaviour is glibc's where C and POSIX leave it open: malloc(0) returns a
 * unique block; free(NULL) does nothing; realloc(NULL, n) is malloc(n);
 * realloc(p, 0) frees p and returns NULL; sizes that overflow (calloc,
 * reallocarray) or exceed what can be mapped return NULL with errno ENOMEM;
 * posix_memalign returns EINVAL for an alignment that is not a power of two
 * multiple of sizeof(void *), aligned_alloc and memalign set errno EINVAL for
 * one that is not a power of two. Blocks are at least 16 bytes, aligned to
 * 16 and to any power of two asked, the page size and beyond. A pointer
 * this library did not hand out (one from before it took over, or from
 * another allocator) is ignored by free and refused by realloc (NULL,
 * ENOMEM), never written. Success leaves errno as it was.
 *
 * Misuse (malloc/README.md, "Misuse"): free, realloc or operator delete of
 * a block freed already, or of a pointer into this library's memory that
 * starts no block in use, is reported on stderr in one line (the call, the
 * address, the size class) and stops the process with abort(), as glibc
 * does; with PMR_MALLOC_MISUSE=report the bad call does nothing instead.
 *
 * Environment, read once at the first allocation:
 *   PMR_MALLOC=thread_cache (default) or pool: the engine, a pmr_thread_cache
 *     or a pmr_synchronized_pool (the same heaps; pmr_pool_stats).
 *   PMR_MALLOC_STATS=1: the statistics below, printed to stderr at exit.
 *   PMR_MALLOC_MISUSE=report: misuse is reported and the call ignored; by
 *     default (or any other value) it stops the process.
 *
 * The engine's upstream maps memory from the OS itself and never calls
 * malloc; the library's own records (threads' heaps) come from the OS too.
 * So pmr_get_default_resource() and pmr_malloc_resource() keep working in such
 * a process: they call malloc, which is this, and a pool over them maps its
 * segments itself as ever (no block is counted twice).
 *
 * Not combinable with tools that replace malloc themselves: AddressSanitizer,
 * ThreadSanitizer, valgrind's memcheck (which would run the program on its
 * own malloc, not on this). tests/malloc/README.md says how it is tested.
 *
 * Thread safety: every function, from any thread. fork(): the child keeps
 * working, also when another thread of the parent was allocating. */
#ifndef PMR_MALLOC_DROPIN_H
#define PMR_MALLOC_DROPIN_H

#include <stdbool.h>
#include <stddef.h>

#include "../mem_resource/pmr_mem_resource.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The resource behind malloc (initialised on first use), for code that
 * wants sized calls without malloc's lookups: blocks from it must go back
 * to it with pmr_deallocate, not free. NULL only when it cannot be set up
 * (no memory at the first allocation). */
pmr_mem_resource *pmr_dropin_resource(void);

/* Whether p (not NULL) is a block malloc handed out in this process: false
 * for memory from before the drop-in took over, or from elsewhere. */
bool pmr_dropin_owns(const void *p);

typedef struct pmr_dropin_stats {
  const char *engine;         /* "thread_cache" or "pool" */
  size_t threads;             /* threads with a heap now (thread_cache) */
  size_t held_bytes;          /* from the OS: pages and oversize blocks */
  size_t free_page_bytes;     /* of which pages with no block in use */
  size_t free_oversize_bytes; /* of which freed large blocks kept for reuse
                               * (by the engine and by its upstream) */
  size_t mapped_bytes;        /* large blocks mapped on their own (calloc) */
  size_t record_bytes;        /* the library's records (threads' heaps) */
  size_t peak_rss_bytes;      /* the process's peak resident set (getrusage) */
  /* The reservoir of freed large memory (pmr_segment_cache.h,
   * pmr_large_reservoir): address space of the freed large blocks kept
   * mapped, of which possibly resident (counted in free_oversize_bytes and
   * held_bytes too), large blocks carved from it and blocks grown in place
   * into it, large blocks mapped because no kept range fitted, and bytes
   * unmapped by its delay, bound or trim, since start. */
  size_t reservoir_bytes;
  size_t reservoir_resident_bytes;
  size_t reservoir_hits;
  size_t reservoir_grown;
  size_t reservoir_misses;
  size_t reservoir_purged_bytes;
} pmr_dropin_stats;

/* A snapshot; exact when no other thread allocates meanwhile. */
pmr_dropin_stats pmr_dropin_get_stats(void);

/* Writes the statistics as a few lines of text to file descriptor fd (what
 * PMR_MALLOC_STATS=1 prints at exit to stderr). Calls no allocator. */
void pmr_dropin_print_stats(int fd);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PMR_MALLOC_DROPIN_H */
