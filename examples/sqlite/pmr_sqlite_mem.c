/* SQLITE_CONFIG_MALLOC over a pmr_malloc_adapter (see pmr_sqlite_mem.h). */
#include "examples/sqlite/pmr_sqlite_mem.h"

#include <limits.h>
#include <sqlite3.h>

#include "mem_resource/pmr_malloc_adapter.h"

/* SQLite's hooks get no context pointer. */
static pmr_malloc_adapter adapter;

static void *x_malloc(int n) {
  return n < 0 ? NULL : pmr_malloc_adapter_malloc(&adapter, (size_t)n);
}

static void x_free(void *p) { pmr_malloc_adapter_free(&adapter, p); }

static void *x_realloc(void *p, int n) {
  return n < 0 ? NULL : pmr_malloc_adapter_realloc(&adapter, p, (size_t)n);
}

/* SQLite sizes only its own blocks, which are far below INT_MAX. */
static int x_size(void *p) { return (int)pmr_malloc_adapter_size(&adapter, p); }

/* What xMalloc(n) will give: SQLite then asks for all of it and counts it. */
static int x_roundup(int n) {
  if (n < 0) return n;
  size_t u = pmr_malloc_adapter_roundup(&adapter, (size_t)n);
  return u > INT_MAX ? n : (int)u;
}

static int x_init(void *app) {
  (void)app;
  return SQLITE_OK;
}

static void x_shutdown(void *app) { (void)app; }

static const sqlite3_mem_methods methods = {
    x_malloc, x_free, x_realloc, x_size, x_roundup, x_init, x_shutdown, NULL};

int pmr_sqlite_use(pmr_mem_resource *resource) {
  /* sqlite3_config refuses while SQLite is initialised, calling no hook;
   * once it accepts, no hook runs before sqlite3_initialize, so the adapter
   * changes after it, never under a running SQLite. */
  int rc = sqlite3_config(SQLITE_CONFIG_MALLOC, &methods);
  if (rc == SQLITE_OK) pmr_malloc_adapter_init(&adapter, resource);
  return rc;
}
