/* PRIVATE: the table of live blocks that debug builds (PMR_DEBUG) of the
 * pools keep, to name misuse: double free, wrong size or alignment, foreign
 * pointers. Uses libc malloc, never the resource's upstream, so upstream
 * accounting is the same in debug and release builds. Not thread-safe (the
 * _locked calls take the caller's lock). */
#ifndef PMR_IMPL_DEBUG_TRACK_H
#define PMR_IMPL_DEBUG_TRACK_H

#include <stdbool.h>
#include <stddef.h>

typedef struct pmr_impl_track pmr_impl_track;

/* NULL when out of memory: checks are then skipped. */
pmr_impl_track *pmr_impl_track_new(void);
void pmr_impl_track_delete(pmr_impl_track *t);
void pmr_impl_track_clear(pmr_impl_track *t);
void pmr_impl_track_add(pmr_impl_track *t, const void *p, size_t bytes,
                        size_t alignment);

enum {
  PMR_IMPL_TRACK_OK,
  PMR_IMPL_TRACK_UNKNOWN,    /* never allocated (or forgotten) */
  PMR_IMPL_TRACK_MISMATCH,   /* live, with other bytes or alignment */
  PMR_IMPL_TRACK_DOUBLE_FREE /* freed already */
};
/* bytes for a free that does not know them (pmr_deallocate_unsized): any
 * recorded size matches. */
#define PMR_IMPL_TRACK_ANY_BYTES SIZE_MAX
/* Retires p if it is live with exactly these bytes and alignment (OK): with
 * keep_freed, p stays known as freed (so a second free is DOUBLE_FREE, for
 * pooled blocks whose addresses the pool keeps); otherwise it is forgotten.
 * On any other result the table is unchanged; MISMATCH reports the recorded
 * sizes in *bytes_out and *alignment_out. */
int pmr_impl_track_remove(pmr_impl_track *t, const void *p, size_t bytes,
                          size_t alignment, bool keep_freed, size_t *bytes_out,
                          size_t *alignment_out);

/* Debug builds: checks a deallocation against the live-block table t and,
 * on misuse, reports it naming `type_name` and the resource. Returns true when
 * the deallocation may proceed. pooled: the block belongs to a size class. */
bool pmr_impl_track_check_free(struct pmr_impl_track *t, const char *type_name,
                               const void *resource, void *p, size_t bytes,
                               size_t alignment, bool pooled);
/* The same, and the table's record of a new block p, for a pool whose table
 * threads share: under lock (a pmr_impl_spin *, as for
 * pmr_impl_oversize_alloc), which a report also holds. */
bool pmr_impl_track_check_free_locked(struct pmr_impl_track *t, void *lock,
                                      const char *type_name,
                                      const void *resource, void *p,
                                      size_t bytes, size_t alignment,
                                      bool pooled);
void pmr_impl_track_add_locked(struct pmr_impl_track *t, void *lock,
                               const void *p, size_t bytes, size_t alignment);

#endif /* PMR_IMPL_DEBUG_TRACK_H */
