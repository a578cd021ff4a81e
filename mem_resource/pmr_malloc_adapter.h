/* pmr-c: malloc/calloc/realloc/free served from any memory resource.
 *
 * Many C libraries take allocator hooks shaped like malloc: free(p) and
 * realloc(p, n) get no size (zlib's zalloc/zfree, SQLite, OpenSSL, libcurl,
 * cJSON, yyjson), and some ask a block's size back (SQLite's xSize). A
 * pmr_mem_resource needs the size and alignment back on deallocate; the
 * adapter finds them in one of two ways, block by block:
 *   - headerless: when the resource tells a block's usable size from its
 *     address (pmr_good_size / pmr_usable_size answer non-zero): the
 *     unsynchronized pool, the synchronized pool and the thread cache for
 *     their pooled sizes (up to their largest_required_pool_block, 16 KiB
 *     by default), and a statistics resource over one of them. The block
 *     is allocated with its usable size (the pool's class size) and
 *     nothing is added to it; pmr_malloc_adapter_size returns that usable
 *     size, which may exceed the request, as malloc_usable_size does.
 *   - header: every other block (any request of a resource without the
 *     usable_size op, such as the malloc resource, the monotonic buffer or
 *     the debug resource; oversize requests of a pool) carries a header of
 *     PMR_MALLOC_ADAPTER_HEADER bytes (16 on x86-64) in front of the
 *     pointer handed out, holding the requested size, which
 *     pmr_malloc_adapter_size returns exactly.
 * Cost: a header block takes 16 bytes more from the resource and one more
 * load on free; every free, realloc and size asks the resource
 * (pmr_usable_size: for a pool, a lock-free map lookup and the page's
 * descriptor). Blocks are aligned to PMR_MAX_ALIGN, as malloc's are, on
 * both paths. realloc goes through pmr_reallocate: in place where the
 * resource can resize (a pool's block within its class, a monotonic
 * buffer's latest block), else allocate + copy + free. A library whose
 * hooks do pass the size (Lua's lua_Alloc, yyjson's realloc) is better
 * served by pmr_allocate / pmr_reallocate / pmr_deallocate directly.
 *
 * Thread safety: the adapter is immutable after init; each call is as
 * thread-safe as the resource (e.g. over a synchronized_pool or the malloc
 * resource, any thread may call any function).
 *
 *     pmr_malloc_adapter a;
 *     pmr_malloc_adapter_init(&a, &pool.base);
 *     char *s = pmr_malloc_adapter_malloc(&a, 100);
 *     s = pmr_malloc_adapter_realloc(&a, s, 200);   (check for NULL first)
 *     size_t n = pmr_malloc_adapter_size(&a, s);   (>= 200)
 *     pmr_malloc_adapter_free(&a, s);
 */
#ifndef PMR_MALLOC_ADAPTER_H
#define PMR_MALLOC_ADAPTER_H

#include <stdbool.h>
#include <stddef.h>

#include "pmr_mem_resource.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of bookkeeping in front of every header block (keeps
 * PMR_MAX_ALIGN). */
#define PMR_MALLOC_ADAPTER_HEADER PMR_MAX_ALIGN

typedef struct pmr_malloc_adapter {
  pmr_mem_resource *resource; /* where every block comes from */
} pmr_malloc_adapter;

/* Serves blocks from `resource` (NULL: the default resource at this call).
 * Allocates nothing; always returns true. The resource must outlive every
 * block obtained through the adapter. */
bool pmr_malloc_adapter_init(pmr_malloc_adapter *a, pmr_mem_resource *resource);

/* The resource the adapter serves from. */
pmr_mem_resource *pmr_malloc_adapter_resource(const pmr_malloc_adapter *a);

/* As malloc: `bytes` bytes aligned to PMR_MAX_ALIGN, or NULL (errno ENOMEM,
 * or what the resource set). bytes == 0 gives a distinct block that must be
 * freed. errno is unchanged on success. */
void *pmr_malloc_adapter_malloc(pmr_malloc_adapter *a, size_t bytes);

/* As calloc: count * size zeroed bytes, or NULL (errno ENOMEM also when
 * count * size overflows). */
void *pmr_malloc_adapter_calloc(pmr_malloc_adapter *a, size_t count,
                                size_t size);

/* As realloc: p resized to `bytes`, its first min(old, bytes) bytes kept.
 * p == NULL allocates. bytes == 0 does not free: it returns a 0-byte block
 * (possibly p itself) that must still be freed. Returns NULL on failure
 * (errno as pmr_malloc_adapter_malloc) and leaves p valid and unchanged. */
void *pmr_malloc_adapter_realloc(pmr_malloc_adapter *a, void *p, size_t bytes);

/* As free: gives p back to the resource. p must come from this adapter (or
 * from one over an equal resource) and not be freed yet. p == NULL does
 * nothing. Never fails. */
void pmr_malloc_adapter_free(pmr_malloc_adapter *a, void *p);

/* What malloc_usable_size would answer for p (from a, or an adapter over an
 * equal resource; not freed): a headerless block's usable size (at least
 * what it was last allocated or reallocated with), a header block's size
 * exactly as last allocated or reallocated. 0 for p == NULL. Never
 * fails. */
size_t pmr_malloc_adapter_size(const pmr_malloc_adapter *a, const void *p);

/* The size pmr_malloc_adapter_size will report for a block from
 * pmr_malloc_adapter_malloc(a, bytes): at least bytes (SQLite's xRoundup).
 * Allocates nothing; never fails. */
size_t pmr_malloc_adapter_roundup(const pmr_malloc_adapter *a, size_t bytes);

/* The bytes block p (from a, not freed; NULL: 0) takes from the resource:
 * its usable size when headerless, its size plus PMR_MALLOC_ADAPTER_HEADER
 * when it carries a header. What a statistics resource under the adapter
 * counts for it. */
size_t pmr_malloc_adapter_footprint(const pmr_malloc_adapter *a, const void *p);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PMR_MALLOC_ADAPTER_H */
