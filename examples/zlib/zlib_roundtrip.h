/* zlib with its memory from a pmr-c resource: zalloc/zfree through a
 * pmr_malloc_adapter (zfree gets no size, so the adapter keeps it). */
#ifndef PMR_EXAMPLES_ZLIB_ZLIB_ROUNDTRIP_H
#define PMR_EXAMPLES_ZLIB_ZLIB_ROUNDTRIP_H

#include <stddef.h>

#include "mem_resource/pmr_mem_resource.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Compresses data[0..n) with deflate (level 9) and decompresses it again,
 * every zlib allocation served by `resource`. Returns the compressed size,
 * or 0 when zlib failed (out of memory included) or the round trip did not
 * give back exactly the input. Every stream is ended before it returns. */
size_t zlib_roundtrip(pmr_mem_resource *resource, const unsigned char *data,
                      size_t n);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PMR_EXAMPLES_ZLIB_ZLIB_ROUNDTRIP_H */
