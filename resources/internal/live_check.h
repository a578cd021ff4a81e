/* PRIVATE: debug builds (PMR_DEBUG) report init over a live instance for
 * the resources that keep no list of instances of their own (the
 * unsynchronized pool, the monotonic buffer, statistics). Each including
 * source file has its own set of live instances (addresses only: an
 * instance is never read through it), behind a mutex. Release builds: no
 * code. */
#ifndef PMR_IMPL_LIVE_CHECK_H
#define PMR_IMPL_LIVE_CHECK_H

#include <stdbool.h>

#ifdef PMR_DEBUG
#include <pthread.h>

#include "mem_resource/pmr_mem_resource.h"
#include "resources/internal/ptr_table.h"

static pthread_mutex_t pmr_impl_live_lock = PTHREAD_MUTEX_INITIALIZER;
static pmr_impl_ptr_table pmr_impl_live_set;

/* True (and reported, naming kind) when instance is live already. */
static bool pmr_impl_live_check_init(const void *instance, const char *kind) {
  pthread_mutex_lock(&pmr_impl_live_lock);
  bool live = pmr_impl_ptr_table_find(&pmr_impl_live_set, instance) != NULL;
  pthread_mutex_unlock(&pmr_impl_live_lock);
  if (live)
    pmr_report_misuse(
        "%s %p: initialised again while live (not destroyed); destroying it "
        "first",
        kind, instance);
  return live;
}

/* Records instance as live (a failed record only loses the check). */
static void pmr_impl_live_add(const void *instance) {
  pthread_mutex_lock(&pmr_impl_live_lock);
  if (pmr_impl_ptr_table_reserve(&pmr_impl_live_set, 16)) {
    pmr_impl_ptr_entry e;
    memset(&e, 0, sizeof e);
    e.p = (unsigned char *)(uintptr_t)instance;
    pmr_impl_ptr_table_put(&pmr_impl_live_set, &e);
  }
  pthread_mutex_unlock(&pmr_impl_live_lock);
}

static void pmr_impl_live_remove(const void *instance) {
  pthread_mutex_lock(&pmr_impl_live_lock);
  pmr_impl_ptr_entry *e = pmr_impl_ptr_table_find(&pmr_impl_live_set, instance);
  if (e != NULL) pmr_impl_ptr_table_remove(&pmr_impl_live_set, e);
  pthread_mutex_unlock(&pmr_impl_live_lock);
}
#else
static inline bool pmr_impl_live_check_init(const void *instance,
                                            const char *kind) {
  (void)instance;
  (void)kind;
  return false;
}
static inline void pmr_impl_live_add(const void *instance) { (void)instance; }
static inline void pmr_impl_live_remove(const void *instance) {
  (void)instance;
}
#endif

#endif /* PMR_IMPL_LIVE_CHECK_H */
