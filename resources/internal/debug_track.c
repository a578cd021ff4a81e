/* The pools' table of live blocks: a pmr_impl_ptr_table whose entries are
 * live (state 0) or, for pooled blocks, remembered as freed (state 1). */
#include "resources/internal/debug_track.h"

#include <stdlib.h>

#include "mem_resource/pmr_mem_resource.h"
#include "resources/internal/ptr_table.h"
#include "resources/internal/spin_lock.h"

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

/* ---- the pools' checks of a deallocation (debug_track.h) ---- */

bool pmr_impl_track_check_free(struct pmr_impl_track *t, const char *type_name,
                               const void *resource, void *p, size_t bytes,
                               size_t alignment, bool pooled) {
  size_t b = 0, a = 0;
  switch (pmr_impl_track_remove(t, p, bytes, alignment, pooled, &b, &a)) {
    case PMR_IMPL_TRACK_OK:
      return true;
    case PMR_IMPL_TRACK_DOUBLE_FREE:
      pmr_report_misuse(
          "%s %p: double free of %p (deallocate(%zu bytes, alignment %zu)); "
          "ignored",
          type_name, resource, p, bytes, alignment);
      return false;
    case PMR_IMPL_TRACK_MISMATCH:
      pmr_report_misuse(
          "%s %p: %p was allocated with %zu bytes, alignment %zu, but "
          "deallocated with %zu bytes, alignment %zu; ignored",
          type_name, resource, p, b, a, bytes, alignment);
      return false;
    default:
      pmr_report_misuse(
          "%s %p: deallocate(%p, %zu bytes, alignment %zu) of a pointer it "
          "never gave out; ignored",
          type_name, resource, p, bytes, alignment);
      return false;
  }
}

bool pmr_impl_track_check_free_locked(struct pmr_impl_track *t, void *lock,
                                      const char *type_name,
                                      const void *resource, void *p,
                                      size_t bytes, size_t alignment,
                                      bool pooled) {
  pmr_impl_spin_lock(lock);
  bool ok = pmr_impl_track_check_free(t, type_name, resource, p, bytes,
                                      alignment, pooled);
  pmr_impl_spin_unlock(lock);
  return ok;
}

void pmr_impl_track_add_locked(struct pmr_impl_track *t, void *lock,
                               const void *p, size_t bytes, size_t alignment) {
  pmr_impl_spin_lock(lock);
  pmr_impl_track_add(t, p, bytes, alignment);
  pmr_impl_spin_unlock(lock);
}
