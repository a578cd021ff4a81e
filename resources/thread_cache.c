/* pmr_thread_cache: per-thread, per-instance caches over a central pool.
 *
 * Who touches what:
 *   - a cache (tc_cache) belongs to one thread and one instance; only that
 *     thread reads or writes its lists, except destroy/release (which the
 *     contract forbids to overlap with use of the instance) and the thread's
 *     exit, which both run under the registry mutex;
 *   - the central pool (pmr__pool_core) is shared: one spin lock per class
 *     (free blocks of exited threads, the small classes' batches), one for
 *     its chunk list, one for oversize blocks; and SHARDS shards, each with
 *     one spin lock per class for its stack of batches and its carving run.
 *     Lock order: shard (two shards: lower index first), class, chunk list;
 *   - each thread has a record (tc_record) mapping instance slots to its
 *     caches. Slots are small integers handed out by the registry and reused
 *     after destroy; destroy clears the entries of every thread under the
 *     registry mutex, so a thread never sees a cache of a dead instance.
 *
 * The race between a thread's exit and an instance's destroy is settled by
 * the registry mutex: whichever runs first takes the cache; the other no
 * longer finds it (exit flushes the cache into the live instance; destroy
 * frees it and clears the thread's entry). */
#include "resources/thread_cache.h"

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "resources/mem_check.h"
#include "resources/pool_core.h"
#include "resources/spin_lock.h"

#define DIRECT_SLOTS 64           /* slots a record maps without indirection */
#define EMPTY_CLASS PMR__POOL_CLASSES /* a class that never has a block */
#define MAX_LIMIT 65534u /* count may reach limit + 1 in a uint16_t */
#define SEGMENTS 8 /* batches kept whole for classes of 8 and 16 bytes */
#define SMALL_CLASSES 2 /* blocks too small to carry batch bookkeeping */
#define SHARDS 8 /* central batch stacks per class */

/* A thread's view of one size class: 32 bytes. Two lists, so that no list
 * is ever walked: pops and pushes use `head`; when a push takes it past
 * `half`, the whole list becomes `full` (a batch ready to go), and the
 * previous `full`, if any, goes to the central pool as it is. An empty
 * `head` takes `full` back before asking the central pool. So a thread
 * parks at most 2 * half + 1 blocks, and between a flush and the next
 * refill lie at least half + 1 operations. */
typedef struct tc_class {
  void *head;                  /* the active list */
  void *full;                  /* a whole batch, NULL-terminated, or NULL */
  uint32_t block;              /* block size */
  _Atomic uint16_t count;      /* blocks on head (atomic: stats read it) */
  _Atomic uint16_t full_count; /* blocks on full */
  uint16_t half;               /* head's most blocks; also the refill batch */
} tc_class;

struct tc_state;
struct tc_record;

typedef struct tc_cache {
  tc_class cls[PMR__POOL_CLASSES + 1];
  /* Batches this thread moved (atomic only so stats may read them; the
   * owner never does a read-modify-write). */
  atomic_size_t refills, flushes;
  unsigned home; /* the central shard this thread flushes to */
  struct tc_state *owner;
  struct tc_record *rec;
  size_t slot;
  struct tc_cache *prev, *next; /* the owner's list of caches */
} tc_cache;

typedef struct tc_record {
  _Atomic(tc_cache *) *direct; /* the thread's tl_direct (TLS) */
  _Atomic(tc_cache *) *more;   /* slots DIRECT_SLOTS and up */
  size_t more_cap;
} tc_record;

/* One shard of the central pool: for each class, under its own lock, a
 * stack of whole batches and a run of a chunk to carve. 2 KiB, cache-line
 * aligned, so threads with different homes share no line. */
typedef struct tc_shard {
  struct tc_stack {
    pmr__spin lock;
    _Atomic(void *) head; /* a batch; its first block's words 1 and 2: the
                           * next batch and the count. Written under lock;
                           * read without it only as a hint. */
    char *cur, *end;      /* not carved yet */
  } cls[PMR__POOL_CLASSES];
} tc_shard;

