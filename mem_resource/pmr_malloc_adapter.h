/* pmr-c: malloc/calloc/realloc/free served from any memory resource.
 *
 * Many C libraries take allocator hooks shaped like malloc: free(p) and
 * realloc(p, n) get no size (zlib's zalloc/zfree, SQLite, OpenSSL, libcurl,
 * cJSON, yyjson). A pmr_mem_resource needs the size and alignment back on
 * deallocate, so the adapter keeps them itself: each block carries a header
 * of PMR_MALLOC_ADAPTER_HEADER bytes (16 on x86-64) in front of the pointer
 * it hands out, holding the block's size.
 *
 * Cost, per block: the header (16 bytes) on top of what the resource adds for
 * size + 16 bytes; one extra load on free and realloc. Blocks are aligned to
 * PMR_MAX_ALIGN, as malloc's are. realloc goes through pmr_reallocate: in
 * place where the resource can resize (a monotonic buffer's latest block),
 * else allocate + copy + free. A library whose hooks do pass the size
 * (Lua's lua_Alloc, yyjson's realloc) is better served by pmr_allocate /
 * pmr_reallocate / pmr_deallocate directly, without the header.
 *
 * Thread safety: the adapter is immutable after init; each call is as
 * thread-safe as the resource (e.g. over a synchronized_pool or the malloc
 * resource, any thread may call any function).
 *
 *     pmr_malloc_adapter a;
 *     pmr_malloc_adapter_init(&a, &pool.base);
 *     char *s = pmr_malloc_adapter_malloc(&a, 100);
 *     s = pmr_malloc_adapter_realloc(&a, s, 200);   (check for NULL first)
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

/* Bytes of bookkeeping in front of every block (keeps PMR_MAX_ALIGN). */
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

/* The size p was last allocated or reallocated with (p != NULL, from an
 * adapter, not freed): what malloc_usable_size would answer, exactly. */
size_t pmr_malloc_adapter_size(const void *p);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PMR_MALLOC_ADAPTER_H */
