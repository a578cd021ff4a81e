/* PRIVATE: the pools' platform layer: memory straight from the OS.
 *
 * A pool whose upstream hands out system memory (PMR_TRAIT_SYSTEM_MEMORY:
 * the malloc resource, or a third-party resource that says it) maps its
 * segments, and its oversize blocks of at least PMR_IMPL_OS_BIG_MIN bytes,
 * itself, so that it can give the OS back the memory of pages that stay free
 * (decommit: the address range stays mapped and reads as zeros when touched
 * again). Such a pool says PMR_TRAIT_MAPS_LARGE (pmr_mem_resource.h), and a
 * pool over it (pmr_impl_os_backed) decommits its free pages as well. Memory
 * from any other upstream is never decommitted: the pool cannot know what it is
 * (a buffer registered with a device, a locked region, a file).
 *
 * On a platform without mmap pmr_impl_os_direct is false and decommit does
 * nothing. */
#ifndef PMR_IMPL_OS_MEM_H
#define PMR_IMPL_OS_MEM_H

#include <stdbool.h>
#include <stddef.h>

#include "mem_resource/pmr_mem_resource.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Oversize blocks from this size on are mapped (malloc's classic mmap
 * threshold): malloc would keep the holes they leave in its heap. */
#define PMR_IMPL_OS_BIG_MIN ((size_t)128 << 10)

/* Whether a pool over `upstream` maps its memory itself: upstream says
 * PMR_TRAIT_SYSTEM_MEMORY and the OS page size divides the pool's page
 * size. */
bool pmr_impl_os_direct(const pmr_mem_resource *upstream);

/* Whether what a pool over `upstream` gives for large requests is memory
 * of its own mapping that it never touches while lent out (its
 * PMR_TRAIT_MAPS_LARGE): upstream maps them itself (pmr_impl_os_direct) or
 * says so of its own blocks. */
bool pmr_impl_os_maps_large(const pmr_mem_resource *upstream);

/* Whether what r gives for a request of `bytes` bytes is memory mapped from
 * the OS that r does not touch while lent out: bytes >= PMR_IMPL_OS_BIG_MIN
 * and r says PMR_TRAIT_MAPS_LARGE. */
bool pmr_impl_os_backed(const pmr_mem_resource *r, size_t bytes);

/* `bytes` of zeroed memory aligned to `alignment` (a power of two), for a
 * pool with pmr_impl_os_direct; NULL with errno ENOMEM when the OS refuses.
 * errno untouched on success. */
void *pmr_impl_os_map(size_t bytes, size_t alignment);

/* Like pmr_impl_os_map, for address space most of which may never be
 * touched (an oversize block's room to grow in place): no commit charge
 * for it until it is (MAP_NORESERVE, where the OS has it). */
void *pmr_impl_os_reserve(size_t bytes, size_t alignment);

/* Unmaps what pmr_impl_os_map or pmr_impl_os_reserve(bytes, ...) returned. */
void pmr_impl_os_unmap(void *p, size_t bytes);

/* Moves the pages of [from, from + len) to [to, to + len) (page-aligned,
 * len a multiple of the OS page, both mapped and apart), resident ones with
 * their contents and no page fault, replacing what was mapped at `to`.
 * [from, from + len) is unmapped after, moved or not; `to` stays mapped.
 * False when some pages could not be moved (not Linux, or the kernel
 * refused): those at `to` are then as they were, or zero pages. errno
 * untouched. */
bool pmr_impl_os_move(void *from, void *to, size_t len);

/* Gives the OS the physical memory of the whole OS pages inside
 * [p, p + bytes); they read as zeros when touched again. errno untouched. */
void pmr_impl_os_decommit(void *p, size_t bytes);

/* Tells LeakSanitizer (ASan builds) that [p, p + bytes), mapped here, is
 * (add) or is no longer a region to scan for pointers; nothing otherwise. */
void pmr_impl_os_lsan_root(void *p, size_t bytes, bool add);

/* The OS page size (4096 where it cannot be asked). */
size_t pmr_impl_os_page_size(void);

/* Fills buf with n random bytes from the OS (getrandom, where there is
 * one), without allocating; false when it cannot (errno untouched). */
bool pmr_impl_os_random(void *buf, size_t n);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PMR_IMPL_OS_MEM_H */
