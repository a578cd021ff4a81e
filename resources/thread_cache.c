/* pmr_thread_cache: per-thread, per-instance caches over a central pool.
 *
 * Who touches what:
 *   - a cache (tc_cache) belongs to one thread and one instance; only that
 *     thread reads or writes its lists, except destroy/release (which the
 *     contract forbids to overlap with use of the instance) and the thread's
 *     exit, which both run under the registry mutex;
 *   - the central pool is shared: a sharded page heap (sharded_heap.h: a
 *     spin lock per shard, one for the page source) and SHARDS tc_shards,
 *     each with one spin lock per class for its stacks of full and empty
 *     magazines and of parked chains. Two stack locks are taken lower shard
 *     first; under a stack lock, page heap locks are only tried (try_lock),
 *     never waited for;
 *   - each thread has a record (tc_record) mapping instance slots to its
 *     caches. Slots are small integers handed out by the registry and reused
 *     after destroy; destroy clears the entries of every thread under the
 *     registry mutex, so a thread never sees a cache of a dead instance.
 *
 * The race between a thread's exit and an instance's destroy is settled by
 * the registry mutex: whichever runs first takes the cache; the other no
 * longer finds it (exit flushes the cache into the live instance; destroy
 * frees it and clears the thread's entry). */
#include "resources/pmr_thread_cache.h"

#include <errno.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "resources/internal/debug_track.h"
#include "resources/internal/fork_guard.h"
#include "resources/internal/mem_check.h"
#include "resources/internal/os_mem.h"
#include "resources/internal/pool_core.h"
#include "resources/internal/sharded_heap.h"
#include "resources/internal/spin_lock.h"
#include "resources/internal/tls.h"

#define DIRECT_SLOTS 64 /* slots a record maps without indirection */
/* A magazine is a block of the central pool's pages: cap + 1 pointers and
 * a header within the largest pooled block. */
#define MAX_LIMIT 2040u
#define FULL_LIMIT 8  /* full magazines a shard keeps per class */
#define EMPTY_LIMIT 4 /* and empty ones */
#define SHARDS 8      /* shards of the central pool */
/* The shards are emptied before an oversize block is mapped at most this
 * often: a program mapping large blocks at a high rate would otherwise
 * empty them each time, and its threads would refill from the pages. */
#define RECLAIM_INTERVAL_NS ((uint64_t)10000000u)

/* A magazine (Bonwick's design, as in Solaris' kmem and vmem): an array of
 * free blocks of one class. Freeing stores a pointer into the array and
 * allocating takes one out, so the allocator never writes into a free block:
 * a block freed cold stays untouched until its next owner writes it (with
 * linked lists, every free wrote a link into the block, and workload B's
 * free phase ran at half the speed). A thread holds up to two magazines per
 * class; the central pool keeps full and empty ones in each shard.
 * Magazines are blocks of the central pool's pages: cap + 1 pointers each.
 * slot[0] is always NULL, so the thread's fast path finds an empty magazine
 * by the block it pops, without a count. */
typedef struct tc_mag {
  struct tc_mag *next; /* in a shard's stack */
  size_t count;        /* blocks held, while in a shard's stack */
  void *slot[];        /* slot[0]: NULL; blocks in slot[1 .. count] */
} tc_mag;

/* A thread's view of one size class: 40 bytes. Allocate takes from
 * `loaded`, deallocate puts into it; every block in `prev` was freed
 * before every block in `loaded`. An empty `loaded` swaps with a
 * non-empty `prev`; a full one spills its oldest blocks into `prev` while
 * `prev` has room (spill_loaded); only when both are
 * empty (or both full) does the thread go to the central pool, which
 * exchanges a whole magazine. So between two trips lie at least cap
 * operations, and a thread parks at most 2 * cap blocks per class.
 * The fast paths read and write only `top` (and compare it with `last`):
 * allocate pops *top, which is NULL when loaded is empty (its slot[0]) or
 * missing (no_block); deallocate stores above top unless top == last. */
/* The classes a thread caches: those the pages serve (largest is at most
 * PMR_IMPL_HEAP_LARGEST, whose class is the last of them). */
#define TC_CLASSES PMR_IMPL_HEAP_CLASSES
_Static_assert(PMR_IMPL_HEAP_LARGEST == 8192 && TC_CLASSES == 36,
               "the last class the pages serve is 8192 (index 35)");

typedef struct tc_class {
  /* The top block of loaded: &loaded->slot[count] (&no_block without a
   * magazine). Atomic only so stats may read it: the owner loads and stores
   * it, never a read-modify-write. */
  _Atomic(void **) top;
  void **last;                 /* &loaded->slot[cap] (&no_block) */
  _Atomic(tc_mag *) loaded;    /* NULL: none yet (or out of memory) */
  tc_mag *prev;                /* the other magazine, or NULL */
  _Atomic uint16_t prev_count; /* blocks in prev (atomic: stats read it) */
  uint16_t cap;                /* blocks per magazine of this class */
  uint32_t block;              /* block size */
} tc_class;

struct tc_state;
struct tc_record;

typedef struct tc_cache {
  tc_class cls[TC_CLASSES];
  /* Magazines this thread took from / gave to the central pool (atomic only
   * so stats may read them; the owner never does a read-modify-write). */
  atomic_size_t refills, flushes;
  unsigned home; /* the central shard this thread uses */
  struct tc_state *owner;
  struct tc_record *rec;
  size_t slot;
  struct tc_cache *prev, *next; /* the owner's list of caches */
} tc_cache;

typedef struct tc_record {
  _Atomic(tc_cache *) *direct; /* the thread's tl_direct (TLS) */
  _Atomic(tc_cache *) *more;   /* slots DIRECT_SLOTS and up */
  size_t more_cap;
  /* Every record of a living thread, for fork's child (registry mutex). */
  struct tc_record *prev_rec, *next_rec;
  bool listed;
} tc_record;

/* One shard of the central pool: for each class, under its own lock, a
 * stack of full (or partly full) magazines, a stack of empty ones, and a
 * run of a chunk to carve. Cache-line aligned, so threads with different
 * homes share no line. */
typedef struct tc_shard {
  alignas(PMR_IMPL_CACHE_LINE) struct tc_stack {
    pmr_impl_spin lock;
    /* Written under lock; read without it only as hints. */
    _Atomic(tc_mag *) full;
    _Atomic(tc_mag *) empty;
    _Atomic(void *) chains; /* packed chains (see pack) */
    uint32_t nfull, nempty; /* under lock */
  } cls[TC_CLASSES];
} tc_shard;

typedef struct tc_state {
  /* What the fast paths read: */
  size_t small_limit; /* min(largest, 1024): the fast path's sizes */
  /* Where the calling thread's cache pointer for this instance is:
   * tl_direct[fast_slot]'s offset from the thread pointer (PMR_IMPL_TLS_FS),
   * else fast_slot itself (slot, or DIRECT_SLOTS when beyond). */
  uintptr_t fast_entry;
  /* The class's byte offset in a tc_cache / 8, by fast_index() (sizes up
   * to small_limit only): one load and an lea find the thread's class. */
  uint8_t small_off[PMR_IMPL_POOL_TABLE_LIMIT];
  size_t slot;
  uint16_t cap[TC_CLASSES]; /* blocks per magazine, by class */
  size_t largest;           /* largest pooled size */
  /* The central pool's pages: blocks and magazines come from here. */
  pmr_impl_sharded_heap central;
  pmr_impl_spin big_lock; /* guards big and debug */
  pmr_impl_big_list big;
  pmr_impl_track *debug; /* PMR_DEBUG builds only */
  pmr_thread_cache_options opts;
  tc_cache
      *caches; /* every thread's cache for this instance (registry mutex) */
  size_t gone_refills, gone_flushes; /* of caches freed (registry mutex) */
  atomic_uint next_home;
  /* When reclaim_parked last emptied the shards (pmr_impl_coarse_ns). */
  _Atomic uint64_t reclaimed_ns;
  /* A thread gives magazines to and takes them from its home shard; when
   * that has no full one, the home takes over another shard's whole stack.
   * Each shard carves its own chunks: threads carving side by side in one
   * chunk interleave their runs, and then each core's prefetcher reads ahead
   * into lines the other core is writing (measured: 2 threads 2.3x slower
   * per thread than with a chunk each). */
  tc_shard *shards; /* SHARDS of them */
} tc_state;

