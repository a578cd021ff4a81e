/* zlib with its memory from a pmr-c resource.
 *
 *   zlib_example FILE [RESOURCE]
 *
 * Compresses FILE and decompresses it again, zlib's zalloc/zfree served by
 * RESOURCE (malloc, monotonic, unsynchronized_pool, synchronized_pool,
 * thread_cache, statistics, debug; default unsynchronized_pool) through a
 * pmr_malloc_adapter. Exits 1 if the round trip failed or memory was left
 * behind. */
#include <stdio.h>
#include <stdlib.h>

#include "examples/example_resource.h"
#include "examples/zlib/zlib_roundtrip.h"

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s FILE [RESOURCE]\n", argv[0]);
    return 2;
  }
  const char *name = argc > 2 ? argv[2] : "unsynchronized_pool";
  FILE *f = fopen(argv[1], "rb");
  if (f == NULL) {
    perror(argv[1]);
    return 2;
  }
  size_t cap = 1 << 16, n = 0;
  unsigned char *data = malloc(cap);
  size_t got;
  while (data != NULL && (got = fread(data + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) {
      unsigned char *bigger = realloc(data, cap *= 2);
      if (bigger == NULL) free(data);
      data = bigger;
    }
  }
  fclose(f);
  if (data == NULL) return 2;

  example_resource e;
  if (!example_resource_open(&e, name)) {
    example_resource_print_unknown(stderr, name);
    free(data);
    return 2;
  }
  size_t packed = zlib_roundtrip(example_resource_get(&e), data, n);
  size_t left = example_resource_bytes_in_use(&e);
  printf(
      "%s: %zu bytes -> %zu compressed -> %zu again; zlib and buffers took %zu "
      "bytes in all, peak %zu, %zu in use at the end\n",
      name, n, packed, packed != 0 ? n : 0, example_resource_total_bytes(&e),
      example_resource_peak_bytes(&e), left);
  size_t leaks = example_resource_close(&e);
  free(data);
  return packed != 0 && left == 0 && leaks == 0 ? 0 : 1;
}
