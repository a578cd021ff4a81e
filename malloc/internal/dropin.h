/* PRIVATE: what dropin.c shares with dropin_cxx.c, dropin_env.c,
 * os_upstream.c and foreign.c. */
#ifndef PMR_IMPL_MALLOC_DROPIN_H
#define PMR_IMPL_MALLOC_DROPIN_H

#include <stdbool.h>
#include <stddef.h>

#include "mem_resource/pmr_mem_resource.h"

/* A block of `bytes` aligned to `alignment` (a power of two, any size):
 * aligned_alloc's work without its checks. NULL with errno ENOMEM when
 * there is no memory. */
void *pmr_impl_dropin_aligned(size_t alignment, size_t bytes);

/* The engine's upstream (os_upstream.c): memory from the OS, never from
 * malloc (PMR_TRAIT_SYSTEM_MEMORY: the engine maps its segments and large
 * blocks itself and asks this one for blocks of 16 KiB to 128 KiB only),
 * with freed blocks of up to 128 KiB kept for a request of the same length,
 * 8 MiB in all. Thread-safe, fork-safe. */
extern pmr_mem_resource pmr_impl_dropin_os;
/* Unmaps every kept block; returns their bytes. */
size_t pmr_impl_dropin_os_trim(void);
/* The bytes kept now. */
size_t pmr_impl_dropin_os_kept(void);

/* What p, a pointer that is no block of ours, points into where no heap
 * block of any allocator starts: the first page of a large block of ours,
 * the calling thread's stack, or the image
 * (code, data, bss) of a loaded object other than the dynamic linker, whose
 * own allocator serves blocks from its image before the take-over. NULL
 * when neither: then p may be a block of the C library's from before the
 * take-over, and is left alone. Slow (it asks the C library): for
 * foreign pointers only (foreign.c). */
const char *pmr_impl_dropin_never_a_block(const void *p);

/* Whether the environment variable `name` is set to `value` (dropin_env.c:
 * no allocation, safe before the engine exists). */
bool pmr_impl_dropin_env_is(const char *name, const char *value);
/* The reservoir of freed large memory (pmr_segment_cache.h): its bound on
 * kept resident bytes and its delay, from PMR_MALLOC_KEEP_BYTES and
 * PMR_MALLOC_PURGE_DELAY_MS (0 bytes: off). */
void pmr_impl_dropin_env_reservoir(void);

#endif /* PMR_IMPL_MALLOC_DROPIN_H */