_Static_assert(sizeof(tc_state) <=
                   sizeof(((pmr_thread_cache *)0)->pmr_impl_state),
               "pmr_thread_cache.pmr_impl_state is too small");
_Static_assert(
    offsetof(tc_cache, cls) == 0 && sizeof(tc_class) % 8 == 0 &&
        24 * sizeof(tc_class) / 8 <= UINT8_MAX,
    "small_off holds the offsets of the 24 classes up to 1024 bytes");
_Static_assert(MAX_LIMIT / 2 <= UINT16_MAX, "magazine counts are uint16_t");
_Static_assert(sizeof(tc_shard) % PMR_IMPL_CACHE_LINE == 0,
               "shards should not share cache lines");

static tc_state *state_of(pmr_mem_resource *self) {
  return (tc_state *)(void *)((pmr_thread_cache *)self)->pmr_impl_state.bytes;
}
static const tc_state *cstate_of(const pmr_thread_cache *tc) {
  return (const tc_state *)(const void *)tc->pmr_impl_state.bytes;
}

/* ---- the registry ----------------------------------------------------------
 */

static pthread_mutex_t registry = PTHREAD_MUTEX_INITIALIZER;
static tc_state **slots; /* slot -> live instance, NULL when free */
static size_t nslots;
static pthread_key_t exit_key;
static atomic_bool key_ok; /* exit_key exists */
static tc_record *records; /* every thread's record (registry mutex) */

static tc_record empty_record; /* a thread's record before its first use */

static _Thread_local tc_record *tl_rec PMR_IMPL_TLS_MODEL = &empty_record;

/* What an empty magazine's slot[0] holds, for a class without one: the
 * fast path's pop finds NULL and the push finds top == last. */
static void *no_block;
/* The cache a thread has for an instance it has not used (or for any
 * instance beyond DIRECT_SLOTS): every class without a magazine, so the
 * fast paths need no test for a missing cache. Never written after
 * init_no_cache. */
static tc_cache no_cache;
static bool no_cache_ready; /* registry mutex */

/* The thread's caches of the first DIRECT_SLOTS instances, by slot: the
 * fast path's one load. &no_cache where there is none; entry DIRECT_SLOTS
 * always (fast_slot of the instances beyond). */
#define NC &no_cache
#define NC8 NC, NC, NC, NC, NC, NC, NC, NC
_Static_assert(DIRECT_SLOTS == 64, "tl_direct's initializer has 65 entries");
static _Thread_local _Atomic(tc_cache *)
    tl_direct[DIRECT_SLOTS + 1] PMR_IMPL_TLS_MODEL = {NC8, NC8, NC8, NC8, NC8,
                                                      NC8, NC8, NC8, NC};
#undef NC8
#undef NC

static void thread_exit(void *arg);

/* Creates the library's one pthread key on first use. A failure (keys
 * exhausted) is retried on the next use rather than remembered. */
static bool have_key(void) {
  if (atomic_load_explicit(&key_ok, memory_order_acquire)) return true;
  pthread_mutex_lock(&registry);
  if (!atomic_load_explicit(&key_ok, memory_order_relaxed) &&
      pthread_key_create(&exit_key, thread_exit) == 0)
    atomic_store_explicit(&key_ok, true, memory_order_release);
  pthread_mutex_unlock(&registry);
  return atomic_load_explicit(&key_ok, memory_order_acquire);
}

#ifndef PMR_DEBUG /* the fast paths only */
/* The calling thread's cache for s; &no_cache if it has none (or s's slot
 * is not below DIRECT_SLOTS). Two loads (one with PMR_IMPL_TLS_FS); a plain
 * load as atomic_load_explicit(relaxed) would be. */
static inline tc_cache *my_cache(const tc_state *s) {
#if PMR_IMPL_TLS_FS
  return (tc_cache *)pmr_impl_tls_load(s->fast_entry);
#else
  return atomic_load_explicit(&tl_direct[s->fast_entry], memory_order_relaxed);
#endif
}
#endif

/* Sets every class of no_cache to "no magazine" (registry mutex, once). */
static void init_no_cache(void) {
  if (no_cache_ready) return;
  for (unsigned i = 0; i < TC_CLASSES; ++i) {
    atomic_init(&no_cache.cls[i].top, &no_block);
    no_cache.cls[i].last = &no_block;
    atomic_init(&no_cache.cls[i].loaded, NULL);
  }
  no_cache_ready = true;
}

static _Atomic(tc_cache *) *entry_of(tc_record *rec, size_t slot) {
  if (slot < DIRECT_SLOTS)
    return rec->direct != NULL ? &rec->direct[slot] : NULL;
  slot -= DIRECT_SLOTS;
  return slot < rec->more_cap ? &rec->more[slot] : NULL;
}

/* The cache in entry e; NULL for none (no entry, NULL or &no_cache). */
static tc_cache *cache_at(_Atomic(tc_cache *) *e) {
  tc_cache *c =
      e != NULL ? atomic_load_explicit(e, memory_order_relaxed) : NULL;
  return c != &no_cache ? c : NULL;
}

/* my_cache for any slot, NULL for none (the record's overflow map is
 * written only by its own thread, so reading it here needs no lock). */
static tc_cache *find_cache(const tc_state *s) {
  return cache_at(entry_of(tl_rec, s->slot));
}

/* Class k holds magazine m (NULL: none) with n blocks. */
static void load_mag(tc_class *k, tc_mag *m, size_t n) {
  atomic_store_explicit(&k->loaded, m, memory_order_relaxed);
  if (m != NULL) {
    atomic_store_explicit(&k->top, &m->slot[n], memory_order_relaxed);
    k->last = &m->slot[k->cap];
  } else {
    atomic_store_explicit(&k->top, &no_block, memory_order_relaxed);
    k->last = &no_block;
  }
}

/* Returns the calling thread's cache for s, making it (and the thread's
 * record) if needed. NULL when out of memory. */
static tc_cache *get_cache(tc_state *s) {
  tc_record *rec = tl_rec;
  if (rec == &empty_record) {
    if (!have_key()) return NULL;
    rec = (tc_record *)calloc(1, sizeof *rec);
    if (rec == NULL) return NULL;
    rec->direct = tl_direct;
    /* The key's destructor returns the caches when the thread exits. */
    if (pthread_setspecific(exit_key, rec) != 0) {
      free(rec);
      return NULL;
    }
    tl_rec = rec;
  }
  pthread_mutex_lock(&registry);
  if (!rec->listed) {
    rec->listed = true;
    rec->next_rec = records;
    if (records != NULL) records->prev_rec = rec;
    records = rec;
  }
  _Atomic(tc_cache *) *e = entry_of(rec, s->slot);
  if (e == NULL) { /* grow the record's overflow map */
    size_t want = s->slot - DIRECT_SLOTS + 1,
           cap = rec->more_cap ? rec->more_cap : 8;
    while (cap < want) cap *= 2;
    _Atomic(tc_cache *) *more =
        (_Atomic(tc_cache *) *)calloc(cap, sizeof(_Atomic(tc_cache *)));
    if (more == NULL) {
      pthread_mutex_unlock(&registry);
      return NULL;
    }
    for (size_t i = 0; i < rec->more_cap; ++i)
      atomic_init(&more[i],
                  atomic_load_explicit(&rec->more[i], memory_order_relaxed));
    free(rec->more);
    rec->more = more;
    rec->more_cap = cap;
    e = entry_of(rec, s->slot);
  }
  tc_cache *c = cache_at(e);
  if (c == NULL && (c = (tc_cache *)calloc(1, sizeof *c)) != NULL) {
    for (unsigned i = 0; i < TC_CLASSES; ++i) {
      c->cls[i].block = (uint32_t)pmr_impl_pool_class_size(i);
      c->cls[i].cap = s->cap[i];
      load_mag(&c->cls[i], NULL, 0);
    }
    /* Round robin: threads that share an instance get different homes. */
    c->home =
        atomic_fetch_add_explicit(&s->next_home, 1, memory_order_relaxed) %
        SHARDS;
    c->owner = s;
    c->rec = rec;
    c->slot = s->slot;
    c->next = s->caches;
    if (s->caches != NULL) s->caches->prev = c;
    s->caches = c;
    atomic_store_explicit(e, c, memory_order_relaxed);
  }
  pthread_mutex_unlock(&registry);
  return c;
}

