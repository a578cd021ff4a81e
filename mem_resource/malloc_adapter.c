/* malloc-shaped hooks over a resource: no header where the resource tells
 * a block's usable size from its address, else a size header in front of
 * the block (see pmr_malloc_adapter.h). */
#include "mem_resource/pmr_malloc_adapter.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#define HEADER PMR_MALLOC_ADAPTER_HEADER
#define ALIGN PMR_MAX_ALIGN

/* ---- header blocks: the payload's size in the HEADER bytes before it ---- */

static unsigned char *block_of(const void *p) {
  return (unsigned char *)p - HEADER;
}

static size_t size_of(const unsigned char *block) {
  size_t n;
  memcpy(&n, block, sizeof n);
  return n;
}

static void *publish(unsigned char *block, size_t bytes) {
  memcpy(block, &bytes, sizeof bytes);
  return block + HEADER;
}

static void *header_malloc(pmr_malloc_adapter *a, size_t bytes) {
  if (bytes > SIZE_MAX - HEADER - ALIGN) {
    errno = ENOMEM;
    return NULL;
  }
  unsigned char *block = pmr_allocate(a->resource, HEADER + bytes, ALIGN);
  return block == NULL ? NULL : publish(block, bytes);
}

/* ---- headerless blocks: the resource knows their usable size ----------- */

/* pmr_usable_size and pmr_good_size at ALIGN, straight to the op: the
 * resource is set, p is not NULL, ALIGN is a power of two. A malloc-shaped
 * client (SQLite) asks a block's size at every allocation and free. */

/* The usable size of p (not NULL) when it is a headerless block, else 0. */
static size_t headerless_size(const pmr_malloc_adapter *a, const void *p) {
  const pmr_mem_resource *r = a->resource;
  return r->ops->usable_size == NULL ? 0 : r->ops->usable_size(r, p, 0, ALIGN);
}

/* The usable size of a headerless block for `bytes`, or 0: then a header. */
static size_t good_size(const pmr_malloc_adapter *a, size_t bytes) {
  const pmr_mem_resource *r = a->resource;
  if (r->ops->usable_size == NULL || bytes > SIZE_MAX - ALIGN) return 0;
  return r->ops->usable_size(r, NULL, bytes, ALIGN);
}

bool pmr_malloc_adapter_init(pmr_malloc_adapter *a,
                             pmr_mem_resource *resource) {
  a->resource = pmr_resource_or_default(resource);
  return true;
}

pmr_mem_resource *pmr_malloc_adapter_resource(const pmr_malloc_adapter *a) {
  return a->resource;
}

void *pmr_malloc_adapter_malloc(pmr_malloc_adapter *a, size_t bytes) {
  size_t u = good_size(a, bytes);
  if (u != 0) return pmr_allocate(a->resource, u, ALIGN);
  return header_malloc(a, bytes);
}

void *pmr_malloc_adapter_calloc(pmr_malloc_adapter *a, size_t count,
                                size_t size) {
  if (size != 0 && count > SIZE_MAX / size) {
    errno = ENOMEM;
    return NULL;
  }
  void *p = pmr_malloc_adapter_malloc(a, count * size);
  if (p != NULL) memset(p, 0, count * size);
  return p;
}

void *pmr_malloc_adapter_realloc(pmr_malloc_adapter *a, void *p, size_t bytes) {
  if (p == NULL) return pmr_malloc_adapter_malloc(a, bytes);
  size_t old = headerless_size(a, p);
  size_t u = good_size(a, bytes);
  if (old != 0 && u != 0) /* headerless to headerless: in place if it can */
    return pmr_reallocate(a->resource, p, old, u, ALIGN);
  if (old == 0 && u == 0) { /* header to header */
    if (bytes > SIZE_MAX - HEADER - ALIGN) {
      errno = ENOMEM;
      return NULL;
    }
    unsigned char *block = block_of(p);
    unsigned char *moved = pmr_reallocate(
        a->resource, block, HEADER + size_of(block), HEADER + bytes, ALIGN);
    return moved == NULL ? NULL : publish(moved, bytes);
  }
  /* Across the two kinds: a new block, the old one freed. */
  void *q = pmr_malloc_adapter_malloc(a, bytes);
  if (q == NULL) return NULL;
  size_t keep = old != 0 ? old : size_of(block_of(p));
  memcpy(q, p, keep < bytes ? keep : bytes);
  pmr_malloc_adapter_free(a, p);
  return q;
}

void pmr_malloc_adapter_free(pmr_malloc_adapter *a, void *p) {
  if (p == NULL) return;
  size_t u = headerless_size(a, p);
  if (u != 0) {
    pmr_deallocate(a->resource, p, u, ALIGN);
    return;
  }
  unsigned char *block = block_of(p);
  pmr_deallocate(a->resource, block, HEADER + size_of(block), ALIGN);
}

size_t pmr_malloc_adapter_size(const pmr_malloc_adapter *a, const void *p) {
  if (p == NULL) return 0;
  size_t u = headerless_size(a, p);
  return u != 0 ? u : size_of(block_of(p));
}

size_t pmr_malloc_adapter_roundup(const pmr_malloc_adapter *a, size_t bytes) {
  size_t u = good_size(a, bytes);
  return u != 0 ? u : bytes;
}

size_t pmr_malloc_adapter_footprint(const pmr_malloc_adapter *a,
                                    const void *p) {
  if (p == NULL) return 0;
  size_t u = headerless_size(a, p);
  return u != 0 ? u : HEADER + size_of(block_of(p));
}
