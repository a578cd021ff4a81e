/* Registries of live instances and their fork handling (see
 * live_registry.h). */
#include "resources/internal/live_registry.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "resources/internal/fork_guard.h"
#include "resources/internal/meta_mem.h"

/* The registries whose instances hold locks: fork's client takes `guarded`
 * first, then each registry's lock, then each instance's locks. */
static pthread_mutex_t guarded = PTHREAD_MUTEX_INITIALIZER;
static pmr_impl_live_registry *first_guarded; /* guarded */

bool pmr_impl_live_has(pmr_impl_live_registry *r, const void *instance) {
  pthread_mutex_lock(&r->lock);
  const pmr_impl_live_node *n = r->head;
  while (n != NULL && n->instance != instance) n = n->next;
  pthread_mutex_unlock(&r->lock);
  return n != NULL;
}

void pmr_impl_live_report_init(const pmr_impl_live_registry *r,
                               const void *instance) {
  pmr_report_misuse(
      "%s %p: initialised again while live (not destroyed); destroying it "
      "first",
      r->type_name, instance);
}

/* ---- destroyed instances ------------------------------------------------- */

void *pmr_impl_destroyed_allocate(const char *type_name, pmr_mem_resource *self,
                                  size_t bytes, size_t alignment) {
#ifdef PMR_DEBUG
  pmr_report_misuse(
      "%s %p: allocate(%zu bytes, alignment %zu) after destroy; "
      "failed",
      type_name, (void *)self, bytes, alignment);
#else
  (void)type_name;
  (void)self;
  (void)bytes;
  (void)alignment;
#endif
  errno = EINVAL;
  return NULL;
}

void pmr_impl_destroyed_deallocate(const char *type_name,
                                   pmr_mem_resource *self, void *p,
                                   size_t bytes, size_t alignment) {
#ifdef PMR_DEBUG
  pmr_report_misuse(
      "%s %p: deallocate(%p, %zu bytes, alignment %zu) after "
      "destroy; ignored",
      type_name, (void *)self, p, bytes, alignment);
#else
  (void)type_name;
  (void)self;
  (void)p;
  (void)bytes;
  (void)alignment;
#endif
}

bool pmr_impl_destroyed_try_resize(const char *type_name,
                                   pmr_mem_resource *self, void *p,
                                   size_t old_bytes, size_t new_bytes,
                                   size_t alignment) {
#ifdef PMR_DEBUG
  pmr_report_misuse(
      "%s %p: try_resize(%p, %zu to %zu bytes, alignment %zu) "
      "after destroy; refused",
      type_name, (void *)self, p, old_bytes, new_bytes, alignment);
#else
  (void)type_name;
  (void)self;
  (void)p;
  (void)old_bytes;
  (void)new_bytes;
  (void)alignment;
#endif
  return false;
}

/* ---- fork ------------------------------------------------------------------
 */

static bool take(pmr_impl_live_lock l) {
  return l.spin != NULL ? pmr_impl_fork_spin_take(l.spin)
                        : pmr_impl_fork_mutex_take(l.mutex);
}

static void give(pmr_impl_live_lock l) {
  if (l.spin != NULL)
    pmr_impl_spin_unlock(l.spin);
  else
    pthread_mutex_unlock(l.mutex);
}

/* Releases the first n locks of instance (all: SIZE_MAX), last first. */
static void give_first(const pmr_impl_live_registry *r, void *instance,
                       size_t n) {
  pmr_impl_live_lock l;
  if (n == SIZE_MAX) {
    n = 0;
    while (r->lock_at(instance, n, &l)) ++n;
  }
  while (n > 0) {
    r->lock_at(instance, --n, &l);
    give(l);
  }
}

/* Releases every lock of the instances listed before `end`, and r's lock. */
static void give_registry(pmr_impl_live_registry *r,
                          const pmr_impl_live_node *end) {
  for (pmr_impl_live_node *n = r->head; n != end; n = n->next)
    give_first(r, n->instance, SIZE_MAX);
  pthread_mutex_unlock(&r->lock);
}