static inline void set_count(_Atomic uint16_t *c, size_t n) {
  atomic_store_explicit(c, (uint16_t)n, memory_order_relaxed);
}
static inline size_t get_count(const _Atomic uint16_t *c) {
  return atomic_load_explicit(c, memory_order_relaxed);
}
/* The owner's counters: a plain load and store, never a read-modify-write. */
static inline void bump(atomic_size_t *n) {
  atomic_store_explicit(n, atomic_load_explicit(n, memory_order_relaxed) + 1,
                        memory_order_relaxed);
}

static inline void **get_top(tc_class *k) {
  return atomic_load_explicit(&k->top, memory_order_relaxed);
}
static inline void set_top(tc_class *k, void **top) {
  atomic_store_explicit(&k->top, top, memory_order_relaxed);
}
static inline tc_mag *loaded_of(tc_class *k) {
  return atomic_load_explicit(&k->loaded, memory_order_relaxed);
}
/* Blocks in the loaded magazine. */
static inline size_t loaded_count(tc_class *k) {
  tc_mag *m = loaded_of(k);
  return m != NULL ? (size_t)(get_top(k) - m->slot) : 0;
}

/* Takes a block from the thread's magazine, or NULL when it is empty (its
 * slot[0]) or missing (no_block). */
static inline void *tc_pop(tc_class *k) {
  void **top = get_top(k);
  void *p = *top;
  if (PMR_UNLIKELY(p == NULL)) return NULL;
  set_top(k, top - 1);
  PMR_IMPL_UNDEFINED(p, k->block);
  return p;
}

/* Puts p into the thread's magazine; false (nothing done) when it is full
 * or missing. */
static inline bool tc_push(tc_class *k, void *p) {
  void **top = get_top(k);
  if (PMR_UNLIKELY(top == k->last)) return false;
  PMR_IMPL_NOACCESS(p, k->block);
  *++top = p;
  set_top(k, top);
  return true;
}

/* prev_count is cleared first: at every point prev's count is 0 or right,
 * which fork's child relies on (adopt_vanished). */
static void swap_magazines(tc_class *k) {
  tc_mag *m = loaded_of(k);
  size_t n = loaded_count(k);
  size_t p = get_count(&k->prev_count);
  set_count(&k->prev_count, 0);
  load_mag(k, k->prev, p);
  k->prev = m;
  set_count(&k->prev_count, n);
}

/* The loaded magazine is full and prev, holding n < cap blocks (all
 * freed before loaded's), has room: loaded's oldest blocks, up to half a
 * magazine, go on top of prev's and the rest move down. Swapping with an
 * empty prev instead would leave loaded empty, and a thread whose count of
 * blocks hovers around a magazine's size (a request that allocates a few
 * blocks of a class and frees them) would swap back at its next
 * allocation and again at its next free, each time through the slow
 * paths. After a spill loaded has room both ways, the next allocations
 * still get the blocks freed last, and the thread goes to the central
 * pool only with both magazines full, as before.
 * While blocks move, loaded shows none and prev only those it held: a
 * fork at that instant (fork's child adopts the magazines of vanished
 * threads) may lose blocks, never see one twice. */
static void spill_loaded(tc_class *k, size_t n) {
  size_t cap = k->cap, m = cap - n < cap - cap / 2 ? cap - n : cap - cap / 2;
  void **slot = loaded_of(k)->slot;
  /* Loaded shows none before any slot moves (acquire: no later store goes
   * before it). */
  (void)atomic_exchange_explicit(&k->top, &slot[0], memory_order_acq_rel);
  memcpy(&k->prev->slot[1 + n], &slot[1], m * sizeof *slot);
  memmove(&slot[1], &slot[1 + m], (cap - m) * sizeof *slot);
  /* Release: a fork's child that sees a count sees the slots it covers. */
  atomic_store_explicit(&k->prev_count, (uint16_t)(n + m),
                        memory_order_release);
  atomic_store_explicit(&k->top, &slot[cap - m], memory_order_release);
}

/* ---- the central pool -----------------------------------------------------
 */

static size_t mag_bytes(const tc_state *s, unsigned idx) {
  return offsetof(tc_mag, slot) + ((size_t)s->cap[idx] + 1) * sizeof(void *);
}

static void empty_shards(tc_state *s);
static void flush_blocks(tc_state *s, tc_mag *m, size_t n);
static void free_mag(tc_state *s, tc_mag *m);

/* The calling thread's magazines of every class but `except` (TC_CLASSES:
 * none) back to the central pool: their blocks to their pages, the
 * magazines freed. */
static void flush_own(tc_state *s, unsigned except) {
  tc_cache *c = find_cache(s);
  if (c == NULL || c == &no_cache) return;
  for (unsigned idx = 0; idx < TC_CLASSES; ++idx) {
    if (idx == except) continue;
    tc_class *k = &c->cls[idx];
    tc_mag *m = loaded_of(k);
    if (m != NULL) {
      flush_blocks(s, m, loaded_count(k));
      free_mag(s, m);
    }
    if (k->prev != NULL) {
      flush_blocks(s, k->prev, get_count(&k->prev_count));
      free_mag(s, k->prev);
    }
    load_mag(k, NULL, 0);
    k->prev = NULL;
    set_count(&k->prev_count, 0);
  }
}

/* A block of class cls from the central pool, home shard first, never
 * waiting on upstream with a lock held. Before it asks upstream for memory,
 * what the central pool parks (magazines and chains of every class) and
 * what the calling thread caches of classes other than `except` go back to
 * their pages, which may empty and serve any class: blocks parked or cached
 * across many pages would otherwise keep each of them in use, and the pool
 * would grow round after round of the same work. NULL when upstream fails. */
static void *central_alloc(tc_state *s, unsigned home, unsigned except,
                           unsigned cls) {
  pmr_impl_shard *sh = pmr_impl_sharded_lock(&s->central, home);
  if (sh == NULL) return NULL;
  void *b = pmr_impl_sharded_alloc_held(&s->central, sh, cls);
  if (b == NULL) {
    pmr_impl_spin_unlock(&sh->lock);
    flush_own(s, except);
    empty_shards(s);
    sh = pmr_impl_sharded_lock(&s->central, home);
    if (sh == NULL) return NULL;
    b = pmr_impl_sharded_alloc(&s->central, &sh, home, cls);
  }
  if (sh != NULL) pmr_impl_spin_unlock(&sh->lock);
  return b;
}

/* A new empty magazine from the central pool's pages; grow: upstream may be
 * asked for a segment (allocation paths only). NULL when there is none. */
static tc_mag *new_mag(tc_state *s, unsigned home, unsigned idx, bool grow) {
  unsigned mag_class = pmr_impl_pool_class_of(mag_bytes(s, idx));
  tc_mag *m;
  if (grow) {
    m = (tc_mag *)central_alloc(s, home, idx, mag_class);
  } else { /* any shard that exists: making one would call upstream */
    pmr_impl_shard *sh = NULL;
    for (unsigned i = 0; sh == NULL && i < PMR_IMPL_SHARDS; ++i)
      sh = pmr_impl_sharded_get(&s->central, (home + i) % PMR_IMPL_SHARDS);
    if (sh == NULL) return NULL;
    pmr_impl_spin_lock(&sh->lock);
    m = (tc_mag *)pmr_impl_heap_alloc_held(&sh->heap,
                                           &sh->heap.classes[mag_class]);
    pmr_impl_spin_unlock(&sh->lock);
  }
  if (m != NULL) m->slot[0] = NULL;
  return m;
}

/* Back to its page: never waits, never calls upstream. */
static void free_mag(tc_state *s, tc_mag *m) {
  pmr_impl_sharded_free(&s->central, m);
}

/* The n blocks of m back to their pages; m is then empty. */
static void flush_blocks(tc_state *s, tc_mag *m, size_t n) {
  pmr_impl_sharded_free_many(&s->central, &m->slot[1], n);
}

static tc_mag *full_head(struct tc_stack *st) {
  return atomic_load_explicit(&st->full, memory_order_relaxed);
}
static void set_full_head(struct tc_stack *st, tc_mag *m) {
  atomic_store_explicit(&st->full, m, memory_order_relaxed);
}
static tc_mag *empty_head(struct tc_stack *st) {
  return atomic_load_explicit(&st->empty, memory_order_relaxed);
}
static void set_empty_head(struct tc_stack *st, tc_mag *m) {
  atomic_store_explicit(&st->empty, m, memory_order_relaxed);
}

