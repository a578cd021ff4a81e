/* The pools' table of live blocks: a pmr_impl_ptr_table whose entries are
 * live (state 0) or, for pooled blocks, remembered as freed (state 1). */
#include "resources/internal/debug_track.h"

#include <stdlib.h>

#include "resources/internal/ptr_table.h"

enum { LIVE, FREED };

/* The table's first size: a pool's first chunks' blocks without growing. */
#define FIRST_SLOTS ((size_t)1024)

struct pmr_impl_track {
  pmr_impl_ptr_table table;
};

pmr_impl_track *pmr_impl_track_new(void) {
  pmr_impl_track *t = (pmr_impl_track *)calloc(1, sizeof *t);
  if (t == NULL) return NULL;
  if (!pmr_impl_ptr_table_reserve(&t->table, FIRST_SLOTS)) {
    free(t);
    return NULL;
  }
  return t;
}

void pmr_impl_track_delete(pmr_impl_track *t) {
  if (t == NULL) return;
  pmr_impl_ptr_table_free(&t->table);
  free(t);
}

void pmr_impl_track_clear(pmr_impl_track *t) {
  if (t == NULL) return;
  pmr_impl_ptr_table_clear(&t->table);
}

void pmr_impl_track_add(pmr_impl_track *t, const void *p, size_t bytes,
                        size_t alignment) {
  if (t == NULL) return;
  /* Out of memory: this block goes untracked. */
  if (!pmr_impl_ptr_table_reserve(&t->table, FIRST_SLOTS)) return;
  const pmr_impl_ptr_entry e = {(unsigned char *)p, 0, bytes, alignment, LIVE};
  pmr_impl_ptr_table_put(&t->table, &e);
}

int pmr_impl_track_remove(pmr_impl_track *t, const void *p, size_t bytes,
                          size_t alignment, bool keep_freed, size_t *bytes_out,
                          size_t *alignment_out) {
  if (t == NULL) return PMR_IMPL_TRACK_OK;
  pmr_impl_ptr_entry *e = pmr_impl_ptr_table_find(&t->table, p);
  if (e == NULL) return PMR_IMPL_TRACK_UNKNOWN;
  if (e->state == FREED) return PMR_IMPL_TRACK_DOUBLE_FREE;
  if ((bytes != PMR_IMPL_TRACK_ANY_BYTES && e->bytes != bytes) ||
      e->alignment != alignment) {
    *bytes_out = e->bytes;
    *alignment_out = e->alignment;
    return PMR_IMPL_TRACK_MISMATCH;
  }
  if (keep_freed)
    e->state = FREED;
  else
    pmr_impl_ptr_table_remove(&t->table, e);
  return PMR_IMPL_TRACK_OK;
}
