/* PRIVATE: fork() safety for the thread-safe resources.
 *
 * A resource type with locks registers one client (static storage) at its
 * first init. Before fork() the guard takes every lock of every client: a
 * child never inherits a lock held by a thread that does not exist in it,
 * nor a structure such a thread was changing. After fork() the parent
 * releases the locks; the child resets them and lets each client repair its
 * state (e.g. take over the caches of threads that are gone).
 *
 * Locks are taken without waiting for long: a thread may hold one client's
 * lock while it waits for another's (a pool calling its upstream with a
 * heap locked). When a lock stays busy, the guard releases everything it
 * took, yields and starts over, so such a thread gets what it waits for and
 * no order between clients is needed. */
#ifndef PMR_IMPL_FORK_GUARD_H
#define PMR_IMPL_FORK_GUARD_H

#include <pthread.h>
#include <stdbool.h>

#include "resources/internal/spin_lock.h"

typedef struct pmr_impl_fork_client {
  /* A client whose state is guarded by one spin lock sets only this:
   * `static const pmr_impl_fork_client c = {.spin = &lock};`. The guard
   * takes it before fork(), releases it in the parent and frees it in the
   * child; the three functions below are then unused. */
  pmr_impl_spin *spin;
  /* Takes every lock of the client's live instances, each with
   * pmr_impl_fork_spin_take / pmr_impl_fork_mutex_take; when one stays
   * busy, releases what it took and returns false. */
  bool (*take_all)(void);
  /* In the parent after fork(): releases what take_all took. */
  void (*release_all)(void);
  /* In the child after fork(), with only the calling thread left: makes the
   * locks take_all took free again and repairs the client's state. The
   * child handlers of every client run before any other code. */
  void (*child)(void);
} pmr_impl_fork_client;

/* Registers client c once (later calls with the same c do nothing).
 * Thread-safe. False when the OS refuses the handlers (pmr_impl_os_atfork:
 * out of memory): then fork()
 * is not guarded, and registration is tried again on the next call. */
bool pmr_impl_fork_register(const pmr_impl_fork_client *c);
/* The same for a client the others call into while they hold their own
 * locks (the library's records' memory): its locks are taken first and its
 * child handler runs first, so the other clients' child handlers may use
 * it. */
bool pmr_impl_fork_register_first(const pmr_impl_fork_client *c);

/* Takes l, yielding while it is busy for a bounded number of tries. */
bool pmr_impl_fork_spin_take(pmr_impl_spin *l);
bool pmr_impl_fork_mutex_take(pthread_mutex_t *m);

#endif /* PMR_IMPL_FORK_GUARD_H */