/* Pushes magazine m (holding n blocks) onto stack st (locked). Beyond the
 * limits, its blocks go back to their pages and m to its own page, so what
 * the central pool parks stays bounded and pages can empty. */
static void push_mag(tc_state *s, struct tc_stack *st, tc_mag *m, size_t n) {
  if (n != 0 && st->nfull >= FULL_LIMIT) {
    flush_blocks(s, m, n);
    n = 0;
  }
  m->count = n;
  if (n != 0) {
    m->next = full_head(st);
    set_full_head(st, m);
    st->nfull++;
  } else if (st->nempty < EMPTY_LIMIT) {
    m->next = empty_head(st);
    set_empty_head(st, m);
    st->nempty++;
  } else {
    free_mag(s, m);
  }
}

static tc_mag *pop_empty(struct tc_stack *st) {
  tc_mag *m = empty_head(st);
  if (m != NULL) {
    set_empty_head(st, m->next);
    st->nempty--;
  }
  return m;
}

/* ---- packed chains ---------------------------------------------------------
 * When deallocation needs an empty magazine and no shard has one, the full
 * magazine's blocks are packed into some of those blocks: chains, each a
 * head block holding the addresses of up to W - 2 node blocks (W = block
 * size in words), each node holding the addresses of up to W more blocks.
 * Packing writes about one block in W + 1, where giving the blocks back to
 * their pages would write a link into every one (each a cold cache line
 * after a long free phase); the magazine is then empty and deallocation goes
 * on storing pointers. Unpacking reads the head, then the nodes, whose
 * addresses it knows at once (no pointer chasing from node to node). A chain
 * waits in its shard's stack until a refill unpacks it into an empty
 * magazine. Chains go back to their pages before the central pool asks
 * upstream for memory, and on trim, so they never make the pool grow.
 * Classes below CHAIN_MIN_BLOCK bytes go back to their pages instead. */
#define CHAIN_MIN_BLOCK 32u
enum { HEAD_LINK, HEAD_COUNT, HEAD_FIRST };

/* The most blocks one chain of `words`-word blocks holds. */
static size_t chain_max(size_t words) { return 1 + (words - 2) * (words + 1); }

/* Nodes of a chain of n blocks: n - 1 <= nodes * (words + 1). */
static size_t chain_nodes(size_t n, size_t words) {
  return (n - 1 + words) / (words + 1);
}

/* Packs blk[0 .. n), n >= 1 blocks of `block` bytes, into chains linked
 * through HEAD_LINK, the last one's link being `tail`; returns the first. */
static void *pack(void **blk, size_t n, size_t block, void *tail) {
  const size_t words = block / sizeof(void *);
  void *first = tail;
  while (n > 0) {
    size_t take = n < chain_max(words) ? n : chain_max(words);
    size_t nodes = chain_nodes(take, words);
    void **head = (void **)blk[0];
    PMR_IMPL_UNDEFINED(head, block);
    head[HEAD_LINK] = first;
    head[HEAD_COUNT] = (void *)(uintptr_t)take;
    memcpy(&head[HEAD_FIRST], &blk[1], nodes * sizeof *blk);
    size_t i = 1 + nodes; /* the next block a node points to */
    for (size_t j = 0; j < nodes; ++j) {
      void **node = (void **)blk[1 + j];
      size_t m = take - i < words ? take - i : words;
      PMR_IMPL_UNDEFINED(node, block);
      memcpy(node, &blk[i], m * sizeof *blk);
      PMR_IMPL_NOACCESS(node, block);
      i += m;
    }
    PMR_IMPL_NOACCESS(head, block);
    first = head;
    blk += take;
    n -= take;
  }
  return first;
}

/* The blocks of chain head into dst[0 .. n), the order pack took them in;
 * returns n. */
static size_t unpack(void *head, void **dst, size_t block) {
  const size_t words = block / sizeof(void *);
  void **h = (void **)head;
  PMR_IMPL_DEFINED(h, block);
  size_t n = (size_t)(uintptr_t)h[HEAD_COUNT];
  size_t nodes = chain_nodes(n, words);
  dst[0] = h;
  memcpy(&dst[1], &h[HEAD_FIRST], nodes * sizeof *dst);
  PMR_IMPL_NOACCESS(h, block);
  for (size_t j = 0; j < nodes; ++j) /* their misses overlap */
    PMR_IMPL_PREFETCH(dst[1 + j]);
  size_t i = 1 + nodes;
  for (size_t j = 0; j < nodes; ++j) {
    void **node = (void **)dst[1 + j];
    size_t m = n - i < words ? n - i : words;
    PMR_IMPL_DEFINED(node, block);
    memcpy(&dst[i], node, m * sizeof *dst);
    PMR_IMPL_NOACCESS(node, block);
    i += m;
  }
  return n;
}

/* Parks the n blocks of magazine m (class idx) as chains in shard home. */
static void park(tc_state *s, unsigned home, unsigned idx, tc_mag *m,
                 size_t n) {
  size_t block = pmr_impl_pool_class_size(idx);
  struct tc_stack *st = &s->shards[home].cls[idx];
  void *end = m->slot[1]; /* the chain pack makes first ends the list */
  void *first = pack(&m->slot[1], n, block, NULL);
  pmr_impl_spin_lock(&st->lock);
  pmr_impl_word_set(end, HEAD_LINK,
                    atomic_load_explicit(&st->chains, memory_order_relaxed));
  atomic_store_explicit(&st->chains, first, memory_order_relaxed);
  pmr_impl_spin_unlock(&st->lock);
}

/* Locks stacks a (of shard ia) and b (of shard ib), lower shard first, the
 * order every path that holds two stack locks keeps; a == b: one lock. */
static void lock_pair(struct tc_stack *a, unsigned ia, struct tc_stack *b,
                      unsigned ib) {
  struct tc_stack *first = ib < ia ? b : a, *second = ib < ia ? a : b;
  pmr_impl_spin_lock(&first->lock);
  if (second != first) pmr_impl_spin_lock(&second->lock);
}
static void unlock_pair(struct tc_stack *a, struct tc_stack *b) {
  if (b != a) pmr_impl_spin_unlock(&b->lock);
  pmr_impl_spin_unlock(&a->lock);
}

static void *chains_of(struct tc_stack *st) {
  return atomic_load_explicit(&st->chains, memory_order_relaxed);
}
static void set_chains(struct tc_stack *st, void *head) {
  atomic_store_explicit(&st->chains, head, memory_order_relaxed);
}

/* A chain of class idx from shard home; when that has none, the home takes
 * over another shard's whole list (both locks, lower shard first, as
 * take_full does), so that this thread's next refills find chains at home
 * instead of contending for the other shard's lock. NULL if none. */
static void *take_chain(tc_state *s, unsigned home, unsigned idx) {
  struct tc_stack *h = &s->shards[home].cls[idx];
  for (unsigned i = 0; i < SHARDS; ++i) {
    unsigned other = (home + i) % SHARDS;
    struct tc_stack *v = &s->shards[other].cls[idx];
    if (chains_of(v) == NULL) continue;
    lock_pair(h, home, v, other);
    if (v != h && chains_of(h) == NULL) { /* take over v's list */
      set_chains(h, chains_of(v));
      set_chains(v, NULL);
    }
    void *head = chains_of(h), *next = NULL;
    if (head != NULL) {
      next = pmr_impl_word_get(head, HEAD_LINK);
      set_chains(h, next);
    }
    unlock_pair(h, v);
    if (head != NULL) {
      /* The next take reads next's link (and unpacks it): its line comes
       * in while this chain is unpacked. */
      if (next != NULL) PMR_IMPL_PREFETCH(next);
      return head;
    }
  }
  return NULL;
}

/* Every parked chain's blocks back to their pages. */
static void unpack_all(tc_state *s) {
  void *buf[MAX_LIMIT / 2]; /* a chain holds at most a magazine */
  for (unsigned i = 0; i < SHARDS; ++i)
    for (unsigned j = 0; j < TC_CLASSES; ++j) {
      struct tc_stack *st = &s->shards[i].cls[j];
      if (atomic_load_explicit(&st->chains, memory_order_relaxed) == NULL)
        continue;
      pmr_impl_spin_lock(&st->lock);
      void *head = atomic_load_explicit(&st->chains, memory_order_relaxed);
      atomic_store_explicit(&st->chains, NULL, memory_order_relaxed);
      pmr_impl_spin_unlock(&st->lock);
      size_t block = pmr_impl_pool_class_size(j);
      while (head != NULL) {
        void *next = pmr_impl_word_get(head, HEAD_LINK);
        pmr_impl_sharded_free_many(&s->central, buf, unpack(head, buf, block));
        head = next;
      }
    }
}

