/* The library's fork() handlers (see fork_guard.h). */
#include "resources/internal/fork_guard.h"

#include "resources/internal/platform.h"

#define MAX_CLIENTS 8
#define TRIES 2000 /* yields before a busy lock makes the guard start over */

static pthread_mutex_t guard = PTHREAD_MUTEX_INITIALIZER;
static const pmr_impl_fork_client *clients[MAX_CLIENTS];
static unsigned nclients; /* guard */
static bool handlers_set; /* guard */

bool pmr_impl_fork_spin_take(pmr_impl_spin *l) {
  for (unsigned i = 0; i < TRIES; ++i) {
    if (pmr_impl_spin_try_lock(l)) return true;
    pmr_impl_os_yield();
  }
  return false;
}

bool pmr_impl_fork_mutex_take(pthread_mutex_t *m) {
  for (unsigned i = 0; i < TRIES; ++i) {
    if (pthread_mutex_trylock(m) == 0) return true;
    pmr_impl_os_yield();
  }
  return false;
}

static bool take(const pmr_impl_fork_client *c) {
  return c->spin != NULL ? pmr_impl_fork_spin_take(c->spin) : c->take_all();
}

static void release(const pmr_impl_fork_client *c) {
  if (c->spin != NULL)
    pmr_impl_spin_unlock(c->spin);
  else
    c->release_all();
}

static void prepare(void) {
  pthread_mutex_lock(&guard);
  for (;;) {
    unsigned taken = 0;
    while (taken < nclients && take(clients[taken])) ++taken;
    if (taken == nclients) return;
    while (taken > 0) release(clients[--taken]);
    pmr_impl_os_yield();
  }
}

static void parent(void) {
  for (unsigned i = 0; i < nclients; ++i) release(clients[i]);
  pthread_mutex_unlock(&guard);
}

static void child(void) {
  for (unsigned i = 0; i < nclients; ++i) {
    if (clients[i]->spin != NULL)
      pmr_impl_spin_unlock(clients[i]->spin);
    else
      clients[i]->child();
  }
  pthread_mutex_init(&guard, NULL);
}

static bool add(const pmr_impl_fork_client *c, bool first) {
  pthread_mutex_lock(&guard);
  bool ok = true;
  if (!handlers_set)
    handlers_set = ok = pmr_impl_os_atfork(prepare, parent, child);
  if (ok) {
    unsigned i = 0;
    while (i < nclients && clients[i] != c) ++i;
    if (i == nclients && nclients < MAX_CLIENTS) {
      unsigned at = first ? 0 : nclients;
      for (unsigned k = nclients; k > at; --k) clients[k] = clients[k - 1];
      clients[at] = c;
      ++nclients;
    }
  }
  pthread_mutex_unlock(&guard);
  return ok;
}

bool pmr_impl_fork_register(const pmr_impl_fork_client *c) {
  return add(c, false);
}

bool pmr_impl_fork_register_first(const pmr_impl_fork_client *c) {
  return add(c, true);
}
