/* PRIVATE: which of the drop-in's tagged blocks outside the engine's pages
 * are live (dropin.c).
 *
 * A tagged block in the engine's pages (a run) lies in memory the page map
 * says is the engine's, so its tag can be read. Any other (a mapping of its
 * own, a block of the engine's upstream) may be unmapped once freed: its
 * tag is read only when this registry says the block is live, so that a
 * second free, or a pointer that was never ours, is told without reading
 * memory. A freed block stays in the registry as freed (a tombstone) until
 * the address is handed out again or the table grows, so that a double
 * free is reported rather than ignored. Open addressing under a spin lock;
 * slots from the library's own records (meta_mem.h). */
#ifndef PMR_IMPL_MALLOC_TAG_REGISTRY_H
#define PMR_IMPL_MALLOC_TAG_REGISTRY_H

#include <stdbool.h>

enum {
  PMR_IMPL_TAGREG_NONE = 0, /* never recorded, or forgotten */
  PMR_IMPL_TAGREG_LIVE = 1,
  PMR_IMPL_TAGREG_FREED = 2 /* freed, the address not handed out since */
};

/* Records p as live; false (nothing recorded) when there is no memory for
 * the table. Thread-safe, fork-safe. */
bool pmr_impl_tag_registry_add(const void *p);

/* p's state; with `take`, a live p becomes freed in the same step, so that
 * of two threads freeing it at once one sees it live. */
int pmr_impl_tag_registry_state(const void *p, bool take);

#endif /* PMR_IMPL_MALLOC_TAG_REGISTRY_H */