typedef struct tc_state {
  size_t slot;
  size_t fast_slot;   /* slot, or DIRECT_SLOTS (always empty) when beyond */
  size_t small_limit; /* min(largest, 1024): the fast path's sizes */
  /* Byte offset of the class in a tc_cache, by fast_index(); EMPTY_CLASS's
   * for sizes not pooled. */
  uint16_t small_off[PMR__POOL_TABLE_LIMIT / 8];
  pmr__pool_core core; /* the central pool */
  pmr__spin class_lock[PMR__POOL_CLASSES];
  pmr__spin chunk_lock; /* core.chunks */
  pmr__spin big_lock;
  pmr__big_block big;
  pmr_thread_cache_options opts;
  tc_cache *caches; /* every thread's cache for this instance (registry mutex) */
  size_t gone_refills, gone_flushes; /* of caches freed (registry mutex) */
  atomic_uint next_home;
  /* Batches flushed by threads are kept whole (NULL-terminated lists), so a
   * refill takes one in O(1) instead of walking a cold list while other
   * threads wait. Blocks of 24 bytes and more stack them intrusively in
   * SHARDS stacks per class (shards, below): a thread flushes to and refills
   * from its home shard, and when that is empty it takes another shard's
   * whole stack home. So a thread's refills come from one thread's flushes in
   * order: adjacent blocks, which the hardware prefetcher follows. (With one
   * shared stack, two threads' batches alternate and every refill jumped
   * elsewhere in memory: 2 threads ran 2x slower per thread than 1.)
   * The two smallest classes keep up to SEGMENTS batches here; beyond
   * that they join core's plain list. */
  tc_shard *shards; /* SHARDS of them */
  struct tc_segment {
    void *head;
    size_t count;
  } segments[SMALL_CLASSES][SEGMENTS];
  uint8_t nsegments[SMALL_CLASSES];
} tc_state;

_Static_assert(sizeof(tc_state) <= sizeof(((pmr_thread_cache *)0)->pmr__state),
               "pmr_thread_cache.pmr__state is too small");
_Static_assert(sizeof(tc_class) == 32, "tc_class should be 32 bytes");
_Static_assert(sizeof(tc_shard) % 64 == 0, "shards should not share cache lines");

static tc_state *state_of(pmr_mem_resource *self) {
  return (tc_state *)(void *)((pmr_thread_cache *)self)->pmr__state.bytes;
}
static const tc_state *cstate_of(const pmr_thread_cache *tc) {
  return (const tc_state *)(const void *)tc->pmr__state.bytes;
}

/* ---- the registry ---------------------------------------------------------- */

static pthread_mutex_t registry = PTHREAD_MUTEX_INITIALIZER;
static tc_state **slots; /* slot -> live instance, NULL when free */
static size_t nslots;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t exit_key;
static bool key_ok;

static tc_record empty_record; /* a thread's record before its first use */

#if defined(__GNUC__) || defined(__clang__)
#define INITIAL_EXEC __attribute__((tls_model("initial-exec")))
#else
#define INITIAL_EXEC
#endif
static _Thread_local tc_record *tl_rec INITIAL_EXEC = &empty_record;
/* The thread's caches of the first DIRECT_SLOTS instances, by slot: the
 * fast path's one load. Entry DIRECT_SLOTS stays NULL (fast_slot of the
 * instances beyond). */
static _Thread_local _Atomic(tc_cache *) tl_direct[DIRECT_SLOTS + 1] INITIAL_EXEC;

static void thread_exit(void *arg);

static void make_key(void) { key_ok = pthread_key_create(&exit_key, thread_exit) == 0; }

/* The calling thread's cache for s if it has one (and s's slot is below
 * DIRECT_SLOTS): two loads. */
static inline tc_cache *my_cache(const tc_state *s) {
  return atomic_load_explicit(&tl_direct[s->fast_slot], memory_order_relaxed);
}

static _Atomic(tc_cache *) *entry_of(tc_record *rec, size_t slot) {
  if (slot < DIRECT_SLOTS) return rec->direct != NULL ? &rec->direct[slot] : NULL;
  slot -= DIRECT_SLOTS;
  return slot < rec->more_cap ? &rec->more[slot] : NULL;
}

/* my_cache for any slot (the record's overflow map is written only by its
 * own thread, so reading it here needs no lock). */
static tc_cache *find_cache(const tc_state *s) {
  _Atomic(tc_cache *) *e = entry_of(tl_rec, s->slot);
  return e != NULL ? atomic_load_explicit(e, memory_order_relaxed) : NULL;
}

/* Returns the calling thread's cache for s, making it (and the thread's
 * record) if needed. NULL when out of memory. */
