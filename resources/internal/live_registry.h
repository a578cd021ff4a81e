/* PRIVATE: the live instances of one resource type, for the two things that
 * need them: telling init over a live instance from init over fresh memory
 * (reported through pmr_report_misuse), and, for a type whose instances
 * hold locks, fork() safety (fork_guard.h): before fork() every lock of
 * every listed instance is taken; after it the parent releases them and
 * the child makes them free again (spin locks unlocked, mutexes
 * re-initialised) and lets the type repair each instance.
 *
 * A type has one registry in static storage (PMR_IMPL_LIVE_REGISTRY) and
 * an instance one node, kept in the instance's state (never fails), or, for
 * the debug-only check of a type with no room in its state, allocated here
 * (pmr_impl_live_debug_*: a failed allocation only loses the check).
 * Instances are compared by address only: a node is never read through an
 * address that is not listed, so an instance may be uninitialised memory. */
#ifndef PMR_IMPL_LIVE_REGISTRY_H
#define PMR_IMPL_LIVE_REGISTRY_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "mem_resource/pmr_mem_resource.h"
#include "resources/internal/spin_lock.h"

/* One lock of an instance: a spin lock, or (spin == NULL) a mutex. */
typedef struct pmr_impl_live_lock {
  pmr_impl_spin *spin;
  pthread_mutex_t *mutex;
} pmr_impl_live_lock;

typedef struct pmr_impl_live_node {
  struct pmr_impl_live_node *prev, *next; /* registry's lock */
  void *instance;                         /* the address init was given */
  bool listed;                            /* registry's lock */
} pmr_impl_live_node;

typedef struct pmr_impl_live_registry {
  const char *type_name; /* names the type in reports: "synchronized_pool" */
  /* Lock k (0, 1, ...) of instance, in one fixed order; false past the
   * last. Asked for lock k only while locks 0 to k-1 are held, so what
   * lock 0 guards (e.g. the creation of more locks) may decide the rest.
   * NULL: the instances hold no lock and fork needs nothing of them. */
  bool (*lock_at)(void *instance, size_t k, pmr_impl_live_lock *out);
  /* In fork's child, once instance's locks are free again, with only the
   * calling thread left: repairs instance. NULL: nothing to repair. */
  void (*child)(void *instance);
  /* Guards the list. A client may hold it to keep fork() from taking its
   * instances' locks meanwhile (e.g. while it frees what they guard). */
  pthread_mutex_t lock;
  pmr_impl_live_node *head;                  /* lock */
  struct pmr_impl_live_registry *next_guard; /* fork's list (live_registry.c) */
  bool guarded;                              /* on fork's list */
} pmr_impl_live_registry;

#define PMR_IMPL_LIVE_REGISTRY(type_name, lock_at, child)                   \
  {                                                                         \
    (type_name), (lock_at), (child), PTHREAD_MUTEX_INITIALIZER, NULL, NULL, \
        false                                                               \
  }

/* True when instance is listed. */
bool pmr_impl_live_has(pmr_impl_live_registry *r, const void *instance);

/* Reports init over the live instance through pmr_report_misuse, naming
 * r's type name (the caller destroys it first). */
void pmr_impl_live_report_init(const pmr_impl_live_registry *r,
                               const void *instance);

/* Lists instance, with node n (unlisted, kept until
 * pmr_impl_live_remove). The first time for a registry with lock_at, puts
 * it under fork's guard. */
void pmr_impl_live_add(pmr_impl_live_registry *r, pmr_impl_live_node *n,
                       void *instance);

/* Unlists n; false when it was not listed. */
bool pmr_impl_live_remove(pmr_impl_live_registry *r, pmr_impl_live_node *n);

/* With an allocated node (see above): lists instance, which is not listed
 * (out of memory: it stays unlisted), and unlists it (not listed:
 * nothing). */
void pmr_impl_live_add_new(pmr_impl_live_registry *r, void *instance);
void pmr_impl_live_remove_new(pmr_impl_live_registry *r, void *instance);

/* The debug-only check, for types that keep no list in release builds:
 * with PMR_DEBUG, init reports and returns true when instance is live, add
 * and remove list and unlist it; without, no code. */
static inline bool pmr_impl_live_debug_init(pmr_impl_live_registry *r,
                                            void *instance) {
#ifdef PMR_DEBUG
  if (!pmr_impl_live_has(r, instance)) return false;
  pmr_impl_live_report_init(r, instance);
  return true;
#else
  (void)r;
  (void)instance;
  return false;
#endif
}

static inline void pmr_impl_live_debug_add(pmr_impl_live_registry *r,
                                           void *instance) {
#ifdef PMR_DEBUG
  pmr_impl_live_add_new(r, instance);
#else
  (void)r;
  (void)instance;
#endif
}

static inline void pmr_impl_live_debug_remove(pmr_impl_live_registry *r,
                                              void *instance) {
#ifdef PMR_DEBUG
  pmr_impl_live_remove_new(r, instance);
#else
  (void)r;
  (void)instance;
#endif
}

/* ---- Destroyed instances ---------------------------------------------
 * A resource's destroy points its ops at a table of these (init sets its own
 * again), so a use after destroy fails instead of taking memory nothing will
 * give back: allocate returns NULL with errno EINVAL, deallocate does
 * nothing (the memory went back to upstream with destroy), try_resize
 * returns false. Debug builds report each call through pmr_report_misuse,
 * naming type_name. The fast paths never test for destroy: only calls through
 * the ops, and slow paths that check the ops pointer, get here. */
void *pmr_impl_destroyed_allocate(const char *type_name, pmr_mem_resource *self,
                                  size_t bytes, size_t alignment);
void pmr_impl_destroyed_deallocate(const char *type_name,
                                   pmr_mem_resource *self, void *p,
                                   size_t bytes, size_t alignment);
bool pmr_impl_destroyed_try_resize(const char *type_name,
                                   pmr_mem_resource *self, void *p,
                                   size_t old_bytes, size_t new_bytes,
                                   size_t alignment);

/* Defines `static const pmr_mem_resource_ops name`, the table of a
 * destroyed instance of type_name (a string literal). */
#define PMR_IMPL_DESTROYED_OPS(name, type_name)                                \
  static void *name##_allocate(pmr_mem_resource *self, size_t bytes,           \
                               size_t alignment) {                             \
    return pmr_impl_destroyed_allocate(type_name, self, bytes, alignment);     \
  }                                                                            \
  static void name##_deallocate(pmr_mem_resource *self, void *p, size_t bytes, \
                                size_t alignment) {                            \
    pmr_impl_destroyed_deallocate(type_name, self, p, bytes, alignment);       \
  }                                                                            \
  static bool name##_try_resize(pmr_mem_resource *self, void *p,               \
                                size_t old_bytes, size_t new_bytes,            \
                                size_t alignment) {                            \
    return pmr_impl_destroyed_try_resize(type_name, self, p, old_bytes,        \
                                         new_bytes, alignment);                \
  }                                                                            \
  static const pmr_mem_resource_ops name = {                                   \
      .allocate = name##_allocate,                                             \
      .deallocate = name##_deallocate,                                         \
      .try_resize = name##_try_resize,                                         \
  }

#endif /* PMR_IMPL_LIVE_REGISTRY_H */