/* Gives magazine m (holding n blocks) of class idx to shard home. */
static void put_mag(tc_state *s, unsigned home, unsigned idx, tc_mag *m,
                    size_t n) {
  struct tc_stack *st = &s->shards[home].cls[idx];
  pmr_impl_spin_lock(&st->lock);
  push_mag(s, st, m, n);
  pmr_impl_spin_unlock(&st->lock);
}

/* An empty magazine of class idx parked in a shard (home first), or NULL.
 * give (NULL: none), holding n blocks, goes to the stack the empty one came
 * from, in the same critical section (a thread that takes full magazines
 * leaves its empty ones where it found the full ones, so a consumer thread
 * finds them at home). */
static tc_mag *find_empty(tc_state *s, unsigned home, unsigned idx,
                          tc_mag *give, size_t n) {
  tc_mag *e = NULL;
  for (unsigned i = 0; e == NULL && i < SHARDS; ++i) {
    struct tc_stack *st = &s->shards[(home + i) % SHARDS].cls[idx];
    if (empty_head(st) == NULL) continue;
    pmr_impl_spin_lock(&st->lock);
    e = pop_empty(st);
    if (e != NULL && give != NULL) push_mag(s, st, give, n);
    pmr_impl_spin_unlock(&st->lock);
  }
  return e;
}

/* Deallocation path: gives magazine give (holding n > 0 blocks) for an
 * empty one (find_empty). With none anywhere, give's blocks are packed into
 * chains (or, for small classes, go back to their pages) and give is the
 * empty one: deallocation never calls upstream. */
static tc_mag *trade_for_empty(tc_state *s, unsigned home, unsigned idx,
                               tc_mag *give, size_t n) {
  tc_mag *m = find_empty(s, home, idx, give, n);
  if (m == NULL) {
    size_t block = pmr_impl_pool_class_size(idx);
    if (block >= CHAIN_MIN_BLOCK)
      park(s, home, idx, give, n);
    else
      flush_blocks(s, give, n);
    m = give;
  }
  return m;
}

/* Takes a full magazine of class idx from shard home; when that has none,
 * from another shard, whose whole stack of full magazines the home shard
 * takes over (a swap of the two stacks under both locks, taken in shard
 * order), so that a thread's next refills come from one shard in order.
 * Leaves *spare (an empty magazine, or NULL) in the shard the full one came
 * from, in the same critical section (then *spare becomes NULL): a thread
 * that frees what another allocates finds empty magazines at home. NULL
 * when no shard has a full magazine. */
static tc_mag *take_full(tc_state *s, unsigned home, unsigned idx,
                         tc_mag **spare) {
  struct tc_stack *h = &s->shards[home].cls[idx];
  tc_mag *m = NULL;
  if (full_head(h) != NULL) {
    pmr_impl_spin_lock(&h->lock);
    m = full_head(h);
    if (m != NULL) {
      set_full_head(h, m->next);
      h->nfull--;
      if (*spare != NULL) push_mag(s, h, *spare, 0);
      *spare = NULL;
    }
    pmr_impl_spin_unlock(&h->lock);
  }
  for (unsigned i = 1; m == NULL && i < SHARDS; ++i) {
    unsigned other = (home + i) % SHARDS;
    struct tc_stack *v = &s->shards[other].cls[idx];
    if (full_head(v) == NULL) continue;
    lock_pair(h, home, v, other);
    m = full_head(v);
    if (m != NULL) {
      uint32_t nv = v->nfull, nh = h->nfull;
      set_full_head(v, full_head(h));
      set_full_head(h, m->next);
      v->nfull = nh;
      h->nfull = nv - 1;
      if (*spare != NULL) push_mag(s, v, *spare, 0);
      *spare = NULL;
    }
    unlock_pair(h, v);
  }
  return m;
}

/* Fills slot[0 .. n) with up to want new blocks of class idx from the home
 * shard's pages, so that taking them from the end gives ascending
 * addresses. Returns n; 0 when upstream fails. */
static size_t fill(tc_state *s, unsigned home, unsigned idx, void **slot,
                   size_t want) {
  pmr_impl_shard *sh = pmr_impl_sharded_lock(&s->central, home);
  if (sh == NULL) return 0;
  size_t block = pmr_impl_pool_class_size(idx), n = 0;
  void *b;
  /* What the pages hold first; a new segment (upstream, with no lock held)
   * only for a first block. */
  while (n < want && (b = pmr_impl_heap_alloc_held(
                          &sh->heap, &sh->heap.classes[idx])) != NULL) {
    PMR_IMPL_NOACCESS(b, block);
    slot[want - 1 - n++] = b;
  }
  pmr_impl_spin_unlock(&sh->lock);
  if (n == 0 && (b = central_alloc(s, home, idx, idx)) != NULL) {
    PMR_IMPL_NOACCESS(b, block);
    slot[want - 1 - n++] = b;
  }
  if (n != 0 && n < want) /* move them down to slot[0 .. n) */
    memmove(slot, slot + (want - n), n * sizeof *slot);
  pmr_impl_sharded_shrink(&s->central);
  return n;
}

/* Thread class k (of cache c) has no block: swaps magazines, or exchanges
 * an empty one for a full one with the central pool, or fills one with new
 * blocks. NULL when upstream fails. */
static void *refill(tc_state *s, tc_cache *c, tc_class *k, unsigned idx) {
  if (get_count(&k->prev_count) != 0) {
    swap_magazines(k);
    return tc_pop(k);
  }
  tc_mag *spare = k->prev; /* empty, or NULL */
  tc_mag *full = take_full(s, c->home, idx, &spare);
  if (full != NULL) { /* keep one empty magazine; spare went back */
    k->prev = loaded_of(k);
    set_count(&k->prev_count, 0);
    load_mag(k, full, full->count);
    bump(&c->refills);
    return tc_pop(k);
  }
  if (loaded_of(k) == NULL) {
    tc_mag *e = k->prev;
    if (e == NULL) e = find_empty(s, c->home, idx, NULL, 0);
    if (e == NULL) e = new_mag(s, c->home, idx, true);
    load_mag(k, e, 0);
    k->prev = NULL;
  }
  tc_mag *m = loaded_of(k);
  if (m == NULL) { /* no magazine (out of memory): one block */
    void *p;
    if (fill(s, c->home, idx, &p, 1) == 0) return NULL;
    PMR_IMPL_UNDEFINED(p, k->block);
    return p;
  }
  /* Parked chains first (as many as fit: a chain holds at most `most`),
   * else new blocks from the pages. */
  size_t n = 0, most = SIZE_MAX;
  if (k->block >= CHAIN_MIN_BLOCK) {
    most = chain_max(k->block / sizeof(void *));
    if (most > k->cap) most = k->cap;
  }
  void *chain;
  while (most <= k->cap - n && (chain = take_chain(s, c->home, idx)) != NULL)
    n += unpack(chain, &m->slot[1 + n], k->block);
  if (n == 0) n = fill(s, c->home, idx, &m->slot[1], k->cap);
  if (n == 0) return NULL;
  load_mag(k, m, n);
  bump(&c->refills);
  return tc_pop(k);
}

/* Thread class k (of cache c) is full: swaps magazines, or gives the full
 * one to the central pool for an empty one, and stores p. Without any
 * magazine (a thread whose cache never allocated this class, or out of
 * memory), p goes back to its page. Never calls upstream. */
static void overflow(tc_state *s, tc_cache *c, tc_class *k, unsigned idx,
                     void *p) {
  if (loaded_of(k) != NULL && k->prev != NULL) {
    size_t held = get_count(&k->prev_count);
    if (held < k->cap) {
      spill_loaded(k, held);
    } else { /* both full: prev for an empty one from the central pool */
      tc_mag *give = k->prev;
      bump(&c->flushes);
      k->prev = loaded_of(k);
      set_count(&k->prev_count, loaded_count(k));
      load_mag(k, trade_for_empty(s, c->home, idx, give, held), 0);
    }
  } else { /* fewer than two magazines: an empty one the pool holds */
    tc_mag *e = find_empty(s, c->home, idx, NULL, 0);
    if (e == NULL) e = new_mag(s, c->home, idx, false);
    if (e != NULL) {
      if (loaded_of(k) != NULL) {
        k->prev = loaded_of(k);
        set_count(&k->prev_count, loaded_count(k));
      }
      load_mag(k, e, 0);
    }
  }
  if (tc_push(k, p)) return;
  pmr_impl_sharded_free(&s->central, p);
}

