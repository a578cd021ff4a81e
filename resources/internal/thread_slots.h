/* PRIVATE: per-instance, per-thread objects found in one load.
 *
 * A thread-safe resource that keeps something per thread (the thread
 * cache's page heaps) registers each instance as an owner and gets a slot:
 * the smallest free small integer. Each thread has a table from slots to
 * its object for that owner. Slots below PMR_IMPL_DIRECT_SLOTS sit in an
 * initial-exec thread-local array (platform.h: one load at a fixed offset from
 * the thread pointer); the others in a map per thread, reached through
 * pmr_impl_slots_find. An entry without an object holds the stand-in
 * pmr_impl_slot_none, which the client formats once so that its fast paths
 * fail on it: the fast path needs no test for a missing object. Their
 * number of instances is not limited by pthread keys (one key in all).
 *
 * Lifetimes, all settled by one mutex (the registry's):
 *   - a thread's first pmr_impl_slots_get for an owner makes its object
 *     (ops->make);
 *   - when the thread exits, each of its objects goes back to its owner
 *     (ops->gone, vanished false), whatever the order of exit and of the
 *     owner's clear: whichever comes first takes the object;
 *   - pmr_impl_slots_clear (an instance's release or destroy) resets every
 *     thread's entry for the owner, so no thread reaches an object of a
 *     dead instance, then lets the owner free its objects (ops->cleared);
 *   - fork: before it, the registry mutex and every owner's locks are taken
 *     (ops->fork_take); in the child, the objects of the threads that do
 *     not exist there go back to their owners (ops->gone, vanished true)
 *     after ops->fork_child made the owner's locks free.
 * Not for C++ translation units (C11 atomics). */
#ifndef PMR_IMPL_THREAD_SLOTS_H
#define PMR_IMPL_THREAD_SLOTS_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "resources/internal/platform.h"

/* Slots that a thread's entry is found for in one load. */
#define PMR_IMPL_DIRECT_SLOTS 64
/* The stand-in's size: room for the client's object with no blocks. */
#define PMR_IMPL_SLOT_NONE_BYTES 4096

struct pmr_impl_slot_owner;

typedef struct pmr_impl_slot_ops {
  /* The calling thread's new object, or NULL (out of memory). */
  void *(*make)(struct pmr_impl_slot_owner *o);
  /* obj's thread exited, or (vanished) does not exist in fork's child. */
  void (*gone)(struct pmr_impl_slot_owner *o, void *obj, bool vanished);
  /* After every entry was reset: the owner frees its objects. */
  void (*cleared)(struct pmr_impl_slot_owner *o);
  /* Before fork: takes every lock of the owner (pmr_impl_fork_spin_take);
   * false, with nothing held, when one stays busy. */
  bool (*fork_take)(struct pmr_impl_slot_owner *o);
  /* After fork, in the parent: releases them. */
  void (*fork_release)(struct pmr_impl_slot_owner *o);
  /* After fork, in the child, before any gone: makes them free. */
  void (*fork_child)(struct pmr_impl_slot_owner *o);
} pmr_impl_slot_ops;

typedef struct pmr_impl_slot_owner {
  const pmr_impl_slot_ops *ops;
  size_t slot;
  /* Where the fast path finds the calling thread's entry: its offset from
   * the thread pointer (PMR_IMPL_TLS_FS), else its index in
   * pmr_impl_tl_slots (PMR_IMPL_DIRECT_SLOTS for slots beyond, whose entry
   * always holds the stand-in). */
  uintptr_t fast_entry;
} pmr_impl_slot_owner;

/* Every entry without an object points here; formatted by the client
 * before its first registration (pmr_impl_slots_register). */
extern alignas(PMR_IMPL_CACHE_LINE) unsigned char pmr_impl_slot_none
    [PMR_IMPL_SLOT_NONE_BYTES];
extern PMR_IMPL_THREAD_LOCAL _Atomic(void *)
    pmr_impl_tl_slots[PMR_IMPL_DIRECT_SLOTS + 1];

/* The calling thread's object for o, or pmr_impl_slot_none when it has none
 * (or o's slot is beyond the direct ones): one or two loads. */
static inline void *pmr_impl_slots_mine(const pmr_impl_slot_owner *o) {
#if PMR_IMPL_TLS_FS
  return pmr_impl_tls_load(o->fast_entry);
#else
  return atomic_load_explicit(&pmr_impl_tl_slots[o->fast_entry],
                              memory_order_relaxed);
#endif
}

/* Gives o a slot and registers the fork handlers. format (NULL: none) runs
 * once, under the registry mutex, before the first slot is handed out: it
 * sets up pmr_impl_slot_none. False when out of memory. */
bool pmr_impl_slots_register(pmr_impl_slot_owner *o, void (*format)(void));

/* Resets every thread's entry for o, then calls o->ops->cleared; with
 * unregister, o's slot becomes free. Not concurrently with any use of o
 * but threads exiting. */
void pmr_impl_slots_clear(pmr_impl_slot_owner *o, bool unregister);

/* The calling thread's object for o, or NULL when it has none. */
void *pmr_impl_slots_find(const pmr_impl_slot_owner *o);

/* The calling thread's object for o, made (ops->make) if it has none; NULL
 * when out of memory. */
void *pmr_impl_slots_get(pmr_impl_slot_owner *o);

/* Whether o is a registered owner. Compares pointers only: o may be
 * uninitialised memory. */
bool pmr_impl_slots_is_live(const pmr_impl_slot_owner *o);

/* Runs fn(o, arg) under the registry mutex: no thread makes or gives back
 * an object of o meanwhile. */
void pmr_impl_slots_locked(pmr_impl_slot_owner *o,
                           void (*fn)(pmr_impl_slot_owner *o, void *arg),
                           void *arg);

#endif /* PMR_IMPL_THREAD_SLOTS_H */
