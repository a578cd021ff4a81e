/* A program linked with the drop-in malloc (-lpmr_malloc, shared or the
 * archive) or run with it preloaded: checks that malloc, calloc, realloc
 * and free are pmr-c's and prints the drop-in's engine.
 *   dropin_hello        exits 0 when every check holds */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "malloc/pmr_dropin.h"

int main(void) {
  char *p = (char *)malloc(100);
  char *z = (char *)calloc(1000, 10);
  if (p == NULL || z == NULL) return 1;
  strcpy(p, "pmr-c"); /* before p is passed as const: gcc warns of it unset */
  if (!pmr_dropin_owns(p) || !pmr_dropin_owns(z)) {
    fprintf(stderr, "dropin_hello: malloc is not pmr-c's\n");
    return 1;
  }
  p = (char *)realloc(p, 100000);
  if (p == NULL || strcmp(p, "pmr-c") != 0 || !pmr_dropin_owns(p)) return 1;
  for (int i = 0; i < 10000; ++i)
    if (z[i] != 0) return 1;
  free(p);
  free(z);
  printf("drop-in malloc: engine %s\n", pmr_dropin_get_stats().engine);
  return 0;
}
