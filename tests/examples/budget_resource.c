#include <errno.h>
#include "mem_resource/pmr_mem_resource.h"

/* Forwards to an upstream resource, but never has more than `limit` bytes out.
 */
typedef struct {
  pmr_mem_resource base; /* first member: this is what makes it a resource */
  pmr_mem_resource *upstream;
  size_t limit, used;
} budget_resource;

static void *budget_allocate(pmr_mem_resource *self, size_t bytes,
                             size_t align) {
  budget_resource *b = (budget_resource *)self;
  if (bytes > b->limit - b->used) {
    errno = ENOMEM;
    return NULL;
  }
  void *p = pmr_allocate(b->upstream, bytes, align);
  if (p != NULL) b->used += bytes;
  return p;
}

static void budget_deallocate(pmr_mem_resource *self, void *p, size_t bytes,
                              size_t align) {
  budget_resource *b = (budget_resource *)self;
  pmr_deallocate(b->upstream, p, bytes, align);
  b->used -= bytes;
}

static const pmr_mem_resource_ops budget_ops = {
    .allocate = budget_allocate, .deallocate = budget_deallocate};

void budget_init(budget_resource *b, pmr_mem_resource *upstream, size_t limit) {
  b->base.ops = &budget_ops;
  b->upstream =
      pmr_resource_or_default(upstream); /* NULL = the default resource */
  b->limit = limit;
  b->used = 0;
}