/* Every magazine of cache c goes to its instance's central pool. */
static void flush_all(tc_cache *c) {
  tc_state *s = c->owner;
  for (unsigned idx = 0; idx < TC_CLASSES; ++idx) {
    tc_class *k = &c->cls[idx];
    if (loaded_of(k) != NULL)
      put_mag(s, c->home, idx, loaded_of(k), loaded_count(k));
    if (k->prev != NULL)
      put_mag(s, c->home, idx, k->prev, get_count(&k->prev_count));
    load_mag(k, NULL, 0);
    k->prev = NULL;
    set_count(&k->prev_count, 0);
  }
}

static void unlink_cache(tc_cache *c) {
  tc_state *s = c->owner;
  if (c->prev != NULL)
    c->prev->next = c->next;
  else
    s->caches = c->next;
  if (c->next != NULL) c->next->prev = c->prev;
}

/* Frees cache c, keeping its magazine counts in its instance's totals
 * (registry mutex held). */
static void retire_cache(tc_cache *c) {
  c->owner->gone_refills +=
      atomic_load_explicit(&c->refills, memory_order_relaxed);
  c->owner->gone_flushes +=
      atomic_load_explicit(&c->flushes, memory_order_relaxed);
  free(c);
}

/* Takes rec off the list of records (registry mutex held). */
static void unlist_record(tc_record *rec) {
  if (!rec->listed) return;
  if (rec->prev_rec != NULL)
    rec->prev_rec->next_rec = rec->next_rec;
  else
    records = rec->next_rec;
  if (rec->next_rec != NULL) rec->next_rec->prev_rec = rec->prev_rec;
  rec->listed = false;
}

/* The thread-exit callback: every cache of the thread goes back to its
 * (live) instance. Instances destroyed earlier already took theirs. */
static void thread_exit(void *arg) {
  tc_record *rec = (tc_record *)arg;
  pthread_mutex_lock(&registry);
  for (size_t i = 0; i < DIRECT_SLOTS + rec->more_cap; ++i) {
    tc_cache *c = cache_at(entry_of(rec, i));
    if (c == NULL) continue;
    flush_all(c);
    unlink_cache(c);
    retire_cache(c);
  }
  unlist_record(rec);
  pthread_mutex_unlock(&registry);
  free(rec->more);
  free(rec);
  tl_rec = &empty_record; /* a later allocation in this thread starts afresh */
  for (size_t i = 0; i < DIRECT_SLOTS; ++i)
    atomic_store_explicit(&tl_direct[i], &no_cache, memory_order_relaxed);
}

/* Frees every cache of s, clearing the owning threads' entries. */
static void drop_caches(tc_state *s) {
  pthread_mutex_lock(&registry);
  for (tc_cache *c = s->caches, *next; c != NULL; c = next) {
    next = c->next;
    atomic_store_explicit(entry_of(c->rec, c->slot), &no_cache,
                          memory_order_relaxed);
    flush_all(c); /* its magazines go where release finds them */
    retire_cache(c);
  }
  s->caches = NULL;
  pthread_mutex_unlock(&registry);
}

/* ---- the resource ---------------------------------------------------------
 */

/* The slow paths take self, so the fast paths reach them by a jump with
 * their arguments in place. */
/* The class of a pooled request, or -1. */
static int class_of(const tc_state *s, size_t bytes, size_t alignment) {
  size_t sz = ((bytes + (bytes == 0)) + (alignment - 1)) & ~(alignment - 1);
  if (sz > s->largest || alignment > PMR_IMPL_POOL_MAX_BLOCK_ALIGN) return -1;
  return (int)pmr_impl_pool_class_of(sz);
}

static void *allocate_slow(tc_state *s, size_t bytes, size_t alignment) {
  int cls = class_of(s, bytes, alignment);
  if (cls < 0) {
    return pmr_impl_big_alloc(&s->big, &s->big_lock, s->central.src.upstream,
                              &s->central.src, bytes, alignment);
  }
  unsigned idx = (unsigned)cls;
  tc_cache *c = find_cache(s);
  if (c == NULL && (c = get_cache(s)) == NULL) return NULL;
  tc_class *k = &c->cls[idx];
  void *p = tc_pop(k);
  return p != NULL ? p : refill(s, c, k, idx);
}

/* errno is kept on success: a refill may fail a side allocation (a
 * magazine) and still get blocks. */
PMR_NOINLINE static void *tc_allocate_slow(pmr_mem_resource *self, size_t bytes,
                                           size_t alignment) {
  int saved = errno;
  tc_state *s = state_of(self);
  void *p = allocate_slow(s, bytes, alignment);
  if (p != NULL) errno = saved;
#ifdef PMR_DEBUG
  if (p != NULL) {
    pmr_impl_spin_lock(&s->big_lock);
    pmr_impl_track_add(s->debug, p, bytes, alignment);
    pmr_impl_spin_unlock(&s->big_lock);
  }
#endif
  return p;
}

static void deallocate_slow(tc_state *s, void *p, size_t bytes,
                            size_t alignment) {
  int cls = class_of(s, bytes, alignment);
  if (cls < 0) {
    pmr_impl_big_free(&s->big, &s->big_lock, s->central.src.upstream, p, bytes,
                      alignment);
    return;
  }
  unsigned idx = (unsigned)cls;
  tc_cache *c = find_cache(s);
  if (c == NULL && (c = get_cache(s)) == NULL) {
    /* No cache (malloc failed): straight to the block's page. */
    pmr_impl_sharded_free(&s->central, p);
    return;
  }
  tc_class *k = &c->cls[idx];
  if (!tc_push(k, p)) overflow(s, c, k, idx, p);
}

/* Deallocation never fails, and leaves errno alone. */
PMR_NOINLINE static void tc_deallocate_slow(pmr_mem_resource *self, void *p,
                                            size_t bytes, size_t alignment) {
  int saved = errno;
  tc_state *s = state_of(self);
#ifdef PMR_DEBUG
  pmr_impl_spin_lock(&s->big_lock);
  bool ok =
      pmr_impl_pool_debug_free(s->debug, "thread_cache", self, p, bytes,
                               alignment, class_of(s, bytes, alignment) >= 0);
  pmr_impl_spin_unlock(&s->big_lock);
  if (!ok) return;
#endif
  deallocate_slow(s, p, bytes, alignment);
  errno = saved;
}

#ifndef PMR_DEBUG /* debug builds take the checked slow path only */
/* The size rounded up to the alignment, minus 1: for bytes > 0 and a power
 * of two alignment, ((bytes - 1) | (alignment - 1)) + 1 is that size. Fewer
 * instructions than adding and masking; SIZE_MAX for bytes == 0. The fast
 * paths take it when below small_limit and look up small_off[x]. */
static inline size_t fast_index(size_t bytes, size_t alignment) {
  return (bytes - 1) | (alignment - 1);
}

/* The calling thread's class for fast index x < s->small_limit: in
 * no_cache when the thread has no cache for s. */
static inline tc_class *my_class(const tc_state *s, size_t x) {
  return (tc_class *)(void *)((char *)my_cache(s) +
                              (size_t)s->small_off[x] * 8);
}

#endif

/* The fast paths: tc_pop and tc_push on the calling thread's class, with
 * no test for a missing cache or magazine (no_cache, no_block). Every other
 * case (no block, a full magazine, other sizes) goes to the slow path. */
static void *tc_allocate(pmr_mem_resource *self, size_t bytes,
                         size_t alignment) {
#ifndef PMR_DEBUG /* debug builds track every block: the slow path */
  const tc_state *s = state_of(self);
  size_t x = fast_index(bytes, alignment);
  if (PMR_LIKELY(x < s->small_limit)) { /* 0 < rounded size <= small_limit */
    void *p = tc_pop(my_class(s, x));
    if (PMR_LIKELY(p != NULL)) return p;
  }
#endif
  return tc_allocate_slow(self, bytes, alignment);
}