static tc_cache *get_cache(tc_state *s) {
  tc_record *rec = tl_rec;
  if (rec == &empty_record) {
    pthread_once(&key_once, make_key);
    rec = (tc_record *)calloc(1, sizeof *rec);
    if (rec == NULL) return NULL;
    rec->direct = tl_direct;
    /* The key's destructor returns the caches when the thread exits. */
    if (!key_ok || pthread_setspecific(exit_key, rec) != 0) {
      free(rec);
      return NULL;
    }
    tl_rec = rec;
  }
  pthread_mutex_lock(&registry);
  _Atomic(tc_cache *) *e = entry_of(rec, s->slot);
  if (e == NULL) { /* grow the record's overflow map */
    size_t want = s->slot - DIRECT_SLOTS + 1, cap = rec->more_cap ? rec->more_cap : 8;
    while (cap < want) cap *= 2;
    _Atomic(tc_cache *) *more =
        (_Atomic(tc_cache *) *)calloc(cap, sizeof(_Atomic(tc_cache *)));
    if (more == NULL) {
      pthread_mutex_unlock(&registry);
      return NULL;
    }
    for (size_t i = 0; i < rec->more_cap; ++i)
      atomic_init(&more[i], atomic_load_explicit(&rec->more[i], memory_order_relaxed));
    free(rec->more);
    rec->more = more;
    rec->more_cap = cap;
    e = entry_of(rec, s->slot);
  }
  tc_cache *c = atomic_load_explicit(e, memory_order_relaxed);
  if (c == NULL && (c = (tc_cache *)calloc(1, sizeof *c)) != NULL) {
    for (unsigned i = 0; i < PMR__POOL_CLASSES; ++i) {
      size_t block = s->core.classes[i].block;
      size_t limit = s->opts.max_cached_bytes / block;
      if (limit > s->opts.max_cached_blocks) limit = s->opts.max_cached_blocks;
      if (limit < 2) limit = 2;
      c->cls[i].block = (uint32_t)block;
      c->cls[i].half = (uint16_t)(limit / 2);
    }
    /* Round robin: threads that share an instance get different homes. */
    c->home = atomic_fetch_add_explicit(&s->next_home, 1, memory_order_relaxed) % SHARDS;
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

/* count is atomic only so that stats may read it from another thread; its
 * owner updates it with a plain load and store, never a read-modify-write. */
static inline unsigned count_add(tc_class *k, int delta) {
  uint16_t n = (uint16_t)(atomic_load_explicit(&k->count, memory_order_relaxed) + delta);
  atomic_store_explicit(&k->count, n, memory_order_relaxed);
  return n;
}

/* Pops a block from the thread's list, or NULL when it is empty. */
static inline void *tc_pop(tc_class *k) {
  void *p = k->head;
  if (PMR_LIKELY(p != NULL)) {
    k->head = pmr__link_get(p);
    PMR__UNDEFINED(p, k->block);
    count_add(k, -1);
  }
  return p;
}

/* Pushes p onto the thread's list; false when the list is now over half. */
static inline bool tc_push(tc_class *k, void *p) {
  PMR__NOACCESS(p, k->block);
  pmr__link_set(p, k->head);
  k->head = p;
  return count_add(k, 1) <= k->half;
}

static inline void set_count(_Atomic uint16_t *c, size_t n) {
  atomic_store_explicit(c, (uint16_t)n, memory_order_relaxed);
}

/* ---- moving blocks between a thread and the central pool ------------------ */

static void *stack_head(struct tc_stack *st) {
  return atomic_load_explicit(&st->head, memory_order_relaxed);
}
static void set_stack_head(struct tc_stack *st, void *p) {
  atomic_store_explicit(&st->head, p, memory_order_relaxed);
}

/* Takes a batch of class idx (>= SMALL_CLASSES) from the home shard, else
 * another shard's whole stack: its first batch for the caller, the rest to
 * the home shard (whose content goes to that shard: a swap under both locks,
 * taken in shard order). NULL when every shard is empty. */
static void *take_batch(tc_state *s, unsigned home, unsigned idx, size_t *n) {
  struct tc_stack *h = &s->shards[home].cls[idx];
  void *p = NULL;
  if (stack_head(h) != NULL) {
    pmr__spin_lock(&h->lock);
    p = stack_head(h);
    if (p != NULL) set_stack_head(h, pmr__word_get(p, 1));
    pmr__spin_unlock(&h->lock);
  }
  for (unsigned i = 1; p == NULL && i < SHARDS; ++i) {
    unsigned other = (home + i) % SHARDS;
    struct tc_stack *v = &s->shards[other].cls[idx];
    if (stack_head(v) == NULL) continue;
    struct tc_stack *first = other < home ? v : h, *second = other < home ? h : v;
    pmr__spin_lock(&first->lock);
    pmr__spin_lock(&second->lock);
    p = stack_head(v);
    if (p != NULL) {
      set_stack_head(v, stack_head(h));
      set_stack_head(h, pmr__word_get(p, 1));
    }
    pmr__spin_unlock(&second->lock);
    pmr__spin_unlock(&first->lock);
  }
  if (p != NULL) *n = (size_t)(uintptr_t)pmr__word_get(p, 2);
  return p;
}

/* Thread class k (of cache c) is empty: takes up to a batch of blocks of
 * class idx from the central pool (a flushed batch, else free blocks, else a
 * run carved from a chunk, a new chunk from upstream if needed). Returns one
 * block and leaves the rest on k's list; NULL when upstream fails. */
static void *refill(tc_state *s, tc_cache *c, tc_class *k, unsigned idx) {
  pmr__pool_class *ck = &s->core.classes[idx];
  size_t batch = k->half, n = 1;
  void *p;
  if (idx >= SMALL_CLASSES && (p = take_batch(s, c->home, idx, &n)) != NULL)
    goto linked;
  pmr__spin_lock(&s->class_lock[idx]);
  if (idx < SMALL_CLASSES && s->nsegments[idx] != 0) {
    struct tc_segment seg = s->segments[idx][--s->nsegments[idx]];
    pmr__spin_unlock(&s->class_lock[idx]);
    p = seg.head;
    n = seg.count;
    goto linked;
  }
  if (ck->free != NULL) {
    p = ck->free;
    void *last = p, *next;
    while (n < batch && (next = pmr__link_get(last)) != NULL) {
      last = next;
      ++n;
    }
    ck->free = pmr__link_get(last);
    pmr__link_set(last, NULL);
    pmr__spin_unlock(&s->class_lock[idx]);
    goto linked;
  }
  pmr__spin_unlock(&s->class_lock[idx]);
  {
    /* Carve from the home shard's run; a new chunk becomes that run. Each
     * shard carves its own chunk: threads carving side by side in one chunk
     * interleave their runs, and then each core's prefetcher reads ahead into
     * lines the other core is writing (measured: 2 threads 2.3x slower per
     * thread than with a chunk each). */
    struct tc_stack *h = &s->shards[c->home].cls[idx];
    pmr__spin_lock(&h->lock);
    if ((size_t)(h->end - h->cur) < ck->block) {
      pmr__spin_lock(&s->class_lock[idx]);
      pmr__spin_lock(&s->chunk_lock);
      p = pmr__pool_core_refill(&s->core, ck);
      pmr__spin_unlock(&s->chunk_lock);
      if (p != NULL) {
        h->cur = (char *)p; /* the whole chunk, its first block included */
        h->end = ck->end;
        ck->cur = ck->end;
      }
      pmr__spin_unlock(&s->class_lock[idx]);
      if (p == NULL) {
        pmr__spin_unlock(&h->lock);
        return NULL;
      }
    }
    size_t run = (size_t)(h->end - h->cur) / ck->block;
    n = run < batch ? run : batch;
    char *b = h->cur;
    h->cur += n * ck->block;
    pmr__spin_unlock(&h->lock);
    /* Link the run into a list, outside the lock. */
    p = b;
    for (size_t i = 1; i < n; ++i, b += ck->block) pmr__link_set(b, b + ck->block);
    pmr__link_set(b, NULL);
  }
linked:
  k->head = pmr__link_get(p);
  PMR__UNDEFINED(p, k->block);
  set_count(&k->count, n - 1);
  atomic_store_explicit(&c->refills,
                        atomic_load_explicit(&c->refills, memory_order_relaxed) + 1,
                        memory_order_relaxed);
  return p;
}

/* Gives the batch first (n blocks, NULL-terminated) of class idx to the
 * central pool: onto the home shard's stack, in O(1), for blocks that can
 * carry the bookkeeping; the small classes keep up to SEGMENTS batches whole
 * and add the rest to the class's free list. */
static void give_back(tc_state *s, unsigned home, unsigned idx, void *first,
                      size_t n) {
  if (idx >= SMALL_CLASSES) {
    struct tc_stack *h = &s->shards[home].cls[idx];
    pmr__word_set(first, 2, (void *)(uintptr_t)n); /* outside the lock */
    pmr__spin_lock(&h->lock);
    pmr__word_set(first, 1, stack_head(h));
    set_stack_head(h, first);
    pmr__spin_unlock(&h->lock);
    return;
  }
  pmr__pool_class *ck = &s->core.classes[idx];
  pmr__spin_lock(&s->class_lock[idx]);
  if (s->nsegments[idx] < SEGMENTS) {
    struct tc_segment seg = {first, n};
    s->segments[idx][s->nsegments[idx]++] = seg;
  } else {
    void *last = first, *next;
    while ((next = pmr__link_get(last)) != NULL) last = next;
    pmr__link_set(last, ck->free);
    ck->free = first;
  }
  pmr__spin_unlock(&s->class_lock[idx]);
}

/* Thread class k (of cache c) went past half: its list becomes the full
 * batch, and the full batch before it goes to the central pool. */
static void flush(tc_state *s, tc_cache *c, tc_class *k, unsigned idx) {
  if (k->full != NULL) {
    give_back(s, c->home, idx, k->full,
              atomic_load_explicit(&k->full_count, memory_order_relaxed));
    atomic_store_explicit(&c->flushes,
                          atomic_load_explicit(&c->flushes, memory_order_relaxed) + 1,
                          memory_order_relaxed);
  }
  k->full = k->head;
  set_count(&k->full_count, atomic_load_explicit(&k->count, memory_order_relaxed));
  k->head = NULL;
  set_count(&k->count, 0);
}

/* Everything in cache c goes back to its instance's central pool. */
static void flush_all(tc_cache *c) {
  tc_state *s = c->owner;
  for (unsigned idx = 0; idx < PMR__POOL_CLASSES; ++idx) {
    tc_class *k = &c->cls[idx];
    if (k->head != NULL)
      give_back(s, c->home, idx, k->head,
                atomic_load_explicit(&k->count, memory_order_relaxed));
    if (k->full != NULL)
      give_back(s, c->home, idx, k->full,
                atomic_load_explicit(&k->full_count, memory_order_relaxed));
    k->head = k->full = NULL;
    set_count(&k->count, 0);
    set_count(&k->full_count, 0);
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

/* Frees cache c, keeping its batch counts in its instance's totals
 * (registry mutex held). */
static void retire_cache(tc_cache *c) {
  c->owner->gone_refills += atomic_load_explicit(&c->refills, memory_order_relaxed);
  c->owner->gone_flushes += atomic_load_explicit(&c->flushes, memory_order_relaxed);
  free(c);
}

/* The thread-exit callback: every cache of the thread goes back to its
 * (live) instance. Instances destroyed earlier already took theirs. */
static void thread_exit(void *arg) {
  tc_record *rec = (tc_record *)arg;
  pthread_mutex_lock(&registry);
  for (size_t i = 0; i < DIRECT_SLOTS + rec->more_cap; ++i) {
    _Atomic(tc_cache *) *e = entry_of(rec, i);
    tc_cache *c = atomic_load_explicit(e, memory_order_relaxed);
    if (c == NULL) continue;
    flush_all(c);
    unlink_cache(c);
    retire_cache(c);
  }
  pthread_mutex_unlock(&registry);
  free(rec->more);
  free(rec);
  tl_rec = &empty_record; /* a later allocation in this thread starts afresh */
  for (size_t i = 0; i < DIRECT_SLOTS; ++i)
    atomic_store_explicit(&tl_direct[i], NULL, memory_order_relaxed);
}

/* Frees every cache of s, clearing the owning threads' entries. */
static void drop_caches(tc_state *s) {
  pthread_mutex_lock(&registry);
  for (tc_cache *c = s->caches, *next; c != NULL; c = next) {
    next = c->next;
    atomic_store_explicit(entry_of(c->rec, c->slot), NULL, memory_order_relaxed);
    retire_cache(c);
  }
  s->caches = NULL;
  pthread_mutex_unlock(&registry);
}

/* ---- the resource --------------------------------------------------------- */

PMR_NOINLINE static void *tc_allocate_slow(tc_state *s, size_t bytes,
                                           size_t alignment) {
  pmr__pool_class *ck = pmr__pool_find_nonzero(&s->core, bytes, alignment);
  if (ck == &s->core.empty) {
    pmr__spin_lock(&s->big_lock);
    void *p = pmr__big_alloc(&s->big, s->core.upstream, bytes, alignment);
    pmr__spin_unlock(&s->big_lock);
    return p;
  }
  unsigned idx = (unsigned)(ck - s->core.classes);
  tc_cache *c = find_cache(s);
  if (c == NULL && (c = get_cache(s)) == NULL) return NULL;
  tc_class *k = &c->cls[idx];
  void *p = tc_pop(k);
  if (p != NULL) return p;
  if (k->full != NULL) { /* the full batch becomes the list */
    k->head = k->full;
    set_count(&k->count, atomic_load_explicit(&k->full_count, memory_order_relaxed));
    k->full = NULL;
    set_count(&k->full_count, 0);
    return tc_pop(k);
  }
  return refill(s, c, k, idx);
}

/* The size rounded up to the alignment, minus 1: for bytes > 0 and a power
 * of two alignment, ((bytes - 1) | (alignment - 1)) + 1 is that size. Fewer
 * instructions than adding and masking; SIZE_MAX for bytes == 0. The
 * fast paths take it when below their limit and look up small_off[x / 8]. */
static inline size_t fast_index(size_t bytes, size_t alignment) {
  return (bytes - 1) | (alignment - 1);
}

static void *tc_allocate(pmr_mem_resource *self, size_t bytes,
                         size_t alignment) {
  tc_state *s = state_of(self);
  size_t x = fast_index(bytes, alignment);
  if (PMR_LIKELY(x < PMR__POOL_TABLE_LIMIT)) {
    tc_cache *c = my_cache(s);
    if (PMR_LIKELY(c != NULL)) {
      tc_class *k = (tc_class *)(void *)((char *)c + s->small_off[x >> 3]);
      void *p = tc_pop(k);
      if (PMR_LIKELY(p != NULL)) return p;
    }
  }
  return tc_allocate_slow(s, bytes, alignment);
}

PMR_NOINLINE static void tc_deallocate_slow(tc_state *s, void *p, size_t bytes,
                                            size_t alignment) {
  pmr__pool_class *ck = pmr__pool_find_nonzero(&s->core, bytes, alignment);
  if (ck == &s->core.empty) {
    pmr__spin_lock(&s->big_lock);
    pmr__big_free(s->core.upstream, p, bytes, alignment);
    pmr__spin_unlock(&s->big_lock);
    return;
  }
  unsigned idx = (unsigned)(ck - s->core.classes);
  tc_cache *c = find_cache(s);
  if (c == NULL && (c = get_cache(s)) == NULL) {
    /* No cache (out of memory): straight to the central pool. */
    pmr__spin_lock(&s->class_lock[idx]);
    pmr__pool_put(ck, p);
    pmr__spin_unlock(&s->class_lock[idx]);
    return;
  }
  tc_class *k = &c->cls[idx];
  if (!tc_push(k, p)) flush(s, c, k, idx);
}

static void tc_deallocate(pmr_mem_resource *self, void *p, size_t bytes,
                          size_t alignment) {
  tc_state *s = state_of(self);
  size_t x = fast_index(bytes, alignment);
  if (PMR_LIKELY(x < s->small_limit)) { /* 0 < rounded size <= small_limit */
    tc_cache *c = my_cache(s);
    if (PMR_LIKELY(c != NULL)) {
      tc_class *k = (tc_class *)(void *)((char *)c + s->small_off[x >> 3]);
      if (PMR_UNLIKELY(!tc_push(k, p))) flush(s, c, k, (unsigned)(k - c->cls));
      return;
    }
  }
  tc_deallocate_slow(s, p, bytes, alignment);
}

static const pmr_mem_resource_ops tc_ops = {
    .allocate = tc_allocate,
    .deallocate = tc_deallocate,
};

static void clear_shards(tc_state *s) {
  for (unsigned i = 0; i < SHARDS; ++i)
    for (unsigned j = 0; j < PMR__POOL_CLASSES; ++j) {
      atomic_init(&s->shards[i].cls[j].lock, 0);
      atomic_init(&s->shards[i].cls[j].head, NULL);
      s->shards[i].cls[j].cur = s->shards[i].cls[j].end = NULL;
    }
}

static size_t clamp(size_t v, size_t dflt, size_t max) {
  if (v == 0) return dflt;
  return v > max ? max : v;
}

bool pmr_thread_cache_init(pmr_thread_cache *tc,
                           const pmr_thread_cache_options *opts,
                           pmr_mem_resource *upstream) {
  tc->base.ops = &tc_ops;
  tc_state *s = state_of(&tc->base);
  memset(s, 0, sizeof *s);
  pmr_thread_cache_options o;
  memset(&o, 0, sizeof o);
  if (opts != NULL) o = *opts;
  o.pool = pmr__pool_effective_options(&o.pool);
  o.max_cached_blocks =
      clamp(o.max_cached_blocks, PMR_THREAD_CACHE_DEFAULT_MAX_CACHED_BLOCKS, MAX_LIMIT);
  o.max_cached_bytes = clamp(o.max_cached_bytes,
                             PMR_THREAD_CACHE_DEFAULT_MAX_CACHED_BYTES, SIZE_MAX);
  s->opts = o;
  pmr__pool_core_init(&s->core, &o.pool, upstream);
  s->small_limit = s->core.largest < PMR__POOL_TABLE_LIMIT ? s->core.largest
                                                           : PMR__POOL_TABLE_LIMIT;
  for (size_t i = 0; i < PMR__POOL_TABLE_LIMIT / 8; ++i) {
    /* Rounded sizes 8i + 1 .. 8i + 8: core's entry i + 1. */
    const char *k = (const char *)&s->core + s->core.small[i + 1];
    size_t idx = k == (const char *)&s->core.empty
                     ? EMPTY_CLASS
                     : (size_t)((const pmr__pool_class *)(const void *)k -
                                s->core.classes);
    s->small_off[i] = (uint16_t)(offsetof(tc_cache, cls) + idx * sizeof(tc_class));
  }
  for (unsigned i = 0; i < PMR__POOL_CLASSES; ++i) atomic_init(&s->class_lock[i], 0);
  atomic_init(&s->chunk_lock, 0);
  atomic_init(&s->big_lock, 0);
  pmr__big_init(&s->big);
  atomic_init(&s->next_home, 0);
  s->shards = (tc_shard *)aligned_alloc(64, SHARDS * sizeof(tc_shard));
  if (s->shards == NULL) return false;
  clear_shards(s);

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
      return false;
    }
    for (size_t i = nslots; i < cap; ++i) grown[i] = NULL;
    slots = grown;
    nslots = cap;
  }
  slots[slot] = s;
  s->slot = slot;
  s->fast_slot = slot < DIRECT_SLOTS ? slot : DIRECT_SLOTS;
  pthread_mutex_unlock(&registry);
  return true;
}

void pmr_thread_cache_release(pmr_thread_cache *tc) {
  tc_state *s = state_of(&tc->base);
  drop_caches(s);
  pmr__big_release(&s->big, s->core.upstream);
  pmr__pool_core_release(&s->core);
  clear_shards(s); /* the batches lived in the chunks */
  memset(s->nsegments, 0, sizeof s->nsegments);
}

void pmr_thread_cache_destroy(pmr_thread_cache *tc) {
  tc_state *s = state_of(&tc->base);
  pmr_thread_cache_release(tc);
  pthread_mutex_lock(&registry);
  slots[s->slot] = NULL;
  pthread_mutex_unlock(&registry);
  free(s->shards);
  s->shards = NULL;
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
    for (unsigned i = 0; i < PMR__POOL_CLASSES; ++i) {
      size_t n = atomic_load_explicit(&c->cls[i].count, memory_order_relaxed) +
                 atomic_load_explicit(&c->cls[i].full_count, memory_order_relaxed);
      st.cached_blocks += n;
      st.cached_bytes += n * c->cls[i].block;
    }
  }
  pthread_mutex_unlock(&registry);
  return st;
}

pmr_thread_cache_options pmr_thread_cache_get_options(const pmr_thread_cache *tc) {
  return cstate_of(tc)->opts;
}

pmr_mem_resource *pmr_thread_cache_upstream(const pmr_thread_cache *tc) {
  return cstate_of(tc)->core.upstream;
}
