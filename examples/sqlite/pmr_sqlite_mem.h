/* SQLite with its memory from a pmr-c resource: SQLITE_CONFIG_MALLOC hooks
 * (xMalloc, xFree, xRealloc, xSize, xRoundup) over a pmr_malloc_adapter.
 * Over the pools and the thread cache SQLite's blocks carry no header, and
 * xSize / xRoundup report the pool's class sizes (pmr_malloc_adapter.h).
 *
 *     pmr_sqlite_use(&pool.base);    before sqlite3_initialize
 *     sqlite3_initialize(); ... sqlite3_shutdown();
 *     pmr_synchronized_pool_destroy(&pool);
 *
 * Needs no SQLite header of its own callers: the hooks live in the .c. */
#ifndef PMR_EXAMPLES_SQLITE_PMR_SQLITE_MEM_H
#define PMR_EXAMPLES_SQLITE_PMR_SQLITE_MEM_H

#include "mem_resource/pmr_mem_resource.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Makes `resource` (NULL: the default resource now) SQLite's allocator for
 * the whole process. Call it while SQLite is not initialised: before the
 * first sqlite3_initialize (or any call that initialises it), or after
 * sqlite3_shutdown; every connection must be closed. SQLite's hooks take no
 * context, so the adapter is one static: one resource per process at a
 * time, and it must be thread-safe when SQLite is used from several
 * threads. The resource must outlive SQLite's use of it (until
 * sqlite3_shutdown, which gives back what SQLite still holds). Returns
 * sqlite3_config's result: SQLITE_OK (0), or SQLITE_MISUSE while SQLite is
 * initialised (nothing changed then). Not thread-safe. */
int pmr_sqlite_use(pmr_mem_resource *resource);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PMR_EXAMPLES_SQLITE_PMR_SQLITE_MEM_H */