static void tc_deallocate(pmr_mem_resource *self, void *p, size_t bytes,
                          size_t alignment) {
#ifndef PMR_DEBUG
  const tc_state *s = state_of(self);
  size_t x = fast_index(bytes, alignment);
  if (PMR_LIKELY(x < s->small_limit) && PMR_LIKELY(tc_push(my_class(s, x), p)))
    return;
#endif
  tc_deallocate_slow(self, p, bytes, alignment);
}

/* In place when both sizes fall in one pooled class: the block already has
 * the class's size, wherever it sits (a thread's magazine hands out blocks
 * of exactly its class). */
static bool tc_try_resize(pmr_mem_resource *self, void *p, size_t old_bytes,
                          size_t new_bytes, size_t alignment) {
  tc_state *s = state_of(self);
  int a = class_of(s, old_bytes, alignment);
  if (a < 0 || a != class_of(s, new_bytes, alignment)) return false;
#ifdef PMR_DEBUG
  if (!pmr_impl_pool_debug_free_locked(s->debug, &s->big_lock, "thread_cache",
                                       self, p, old_bytes, alignment, true))
    return false;
  pmr_impl_pool_debug_add_locked(s->debug, &s->big_lock, p, new_bytes,
                                 alignment);
#else
  (void)p;
#endif
  return true;
}

static const pmr_mem_resource_ops tc_ops = {
    .allocate = tc_allocate,
    .deallocate = tc_deallocate,
    .try_resize = tc_try_resize,
};

static void clear_shards(tc_state *s) {
  for (unsigned i = 0; i < SHARDS; ++i)
    for (unsigned j = 0; j < TC_CLASSES; ++j) {
      atomic_init(&s->shards[i].cls[j].lock, 0);
      atomic_init(&s->shards[i].cls[j].full, NULL);
      atomic_init(&s->shards[i].cls[j].empty, NULL);
      atomic_init(&s->shards[i].cls[j].chains, NULL);
      s->shards[i].cls[j].nfull = s->shards[i].cls[j].nempty = 0;
    }
}

/* Every block parked in the shards back to its page, every magazine too. */
static void empty_shards(tc_state *s) {
  unpack_all(s);
  for (unsigned i = 0; i < SHARDS; ++i)
    for (unsigned j = 0; j < TC_CLASSES; ++j) {
      struct tc_stack *st = &s->shards[i].cls[j];
      if (full_head(st) == NULL && empty_head(st) == NULL) continue; /* hint */
      pmr_impl_spin_lock(&st->lock);
      tc_mag *full = full_head(st), *empty = empty_head(st);
      set_full_head(st, NULL);
      set_empty_head(st, NULL);
      st->nfull = st->nempty = 0;
      pmr_impl_spin_unlock(&st->lock);
      for (tc_mag *m = full, *next; m != NULL; m = next) {
        next = m->next;
        flush_blocks(s, m, m->count);
        free_mag(s, m);
      }
      for (tc_mag *m = empty, *next; m != NULL; m = next) {
        next = m->next;
        free_mag(s, m);
      }
    }
}

/* The central pages' reclaim hook (page_heap.h): before an oversize block
 * is mapped, what the shards park goes back to the pages, so the footprint
 * grows only by what free pages cannot give; at most every
 * RECLAIM_INTERVAL_NS (one thread wins the exchange). Thread caches stay as
 * they are: the calling thread is about to use its own. */
static void reclaim_parked(pmr_impl_page_source *src) {
  tc_state *s =
      (tc_state *)(void *)((char *)src - offsetof(tc_state, central.src));
  if (s->shards == NULL) return; /* a failed init */
  uint64_t now = pmr_impl_coarse_ns();
  uint64_t last = atomic_load_explicit(&s->reclaimed_ns, memory_order_relaxed);
  if (now - last < RECLAIM_INTERVAL_NS ||
      !atomic_compare_exchange_strong_explicit(&s->reclaimed_ns, &last, now,
                                               memory_order_relaxed,
                                               memory_order_relaxed))
    return;
  empty_shards(s);
}

/* ---- fork ------------------------------------------------------------------
 * Before fork(): the registry mutex, then every spin lock of every live
 * instance. In the child, only the forking thread exists: the caches and
 * records of the other threads (whose TLS is gone) are taken over: their
 * magazines go to their instance's central pool, then they are freed. */

#define LOCKS (TC_CLASSES * SHARDS + 1 + PMR_IMPL_SHARDS + 2) /* at most */

/* Every spin lock of s, in one fixed order; returns how many. */
static size_t list_locks(tc_state *s, pmr_impl_spin *all[LOCKS]) {
  size_t n = 0;
  for (unsigned h = 0; h < SHARDS; ++h)
    for (unsigned j = 0; j < TC_CLASSES; ++j)
      all[n++] = &s->shards[h].cls[j].lock;
  all[n++] = &s->big_lock;
  return n + pmr_impl_sharded_locks(&s->central, all + n);
}

/* Unlocks the first n locks of s (all: LOCKS). */
static void unlock_first(tc_state *s, size_t n) {
  pmr_impl_spin *all[LOCKS];
  size_t have = list_locks(s, all);
  if (n > have) n = have;
  while (n > 0) pmr_impl_spin_unlock(all[--n]);
}

static void fork_release_all(void) {
  for (size_t i = 0; i < nslots; ++i)
    if (slots[i] != NULL) unlock_first(slots[i], LOCKS);
  pthread_mutex_unlock(&registry);
}

static bool fork_take_all(void) {
  if (!pmr_impl_fork_mutex_take(&registry)) return false;
  for (size_t i = 0; i < nslots; ++i) {
    if (slots[i] == NULL) continue;
    pmr_impl_spin *all[LOCKS];
    size_t n = list_locks(slots[i], all);
    for (size_t k = 0; k < n; ++k) {
      if (pmr_impl_fork_spin_take(all[k])) continue;
      unlock_first(slots[i], k);
      for (size_t e = 0; e < i; ++e)
        if (slots[e] != NULL) unlock_first(slots[e], LOCKS);
      pthread_mutex_unlock(&registry);
      return false;
    }
  }
  return true;
}

/* In fork's child: the magazines of cache c, whose thread vanished
 * possibly in the middle of changing them, go to the central pool. A
 * magazine seen twice is given once; a count that does not fit is taken as
 * 0 (those blocks stay unused until release, like a magazine the thread
 * held in a local variable). */
static void adopt_vanished(tc_cache *c) {
  tc_state *s = c->owner;
  for (unsigned idx = 0; idx < TC_CLASSES; ++idx) {
    tc_class *k = &c->cls[idx];
    tc_mag *a = loaded_of(k), *b = k->prev;
    size_t na = 0, nb = get_count(&k->prev_count);
    if (a != NULL) {
      uintptr_t top = (uintptr_t)get_top(k), lo = (uintptr_t)&a->slot[0];
      if (top >= lo && top <= (uintptr_t)&a->slot[k->cap])
        na = (top - lo) / sizeof(void *);
      put_mag(s, c->home, idx, a, na);
    }
    if (b != NULL && b != a) put_mag(s, c->home, idx, b, nb <= k->cap ? nb : 0);
  }
}

static void fork_child(void) {
  pthread_mutex_init(&registry, NULL);
  tc_record *me = tl_rec; /* &empty_record if this thread has none */
  for (size_t i = 0; i < nslots; ++i) {
    tc_state *s = slots[i];
    if (s == NULL) continue;
    unlock_first(s, LOCKS);
    for (tc_cache *c = s->caches, *next; c != NULL; c = next) {
      next = c->next;
      if (c->rec == me) continue;
      adopt_vanished(c);
      unlink_cache(c);
      retire_cache(c);
    }
  }
  for (tc_record *r = records, *next; r != NULL; r = next) {
    next = r->next_rec;
    if (r == me) continue;
    unlist_record(r);
    free(r->more);
    free(r);
  }
}

static const pmr_impl_fork_client fork_client = {fork_take_all,
                                                 fork_release_all, fork_child};

/* True when s is a live instance (registry mutex held). Compares pointers
 * only: s may be uninitialised memory. */
static bool is_live(const tc_state *s) {
  for (size_t i = 0; i < nslots; ++i)
    if (slots[i] == s) return true;
  return false;
}

static pmr_mem_resource *upstream_of(const pmr_mem_resource *r) {
  return pmr_thread_cache_upstream((const pmr_thread_cache *)r);
}
static const pmr_impl_pool_kind kind = {PMR_IMPL_KIND_THREAD_CACHE, &tc_ops,
                                        upstream_of};

