/* malloc-shaped hooks over a resource: a size header in front of each block
 * (see pmr_malloc_adapter.h). */
#include "mem_resource/pmr_malloc_adapter.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#define HEADER PMR_MALLOC_ADAPTER_HEADER

/* The header holds the payload's size in its first bytes; the block starts
 * HEADER bytes before the pointer handed out. */
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

bool pmr_malloc_adapter_init(pmr_malloc_adapter *a,
                             pmr_mem_resource *resource) {
  a->resource = pmr_resource_or_default(resource);
  return true;
}

pmr_mem_resource *pmr_malloc_adapter_resource(const pmr_malloc_adapter *a) {
  return a->resource;
}

void *pmr_malloc_adapter_malloc(pmr_malloc_adapter *a, size_t bytes) {
  if (bytes > SIZE_MAX - HEADER) {
    errno = ENOMEM;
    return NULL;
  }
  unsigned char *block = pmr_allocate(a->resource, HEADER + bytes, HEADER);
  return block == NULL ? NULL : publish(block, bytes);
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
  if (bytes > SIZE_MAX - HEADER) {
    errno = ENOMEM;
    return NULL;
  }
  unsigned char *block = block_of(p);
  size_t old = size_of(block);
  unsigned char *moved =
      pmr_reallocate(a->resource, block, HEADER + old, HEADER + bytes, HEADER);
  return moved == NULL ? NULL : publish(moved, bytes);
}

void pmr_malloc_adapter_free(pmr_malloc_adapter *a, void *p) {
  if (p == NULL) return;
  unsigned char *block = block_of(p);
  pmr_deallocate(a->resource, block, HEADER + size_of(block), HEADER);
}

size_t pmr_malloc_adapter_size(const void *p) { return size_of(block_of(p)); }
