#include "examples/zlib/zlib_roundtrip.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "mem_resource/pmr_malloc_adapter.h"

/* zlib's hooks: `opaque` is the adapter. items * size cannot overflow size_t
 * (two 32-bit uInt). */
static voidpf pmr_zalloc(voidpf opaque, uInt items, uInt size) {
  return pmr_malloc_adapter_malloc((pmr_malloc_adapter *)opaque,
                                   (size_t)items * size);
}

static void pmr_zfree(voidpf opaque, voidpf p) {
  pmr_malloc_adapter_free((pmr_malloc_adapter *)opaque, p);
}

size_t zlib_roundtrip(pmr_mem_resource *resource, const unsigned char *data,
                      size_t n) {
  pmr_malloc_adapter adapter;
  pmr_malloc_adapter_init(&adapter, resource);
  size_t bound = compressBound((uLong)n);
  /* The two buffers come from the same adapter as zlib's state. */
  unsigned char *packed = pmr_malloc_adapter_malloc(&adapter, bound);
  unsigned char *unpacked = pmr_malloc_adapter_malloc(&adapter, n + 1);
  size_t result = 0;
  if (packed == NULL || unpacked == NULL) goto out;

  z_stream d;
  memset(&d, 0, sizeof d);
  d.zalloc = pmr_zalloc;
  d.zfree = pmr_zfree;
  d.opaque = &adapter;
  if (deflateInit(&d, 9) != Z_OK) goto out;
  d.next_in = (Bytef *)data;
  d.avail_in = (uInt)n;
  d.next_out = packed;
  d.avail_out = (uInt)bound;
  int rc = deflate(&d, Z_FINISH);
  size_t packed_size = d.total_out;
  deflateEnd(&d);
  if (rc != Z_STREAM_END) goto out;

  z_stream i;
  memset(&i, 0, sizeof i);
  i.zalloc = pmr_zalloc;
  i.zfree = pmr_zfree;
  i.opaque = &adapter;
  if (inflateInit(&i) != Z_OK) goto out;
  i.next_in = packed;
  i.avail_in = (uInt)packed_size;
  i.next_out = unpacked;
  i.avail_out = (uInt)(n + 1);
  rc = inflate(&i, Z_FINISH);
  size_t unpacked_size = i.total_out;
  inflateEnd(&i);
  if (rc == Z_STREAM_END && unpacked_size == n &&
      memcmp(unpacked, data, n) == 0)
    result = packed_size;
out:
  pmr_malloc_adapter_free(&adapter, packed);
  pmr_malloc_adapter_free(&adapter, unpacked);
  return result;
}
