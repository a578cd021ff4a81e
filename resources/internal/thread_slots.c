/* Per-instance, per-thread objects (see thread_slots.h). */
#include "resources/internal/thread_slots.h"

#include <pthread.h>
#include <stdlib.h>

#include "resources/internal/fork_guard.h"
#include "resources/internal/meta_mem.h"

alignas(PMR_IMPL_CACHE_LINE) unsigned char pmr_impl_slot_none
    [PMR_IMPL_SLOT_NONE_BYTES];

#define NONE ((void *)pmr_impl_slot_none)
#define N8 NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE
_Static_assert(PMR_IMPL_DIRECT_SLOTS == 64, "the initializer has 65 entries");
PMR_IMPL_THREAD_LOCAL _Atomic(void *)
    pmr_impl_tl_slots[PMR_IMPL_DIRECT_SLOTS + 1] = {N8, N8, N8, N8,  N8,
                                                    N8, N8, N8, NONE};
#undef N8

/* A thread's entries beyond the direct ones, and its place in the list of
 * every thread's record (for an owner's clear and for fork's child). */
typedef struct record {
  _Atomic(void *) *direct; /* the thread's pmr_impl_tl_slots */
  _Atomic(void *) *more;   /* slots PMR_IMPL_DIRECT_SLOTS and up */
  size_t more_cap;
  struct record *prev, *next;
  bool listed;
} record;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pmr_impl_slot_owner **owners; /* slot -> owner, NULL when free */
static size_t nslots;
static record *records; /* every listed record */
static pmr_impl_os_exit_key exit_key;
static atomic_bool key_ok;
static bool formatted;

static record empty_record; /* a thread's record before its first use */
static PMR_IMPL_THREAD_LOCAL record *tl_rec = &empty_record;

static void thread_exit(void *arg);

/* The library's one pthread key, made on first use; a failure (keys
 * exhausted) is retried on the next use rather than remembered. */
static bool have_key(void) {
  if (atomic_load_explicit(&key_ok, memory_order_acquire)) return true;
  pthread_mutex_lock(&lock);
  if (!atomic_load_explicit(&key_ok, memory_order_relaxed) &&
      pmr_impl_os_exit_key_create(&exit_key, thread_exit))
    atomic_store_explicit(&key_ok, true, memory_order_release);
  pthread_mutex_unlock(&lock);
  return atomic_load_explicit(&key_ok, memory_order_acquire);
}

/* rec's entry for slot, or NULL when its map does not reach it. Only the
 * calling thread's record, or any record under the lock. */
static _Atomic(void *) *entry_of(record *rec, size_t slot) {
  if (slot < PMR_IMPL_DIRECT_SLOTS)
    return rec->direct != NULL ? &rec->direct[slot] : NULL;
  slot -= PMR_IMPL_DIRECT_SLOTS;
  return slot < rec->more_cap ? &rec->more[slot] : NULL;
}

static void *object_at(_Atomic(void *) *e) {
  void *obj = e != NULL ? atomic_load_explicit(e, memory_order_relaxed) : NONE;
  return obj != NONE ? obj : NULL;
}

/* ---- fork -------------------------------------------------------------- */

static bool fork_take_all(void) {
  if (!pmr_impl_fork_mutex_take(&lock)) return false;
  for (size_t i = 0; i < nslots; ++i) {
    if (owners[i] == NULL || owners[i]->ops->fork_take(owners[i])) continue;
    while (i-- > 0)
      if (owners[i] != NULL) owners[i]->ops->fork_release(owners[i]);
    pthread_mutex_unlock(&lock);
    return false;
  }
  return true;
}

static void fork_release_all(void) {
  for (size_t i = 0; i < nslots; ++i)
    if (owners[i] != NULL) owners[i]->ops->fork_release(owners[i]);
  pthread_mutex_unlock(&lock);
}

static void unlist(record *rec) {
  if (!rec->listed) return;
  if (rec->prev != NULL)
    rec->prev->next = rec->next;
  else
    records = rec->next;
  if (rec->next != NULL) rec->next->prev = rec->prev;
  rec->listed = false;
}

/* The threads that vanished left their tables in memory the child still
 * maps: their objects go back to their owners. */
static void fork_child(void) {
  pthread_mutex_init(&lock, NULL);
  for (size_t i = 0; i < nslots; ++i)
    if (owners[i] != NULL) owners[i]->ops->fork_child(owners[i]);
  record *me = tl_rec;
  for (record *r = records, *next; r != NULL; r = next) {
    next = r->next;
    if (r == me) continue;
    for (size_t slot = 0; slot < nslots; ++slot) {
      void *obj = object_at(entry_of(r, slot));
      if (obj != NULL && owners[slot] != NULL)
        owners[slot]->ops->gone(owners[slot], obj, true);
    }
    unlist(r);
    pmr_impl_meta_free(r->more);
    pmr_impl_meta_free(r);
  }
}

static const pmr_impl_fork_client fork_client = {
    .take_all = fork_take_all,
    .release_all = fork_release_all,
    .child = fork_child};

/* ---- owners ------------------------------------------------------------- */

