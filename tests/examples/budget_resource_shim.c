/* Builds mem_resource/README.md's "write your own resource" example exactly as
 * printed (budget_resource.c, which readme_example_test keeps identical to the
 * document) and gives the C++ test a handle on it. */
#include "tests/examples/budget_resource_shim.h"

#include <stdlib.h>

#include "tests/examples/budget_resource.c"

pmr_mem_resource *budget_example_new(pmr_mem_resource *upstream, size_t limit) {
  budget_resource *b = (budget_resource *)malloc(sizeof *b);
  if (b != NULL) budget_init(b, upstream, limit);
  return b != NULL ? &b->base : NULL;
}

size_t budget_example_used(const pmr_mem_resource *r) {
  return ((const budget_resource *)r)->used;
}

void budget_example_delete(pmr_mem_resource *r) { free(r); }