bool pmr_thread_cache_init(pmr_thread_cache *tc,
                           const pmr_thread_cache_options *opts,
                           pmr_mem_resource *upstream) {
  tc_state *s = state_of(&tc->base);
  pthread_mutex_lock(&registry);
  bool live = is_live(s);
  pthread_mutex_unlock(&registry);
  if (live) {
    /* Init over a live instance: the old one is destroyed first, so no
     * thread keeps a cache pointing into the new one's memory. */
#ifdef PMR_DEBUG
    pmr_report_misuse(
        "thread_cache %p: initialised again while live (not destroyed); "
        "destroying it first",
        (void *)tc);
#endif
    pmr_thread_cache_destroy(tc);
  }
  pmr_impl_fork_register(&fork_client);
  tc->base.ops = &tc_ops;
  pmr_impl_os_register_pool(&kind);
  memset(s, 0, sizeof *s);
  pmr_thread_cache_options o;
  memset(&o, 0, sizeof o);
  if (opts != NULL) o = *opts;
  o.pool = pmr_impl_heap_options(&o.pool);
  o.max_cached_blocks = pmr_impl_clamp_option(
      o.max_cached_blocks, PMR_THREAD_CACHE_DEFAULT_MAX_CACHED_BLOCKS,
      MAX_LIMIT);
  o.max_cached_bytes = pmr_impl_clamp_option(
      o.max_cached_bytes, PMR_THREAD_CACHE_DEFAULT_MAX_CACHED_BYTES, SIZE_MAX);
  s->opts = o;
  s->largest = o.pool.largest_required_pool_block;
  /* The central pages serve every class up to the page limit, whatever
   * largest is: magazines are blocks of them too. */
  pmr_pool_options central = o.pool;
  central.largest_required_pool_block = PMR_POOL_PAGE_LARGEST_BLOCK;
  pmr_impl_sharded_init(&s->central, upstream, &central);
  s->small_limit = s->largest < PMR_IMPL_POOL_TABLE_LIMIT
                       ? s->largest
                       : PMR_IMPL_POOL_TABLE_LIMIT;
  for (unsigned i = 0; i < TC_CLASSES; ++i) {
    size_t limit = o.max_cached_bytes / pmr_impl_pool_class_size(i);
    if (limit > o.max_cached_blocks) limit = o.max_cached_blocks;
    if (limit < 2) limit = 2;
    s->cap[i] = (uint16_t)(limit / 2); /* two magazines: at most limit blocks */
  }
  for (size_t x = 0; x < s->small_limit; ++x) {
    /* Rounded size x + 1 (pooled: at most small_limit), one of the 24
     * classes up to 1024 bytes. */
    size_t idx = pmr_impl_pool_class_of(x + 1);
    s->small_off[x] = (uint8_t)(idx * sizeof(tc_class) / 8);
  }
  atomic_init(&s->big_lock, 0);
#ifdef PMR_DEBUG
  s->debug = pmr_impl_track_new();
#endif
  pmr_impl_big_init(&s->big, s->central.src.upstream, o.pool.max_free_bytes);
  atomic_init(&s->next_home, 0);
  atomic_init(&s->reclaimed_ns, 0);
  s->shards =
      (tc_shard *)aligned_alloc(PMR_IMPL_CACHE_LINE, SHARDS * sizeof(tc_shard));
  if (s->shards == NULL) {
    s->small_limit = 0; /* misuse of a failed instance reaches no fast path */
    return false;
  }
  clear_shards(s);
  s->central.src.reclaim = reclaim_parked; /* once there are shards */

  /* A slot: the smallest free one, so slots stay below DIRECT_SLOTS while
   * fewer than 64 instances are alive. */
  pthread_mutex_lock(&registry);
  size_t slot = 0;
  while (slot < nslots && slots[slot] != NULL) ++slot;
  if (slot == nslots) {
    size_t cap = nslots ? nslots * 2 : 16;
    tc_state **grown = (tc_state **)realloc(slots, cap * sizeof *grown);
    if (grown == NULL) {
      pthread_mutex_unlock(&registry);
      free(s->shards);
      s->shards = NULL;
      s->small_limit = 0;
      return false;
    }
    for (size_t i = nslots; i < cap; ++i) grown[i] = NULL;
    slots = grown;
    nslots = cap;
  }
  slots[slot] = s;
  s->slot = slot;
  s->fast_entry = slot < DIRECT_SLOTS ? slot : DIRECT_SLOTS;
#if PMR_IMPL_TLS_FS
  s->fast_entry = pmr_impl_tls_offset(&tl_direct[s->fast_entry]);
#endif
  init_no_cache();
  pthread_mutex_unlock(&registry);
  return true;
}

void pmr_thread_cache_release(pmr_thread_cache *tc) {
  tc_state *s = state_of(&tc->base);
  if (s->shards == NULL) return; /* destroyed, or init failed */
  drop_caches(s);                /* every cache's magazines into the shards */
  clear_shards(s);               /* magazines and blocks live in the pages: */
  pmr_impl_sharded_release(&s->central);
  pmr_impl_big_release(&s->big, s->central.src.upstream);
  pmr_impl_track_clear(s->debug);
}

void pmr_thread_cache_destroy(pmr_thread_cache *tc) {
  tc_state *s = state_of(&tc->base);
  if (s->shards == NULL) return; /* destroyed already, or init failed */
  pmr_thread_cache_release(tc);
  pthread_mutex_lock(&registry);
  if (s->slot < nslots && slots[s->slot] == s) slots[s->slot] = NULL;
  pthread_mutex_unlock(&registry);
  free(s->shards);
  s->shards = NULL;
  pmr_impl_track_delete(s->debug);
  s->debug = NULL;
}

size_t pmr_thread_cache_trim(pmr_thread_cache *tc) {
  tc_state *s = state_of(&tc->base);
  if (s->shards == NULL) return 0;
  flush_own(s, TC_CLASSES);
  empty_shards(s);
  size_t given =
      pmr_impl_big_trim(&s->big, &s->big_lock, s->central.src.upstream);
  return given + pmr_impl_sharded_trim(&s->central);
}

pmr_thread_cache_stats pmr_thread_cache_get_stats(pmr_thread_cache *tc) {
  tc_state *s = state_of(&tc->base);
  pmr_thread_cache_stats st;
  memset(&st, 0, sizeof st);
  pthread_mutex_lock(&registry);
  st.refills = s->gone_refills;
  st.flushes = s->gone_flushes;
  for (tc_cache *c = s->caches; c != NULL; c = c->next) {
    ++st.threads;
    st.refills += atomic_load_explicit(&c->refills, memory_order_relaxed);
    st.flushes += atomic_load_explicit(&c->flushes, memory_order_relaxed);
    for (unsigned i = 0; i < TC_CLASSES; ++i) {
      /* top and loaded may be of different moments while the owner runs:
       * compared as integers, and a top outside loaded counts 0. */
      tc_class *k = &c->cls[i];
      tc_mag *m = loaded_of(k);
      size_t n = 0;
      if (m != NULL) {
        n = ((uintptr_t)get_top(k) - (uintptr_t)m->slot) / sizeof(void *);
        if (n > k->cap) n = 0;
      }
      n += get_count(&k->prev_count);
      st.cached_blocks += n;
      st.cached_bytes += n * c->cls[i].block;
    }
  }
  pthread_mutex_unlock(&registry);
  pmr_pool_stats ps = {0, 0, 0, 0};
  if (s->shards != NULL) {
    pmr_impl_spin_lock(&s->big_lock);
    ps.held_bytes = s->big.live.size + s->big.kept;
    ps.free_oversize_bytes = s->big.kept;
    pmr_impl_spin_unlock(&s->big_lock);
    pmr_impl_sharded_stats(&s->central, &ps);
  }
  st.held_bytes = ps.held_bytes;
  st.free_page_bytes = ps.free_page_bytes;
  st.free_oversize_bytes = ps.free_oversize_bytes;
  return st;
}

pmr_thread_cache_options pmr_thread_cache_get_options(
    const pmr_thread_cache *tc) {
  return cstate_of(tc)->opts;
}

pmr_mem_resource *pmr_thread_cache_upstream(const pmr_thread_cache *tc) {
  return cstate_of(tc)->central.src.upstream;
}
