/* PRIVATE: the pools' platform layer: memory straight from the OS.
 *
 * A pool whose upstream is the malloc resource maps its segments, and its
 * oversize blocks of at least PMR_IMPL_OS_BIG_MIN bytes, itself, so that it
 * can give the OS back the memory of pages that stay free (decommit: the
 * address range stays mapped and reads as zeros when touched again). A pool
 * over such a pool (pmr_impl_os_backed) decommits its free pages as well.
 * Memory from any other upstream is never decommitted: the pool cannot know
 * what it is (a buffer registered with a device, a locked region, a file).
 *
 * On a platform without mmap pmr_impl_os_direct is false and decommit does
 * nothing. */
#ifndef PMR_IMPL_OS_MEM_H
#define PMR_IMPL_OS_MEM_H

#include <stdbool.h>
#include <stddef.h>

#include "mem_resource/pmr_mem_resource.h"

/* Oversize blocks from this size on are mapped (malloc's classic mmap
 * threshold): malloc would keep the holes they leave in its heap. */
#define PMR_IMPL_OS_BIG_MIN ((size_t)128 << 10)

/* Whether a pool over `upstream` maps its memory itself: upstream is the
 * malloc resource and the OS page size divides the pool's page size. */
bool pmr_impl_os_direct(const pmr_mem_resource *upstream);

/* A kind of pool resource (its ops) whose oversize blocks of at least
 * PMR_IMPL_OS_BIG_MIN bytes are mappings from the OS when its upstream is
 * the malloc resource (or such a pool): the pools and the thread cache. A
 * pool over one of them may give the OS the memory of its free pages too:
 * that memory is the pool's to use, and the pool under it never reads
 * it while it is lent out (its own bookkeeping lies past the block). */
typedef struct pmr_impl_pool_kind {
  unsigned slot; /* PMR_IMPL_KIND_... */
  const pmr_mem_resource_ops *ops;
  pmr_mem_resource *(*upstream)(const pmr_mem_resource *r); /* r's */
} pmr_impl_pool_kind;

enum {
  PMR_IMPL_KIND_UNSYNC_POOL,
  PMR_IMPL_KIND_HEAPS, /* synchronized_pool and thread_cache */
  PMR_IMPL_KINDS
};

/* Records kind k (static, one per pool type) in its slot: one atomic store,
 * idempotent, thread-safe, with no window a fork could leave half done. A
 * pool's init calls it, so an instance is known by the time another
 * resource takes it as upstream. */
void pmr_impl_os_register_pool(const pmr_impl_pool_kind *k);

/* Whether r is a registered kind of pool (whatever its upstream). */
bool pmr_impl_os_is_pool(const pmr_mem_resource *r);

/* Whether what r gives for a request of `bytes` bytes is memory mapped from
 * the OS that r does not touch while lent out: r is a registered kind of
 * pool over the malloc resource (or, in turn, over such a pool), and
 * bytes >= PMR_IMPL_OS_BIG_MIN. */
bool pmr_impl_os_backed(const pmr_mem_resource *r, size_t bytes);

/* `bytes` of zeroed memory aligned to `alignment` (a power of two), for a
 * pool with pmr_impl_os_direct; NULL with errno ENOMEM when the OS refuses.
 * errno untouched on success. */
void *pmr_impl_os_map(size_t bytes, size_t alignment);

/* Unmaps what pmr_impl_os_map(bytes, ...) returned. */
void pmr_impl_os_unmap(void *p, size_t bytes);

/* Gives the OS the physical memory of the whole OS pages inside
 * [p, p + bytes); they read as zeros when touched again. errno untouched. */
void pmr_impl_os_decommit(void *p, size_t bytes);

/* The OS page size (4096 where it cannot be asked). */
size_t pmr_impl_os_page_size(void);

#endif /* PMR_IMPL_OS_MEM_H */