static bool take_registry(pmr_impl_live_registry *r) {
  if (!pmr_impl_fork_mutex_take(&r->lock)) return false;
  for (pmr_impl_live_node *n = r->head; n != NULL; n = n->next) {
    pmr_impl_live_lock l;
    for (size_t k = 0; r->lock_at(n->instance, k, &l); ++k) {
      if (take(l)) continue;
      give_first(r, n->instance, k);
      give_registry(r, n);
      return false;
    }
  }
  return true;
}

static void give_guarded(const pmr_impl_live_registry *end) {
  for (pmr_impl_live_registry *r = first_guarded; r != end; r = r->next_guard)
    give_registry(r, NULL);
  pthread_mutex_unlock(&guarded);
}

static bool fork_take_all(void) {
  if (!pmr_impl_fork_mutex_take(&guarded)) return false;
  for (pmr_impl_live_registry *r = first_guarded; r != NULL;
       r = r->next_guard) {
    if (take_registry(r)) continue;
    give_guarded(r);
    return false;
  }
  return true;
}

static void fork_release_all(void) { give_guarded(NULL); }

static void fork_child(void) {
  for (pmr_impl_live_registry *r = first_guarded; r != NULL;
       r = r->next_guard) {
    for (pmr_impl_live_node *n = r->head; n != NULL; n = n->next) {
      pmr_impl_live_lock l;
      for (size_t k = 0; r->lock_at(n->instance, k, &l); ++k) {
        if (l.spin != NULL)
          pmr_impl_spin_unlock(l.spin);
        else
          pthread_mutex_init(l.mutex, NULL);
      }
      if (r->child != NULL) r->child(n->instance);
    }
    pthread_mutex_init(&r->lock, NULL);
  }
  pthread_mutex_init(&guarded, NULL);
}

static const pmr_impl_fork_client fork_client = {
    .take_all = fork_take_all,
    .release_all = fork_release_all,
    .child = fork_child};

/* ---- listing ---------------------------------------------------------------
 */

/* Puts r on fork's list once (before r's lock is taken: fork's prepare takes
 * `guarded` first). */
static void guard(pmr_impl_live_registry *r) {
  pthread_mutex_lock(&guarded);
  if (!r->guarded) {
    r->next_guard = first_guarded;
    first_guarded = r;
    r->guarded = true;
  }
  pthread_mutex_unlock(&guarded);
  pmr_impl_fork_register(&fork_client);
}

void pmr_impl_live_add(pmr_impl_live_registry *r, pmr_impl_live_node *n,
                       void *instance) {
  if (r->lock_at != NULL) guard(r);
  pthread_mutex_lock(&r->lock);
  n->instance = instance;
  n->prev = NULL;
  n->next = r->head;
  if (r->head != NULL) r->head->prev = n;
  r->head = n;
  n->listed = true;
  pthread_mutex_unlock(&r->lock);
}

/* Under r's lock. */
static void unlink_node(pmr_impl_live_registry *r, pmr_impl_live_node *n) {
  if (n->prev != NULL)
    n->prev->next = n->next;
  else
    r->head = n->next;
  if (n->next != NULL) n->next->prev = n->prev;
  n->listed = false;
}

bool pmr_impl_live_remove(pmr_impl_live_registry *r, pmr_impl_live_node *n) {
  pthread_mutex_lock(&r->lock);
  bool was = n->listed;
  if (was) unlink_node(r, n);
  pthread_mutex_unlock(&r->lock);
  return was;
}

void pmr_impl_live_add_new(pmr_impl_live_registry *r, void *instance) {
  /* From libc, never from a resource: accounting is the same with checks
   * on or off. */
  int saved = errno; /* init succeeds either way */
  pmr_impl_live_node *n = (pmr_impl_live_node *)pmr_impl_meta_alloc(sizeof *n);
  if (n != NULL) pmr_impl_live_add(r, n, instance);
  errno = saved;
}

void pmr_impl_live_remove_new(pmr_impl_live_registry *r, void *instance) {
  pthread_mutex_lock(&r->lock);
  pmr_impl_live_node *n = r->head;
  while (n != NULL && n->instance != instance) n = n->next;
  if (n != NULL) unlink_node(r, n);
  pthread_mutex_unlock(&r->lock);
  pmr_impl_meta_free(n);
}