bool pmr_impl_slots_register(pmr_impl_slot_owner *o, void (*format)(void)) {
  pmr_impl_fork_register(&fork_client);
  pthread_mutex_lock(&lock);
  if (!formatted && format != NULL) {
    format();
    formatted = true;
  }
  /* The smallest free slot: slots stay direct while fewer than
   * PMR_IMPL_DIRECT_SLOTS instances live. */
  size_t slot = 0;
  while (slot < nslots && owners[slot] != NULL) ++slot;
  if (slot == nslots) {
    size_t cap = nslots != 0 ? nslots * 2 : 16;
    pmr_impl_slot_owner **grown =
        (pmr_impl_slot_owner **)pmr_impl_meta_alloc(cap * sizeof *grown);
    if (grown == NULL) {
      pthread_mutex_unlock(&lock);
      return false;
    }
    for (size_t i = 0; i < cap; ++i) grown[i] = i < nslots ? owners[i] : NULL;
    pmr_impl_meta_free(owners);
    owners = grown;
    nslots = cap;
  }
  owners[slot] = o;
  o->slot = slot;
  o->fast_entry = slot < PMR_IMPL_DIRECT_SLOTS ? slot : PMR_IMPL_DIRECT_SLOTS;
#if PMR_IMPL_TLS_FS
  o->fast_entry = pmr_impl_tls_offset(&pmr_impl_tl_slots[o->fast_entry]);
#endif
  pthread_mutex_unlock(&lock);
  return true;
}

bool pmr_impl_slots_is_live(const pmr_impl_slot_owner *o) {
  pthread_mutex_lock(&lock);
  bool live = false;
  for (size_t i = 0; i < nslots && !live; ++i) live = owners[i] == o;
  pthread_mutex_unlock(&lock);
  return live;
}

void pmr_impl_slots_clear(pmr_impl_slot_owner *o, bool unregister) {
  pthread_mutex_lock(&lock);
  for (record *r = records; r != NULL; r = r->next) {
    _Atomic(void *) *e = entry_of(r, o->slot);
    if (e != NULL) atomic_store_explicit(e, NONE, memory_order_relaxed);
  }
  o->ops->cleared(o);
  if (unregister && o->slot < nslots && owners[o->slot] == o)
    owners[o->slot] = NULL;
  pthread_mutex_unlock(&lock);
}

void *pmr_impl_slots_find(const pmr_impl_slot_owner *o) {
  return object_at(entry_of(tl_rec, o->slot));
}

void *pmr_impl_slots_get(pmr_impl_slot_owner *o) {
  record *rec = tl_rec;
  if (rec == &empty_record) {
    if (!have_key()) return NULL;
    rec = (record *)pmr_impl_meta_alloc(sizeof *rec);
    if (rec == NULL) return NULL;
    rec->direct = pmr_impl_tl_slots;
    /* The key's destructor gives the objects back when the thread exits. */
    if (!pmr_impl_os_exit_key_set(exit_key, rec)) {
      pmr_impl_meta_free(rec);
      return NULL;
    }
    tl_rec = rec;
  }
  pthread_mutex_lock(&lock);
  if (!rec->listed) {
    rec->listed = true;
    rec->prev = NULL;
    rec->next = records;
    if (records != NULL) records->prev = rec;
    records = rec;
  }
  _Atomic(void *) *e = entry_of(rec, o->slot);
  if (e == NULL) { /* grow the overflow map */
    size_t want = o->slot - PMR_IMPL_DIRECT_SLOTS + 1;
    size_t cap = rec->more_cap != 0 ? rec->more_cap : 8;
    while (cap < want) cap *= 2;
    _Atomic(void *) *more =
        (_Atomic(void *) *)pmr_impl_meta_alloc(cap * sizeof(_Atomic(void *)));
    if (more == NULL) {
      pthread_mutex_unlock(&lock);
      return NULL;
    }
    for (size_t i = 0; i < cap; ++i)
      atomic_init(&more[i], i < rec->more_cap
                                ? atomic_load_explicit(&rec->more[i],
                                                       memory_order_relaxed)
                                : NONE);
    pmr_impl_meta_free(rec->more);
    rec->more = more;
    rec->more_cap = cap;
    e = entry_of(rec, o->slot);
  }
  void *obj = object_at(e);
  if (obj == NULL && (obj = o->ops->make(o)) != NULL)
    atomic_store_explicit(e, obj, memory_order_relaxed);
  pthread_mutex_unlock(&lock);
  return obj;
}

void pmr_impl_slots_locked(pmr_impl_slot_owner *o,
                           void (*fn)(pmr_impl_slot_owner *o, void *arg),
                           void *arg) {
  pthread_mutex_lock(&lock);
  fn(o, arg);
  pthread_mutex_unlock(&lock);
}

/* The key's destructor: every object of the thread back to its owner. */
static void thread_exit(void *arg) {
  record *rec = (record *)arg;
  pthread_mutex_lock(&lock);
  for (size_t slot = 0; slot < nslots; ++slot) {
    void *obj = object_at(entry_of(rec, slot));
    if (obj != NULL && owners[slot] != NULL)
      owners[slot]->ops->gone(owners[slot], obj, false);
  }
  unlist(rec);
  pthread_mutex_unlock(&lock);
  pmr_impl_meta_free(rec->more);
  pmr_impl_meta_free(rec);
  tl_rec = &empty_record; /* a later use in this thread starts afresh */
  for (size_t i = 0; i < PMR_IMPL_DIRECT_SLOTS; ++i)
    atomic_store_explicit(&pmr_impl_tl_slots[i], NONE, memory_order_relaxed);
}
