/* PRIVATE: the table of live blocks that debug builds (PMR_DEBUG) of the
 * pools keep, to name misuse: double free, wrong size or alignment, foreign
 * pointers. Uses libc malloc, never the resource's upstream, so upstream
 * accounting is the same in debug and release builds. Not thread-safe. */
#ifndef PMR_RESOURCES_DEBUG_TRACK_H
#define PMR_RESOURCES_DEBUG_TRACK_H

#include <stdbool.h>
#include <stddef.h>

typedef struct pmr__track pmr__track;

/* NULL when out of memory: checks are then skipped. */
pmr__track *pmr__track_new(void);
void pmr__track_delete(pmr__track *t);
void pmr__track_clear(pmr__track *t);
void pmr__track_add(pmr__track *t, const void *p, size_t bytes,
                    size_t alignment);

enum {
  PMR__TRACK_OK,
  PMR__TRACK_UNKNOWN,     /* never allocated (or forgotten) */
  PMR__TRACK_MISMATCH,    /* live, with other bytes or alignment */
  PMR__TRACK_DOUBLE_FREE  /* freed already */
};
/* Retires p if it is live with exactly these bytes and alignment (OK): with
 * keep_freed, p stays known as freed (so a second free is DOUBLE_FREE, for
 * pooled blocks whose addresses the pool keeps); otherwise it is forgotten.
 * On any other result the table is unchanged; MISMATCH reports the recorded
 * sizes in *bytes_out and *alignment_out. */
int pmr__track_remove(pmr__track *t, const void *p, size_t bytes,
                      size_t alignment, bool keep_freed, size_t *bytes_out,
                      size_t *alignment_out);

#endif /* PMR_RESOURCES_DEBUG_TRACK_H */
