/* pmr_debug_resource: guarded blocks, a table of user pointers, a FIFO
 * quarantine of freed blocks and a bounded memory of returned ones, all
 * behind one mutex. */
#include "resources/pmr_debug_resource.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resources/internal/live_registry.h"
#include "resources/internal/ptr_table.h"

#define GUARD ((size_t)PMR_DEBUG_GUARD_BYTES)
#define GUARD_BYTE 0xFD /* around blocks */
#define FRESH_BYTE 0xCD /* new blocks: reading it means "never written" */
#define FREED_BYTE 0xDD /* blocks in quarantine */
#define MIN_ALIGN ((size_t)16)
#define HEADER_MAGIC 0x2167626472616d70ull /* "pmradbg!" */
/* The first size of the table of user pointers. */
#define FIRST_SLOTS ((size_t)256)
/* Returned pointers remembered to name a late double free as such. */
#define FREED_HISTORY ((size_t)4096)

/* At the start of each upstream block: a debugger or a core dump shows what
 * the block is. Only ever compared with the table's record, never trusted. */
typedef struct {
  uint64_t magic, serial, bytes, alignment;
} header;

enum { LIVE = 1, QUARANTINED, FREED };

/* One user pointer the resource knows (state: LIVE, QUARANTINED, FREED). */
typedef pmr_impl_ptr_entry entry;

typedef struct {
  unsigned char *p;
  uint64_t serial; /* tells a stale item from a reused address */
} ring_item;

/* A growable FIFO; cap is 0 or a power of two. */
typedef struct {
  ring_item *items;
  size_t cap, head, len;
} ring;

typedef struct state {
  pmr_mem_resource *upstream;
  const void *self; /* for messages */
  pthread_mutex_t lock;
  pmr_impl_ptr_table table; /* the user pointers it knows */
  ring quarantine, history;
  size_t q_max_blocks, q_max_bytes, q_bytes;
  pmr_debug_resource_stats c;
  uint64_t fail_countdown; /* 0: off */
  size_t byte_limit;
  bool byte_limit_on, fail_always, abort_on_misuse;
  char name[64];
  pmr_impl_live_node node; /* in the registry of live resources */
} state;

PMR_IMPL_STATE_FITS(pmr_debug_resource, state);
_Static_assert(sizeof(header) % MIN_ALIGN == 0, "header keeps guards aligned");

static state *state_of(pmr_mem_resource *self) {
  return (state *)(void *)((pmr_debug_resource *)self)->pmr_impl_state.bytes;
}
/* Readers lock too: the mutex is logically mutable. */
static state *mstate_of(const pmr_debug_resource *d) {
  return (state *)(void *)(uintptr_t)d->pmr_impl_state.bytes;
}

/* ---- block layout ----------------------------------------------------------
 */

static size_t up_align(size_t alignment) {
  return alignment > MIN_ALIGN ? alignment : MIN_ALIGN;
}
/* Header plus front guard, rounded up so the user block is aligned. */
static size_t prefix_of(size_t alignment) {
  size_t a = up_align(alignment);
  return pmr_impl_round_up(sizeof(header) + GUARD, a);
}

static void header_bytes(const entry *e, unsigned char out[sizeof(header)]) {
  header h;
  memset(&h, 0, sizeof h);
  h.magic = HEADER_MAGIC;
  h.serial = e->serial;
  h.bytes = e->bytes;
  h.alignment = e->alignment;
  memcpy(out, &h, sizeof h);
}

static void write_front(const entry *e) {
  size_t pre = prefix_of(e->alignment);
  unsigned char *base = e->p - pre;
  header_bytes(e, base);
  memset(base + sizeof(header), GUARD_BYTE, pre - sizeof(header));
}

/* ---- reports ---------------------------------------------------------------
 */

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 2, 3)))
#endif
static void
report(state *s, const char *format, ...) {
  char message[448];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof message, format, args);
  va_end(args);
  ++s->c.misuse;
  if (s->name[0] != '\0')
    pmr_report_misuse("debug_resource \"%s\" %p: %s", s->name, s->self,
                      message);
  else
    pmr_report_misuse("debug_resource %p: %s", s->self, message);
}

/* Checks (and, once reported, restores) the header and guards of e and, in
 * quarantine, its freed fill. Returns the number of problems. */
static size_t check_block(state *s, const entry *e, const char *found) {
  size_t problems = 0, pre = prefix_of(e->alignment), n = e->bytes;
  unsigned char *user = e->p, *base = user - pre;
  unsigned char hb[sizeof(header)];
  header_bytes(e, hb);

  size_t changed = 0, nearest = 0;
  for (size_t k = pre; k-- > 0;) {
    unsigned char want = k < sizeof hb ? hb[k] : GUARD_BYTE;
    if (base[k] != want && changed++ == 0) nearest = pre - k;
  }
  if (changed != 0) {
    report(s,
           "buffer underrun before block %p (#%" PRIu64
           ", %zu bytes, alignment %zu): %zu of the %zu bytes before it "
           "overwritten, the nearest at offset -%zu; found %s",
           (void *)user, e->serial, n, e->alignment, changed, pre, nearest,
           found);
    write_front(e);
    ++problems;
  }

  changed = 0;
  size_t first = 0;
  for (size_t i = 0; i < GUARD; ++i)
    if (user[n + i] != GUARD_BYTE && changed++ == 0) first = i;
  if (changed != 0) {
    report(s,
           "buffer overrun after block %p (#%" PRIu64
           ", %zu bytes, alignment %zu): %zu of the %zu guard bytes after it "
           "overwritten, the first at offset %zu; found %s",
           (void *)user, e->serial, n, e->alignment, changed, GUARD, n + first,
           found);
    memset(user + n, GUARD_BYTE, GUARD);
    ++problems;
  }

  if (e->state == QUARANTINED) {
    changed = 0;
    for (size_t i = 0; i < n; ++i)
      if (user[i] != FREED_BYTE && changed++ == 0) first = i;
    if (changed != 0) {
      report(s,
             "use after free: block %p (#%" PRIu64
             ", %zu bytes, alignment %zu) was written after it was freed: "
             "%zu bytes changed, the first at offset %zu; found %s",
             (void *)user, e->serial, n, e->alignment, changed, first, found);
      memset(user, FREED_BYTE, n);
      ++problems;
    }
  }
  return problems;
}

/* ---- the table of user pointers --------------------------------------------
 */

static entry *table_find(state *s, const void *p) {
  return pmr_impl_ptr_table_find(&s->table, p);
}

/* Makes room for one more entry, so allocate fails cleanly instead of
 * handing out a block it could not track. */
static bool table_reserve(state *s) {
  return pmr_impl_ptr_table_reserve(&s->table, FIRST_SLOTS);
}

/* ---- rings -----------------------------------------------------------------
 */

static bool ring_push(ring *r, unsigned char *p, uint64_t serial) {
  if (r->len == r->cap) {
    size_t cap = r->cap == 0 ? 16 : r->cap * 2;
    if (cap > SIZE_MAX / sizeof(ring_item)) return false;
    ring_item *items = (ring_item *)malloc(cap * sizeof(ring_item));
    if (items == NULL) return false;
    for (size_t i = 0; i < r->len; ++i)
      items[i] = r->items[(r->head + i) & (r->cap - 1)];
    free(r->items);
    r->items = items;
    r->cap = cap;
    r->head = 0;
  }
  ring_item it = {p, serial};
  r->items[(r->head + r->len) & (r->cap - 1)] = it;
  ++r->len;
  return true;
}

static ring_item ring_pop(ring *r) {
  ring_item it = r->items[r->head];
  r->head = (r->head + 1) & (r->cap - 1);
  --r->len;
  return it;
}

static void ring_free(ring *r) {
  free(r->items);
  r->items = NULL;
  r->cap = r->head = r->len = 0;
}

/* ---- freeing ---------------------------------------------------------------
 */

static void upstream_free(state *s, const entry *e) {
  size_t pre = prefix_of(e->alignment);
  pmr_deallocate(s->upstream, e->p - pre, pre + e->bytes + GUARD,
                 up_align(e->alignment));
}

/* Gives e's memory to upstream and remembers its address as freed, forgetting
 * the oldest remembered one past FREED_HISTORY. Invalidates e. */
static void release_block(state *s, entry *e) {
  unsigned char *p = e->p;
  uint64_t serial = e->serial;
  e->state = FREED;
  upstream_free(s, e);
  if (s->history.len == FREED_HISTORY) {
    ring_item old = ring_pop(&s->history);
    entry *o = table_find(s, old.p);
    if (o != NULL && o->state == FREED && o->serial == old.serial)
      pmr_impl_ptr_table_remove(&s->table, o);
  }
  if (!ring_push(&s->history, p, serial)) { /* out of memory: forget it */
    entry *f = table_find(s, p);
    if (f != NULL) pmr_impl_ptr_table_remove(&s->table, f);
  }
}

/* The oldest block of the quarantine: checked, then given to upstream. */
static size_t evict_one(state *s) {
  ring_item it = ring_pop(&s->quarantine);
  entry *e = table_find(s, it.p);
  if (e == NULL || e->state != QUARANTINED || e->serial != it.serial) return 0;
  s->q_bytes -= e->bytes;
  size_t problems = check_block(s, e, "when it left quarantine");
  release_block(s, e);
  return problems;
}

static size_t flush_locked(state *s) {
  size_t problems = 0;
  while (s->quarantine.len > 0) problems += evict_one(s);
  return problems;
}

/* A deallocation accepted: counts, then quarantine (or upstream at once). */
static size_t free_block(state *s, entry *e) {
  size_t problems = check_block(s, e, "by deallocate");
  unsigned char *p = e->p;
  uint64_t serial = e->serial;
  size_t n = e->bytes;
  ++s->c.deallocations;
  --s->c.blocks_in_use;
  s->c.bytes_in_use -= n;
  if (s->q_max_blocks == 0 || n > s->q_max_bytes) {
    release_block(s, e);
    return problems;
  }
  memset(p, FREED_BYTE, n);
  e->state = QUARANTINED;
  while (s->quarantine.len > 0 && (s->quarantine.len >= s->q_max_blocks ||
                                   n > s->q_max_bytes - s->q_bytes))
    problems += evict_one(s);
  e = table_find(s, p); /* evictions may have moved it */
  if (!ring_push(&s->quarantine, p, serial)) {
    release_block(s, e); /* no room to remember it: skip the quarantine */
    return problems;
  }
  s->q_bytes += n;
  return problems;
}

/* The block p names if it is live with these sizes; otherwise reports the
 * misuse of operation `op` and returns NULL. */
static entry *validate(state *s, void *p, size_t bytes, size_t alignment,
                       bool freeing) {
  const char *op = freeing ? "deallocate" : "try_resize";
  entry *e = table_find(s, p);
  if (e == NULL) {
    /* Not a block start: say which block it points into, if any. The
     * search is slow, but only misuse pays for it. */
    char inside[160] = "";
    uintptr_t u = (uintptr_t)p;
    for (size_t i = 0; i < s->table.cap; ++i) {
      const entry *b = &s->table.slots[i];
      uintptr_t start = (uintptr_t)b->p;
      if (b->p != NULL && b->state != FREED && u > start &&
          u - start < b->bytes) {
        snprintf(inside, sizeof inside,
                 "; it points %zu bytes into block %p (#%" PRIu64
                 ", %zu bytes, alignment %zu%s)",
                 (size_t)(u - start), (void *)b->p, b->serial, b->bytes,
                 b->alignment, b->state == QUARANTINED ? ", freed" : "");
        break;
      }
    }
    report(s,
           "%s(%p, %zu bytes, alignment %zu) of a pointer it never gave "
           "out%s; ignored",
           op, p, bytes, alignment, inside);
    return NULL;
  }
  if (e->state != LIVE) {
    report(s,
           "%s %p (%s(%zu bytes, alignment %zu)): block #%" PRIu64
           " of %zu bytes, alignment %zu, was freed already (%s); ignored",
           freeing ? "double free of" : "try_resize of freed block", p, op,
           bytes, alignment, e->serial, e->bytes, e->alignment,
           e->state == QUARANTINED ? "it is in quarantine"
                                   : "and returned to upstream");
    return NULL;
  }
  if (e->bytes != bytes || e->alignment != alignment) {
    report(s,
           "%p (#%" PRIu64
           ") was allocated with %zu bytes, alignment %zu, "
           "but %s %zu bytes, alignment %zu; ignored",
           p, e->serial, e->bytes, e->alignment,
           freeing ? "deallocated with" : "resized from", bytes, alignment);
    return NULL;
  }
  return e;
}

/* ---- hooks -----------------------------------------------------------------
 */

static bool over_limit(const state *s, size_t more) {
  return s->byte_limit_on && (s->c.bytes_in_use > s->byte_limit ||
                              more > s->byte_limit - s->c.bytes_in_use);
}

static void note_in_use(state *s, size_t more) {
  s->c.bytes_in_use += more;
  if (s->c.bytes_in_use > s->c.peak_bytes_in_use)
    s->c.peak_bytes_in_use = s->c.bytes_in_use;
}

static void *allocate_locked(state *s, size_t bytes, size_t alignment) {
  bool fail = s->fail_always || over_limit(s, bytes);
  if (s->fail_countdown != 0 && --s->fail_countdown == 0) fail = true;
  if (fail) {
    ++s->c.injected_failures;
    errno = ENOMEM;
    return NULL;
  }
  size_t a = up_align(alignment), pre = prefix_of(alignment);
  if (pre > SIZE_MAX - GUARD - a || bytes > SIZE_MAX - GUARD - a - pre ||
      !table_reserve(s)) {
    errno = ENOMEM;
    return NULL;
  }
  unsigned char *base =
      (unsigned char *)pmr_allocate(s->upstream, pre + bytes + GUARD, a);
  if (base == NULL) return NULL; /* errno from upstream */
  entry e = {base + pre, ++s->c.allocations, bytes, alignment, LIVE};
  write_front(&e);
  memset(e.p, FRESH_BYTE, bytes);
  memset(e.p + bytes, GUARD_BYTE, GUARD);
  pmr_impl_ptr_table_put(&s->table, &e);
  ++s->c.blocks_in_use;
  note_in_use(s, bytes);
  return e.p;
}

static void *dbg_allocate(pmr_mem_resource *self, size_t bytes,
                          size_t alignment) {
  state *s = state_of(self);
  int saved = errno; /* the contract: success leaves errno alone */
  pthread_mutex_lock(&s->lock);
  void *p = allocate_locked(s, bytes, alignment);
  if (p == NULL) ++s->c.failed_allocations;
  int err = p == NULL ? errno : saved;
  pthread_mutex_unlock(&s->lock);
  errno = err;
  return p;
}

/* Abort after a report only when asked to and when no handler of the user's
 * is installed: a user's handler (a test asserting on messages) decides. */
static bool should_abort(const state *s) {
  return s->abort_on_misuse && pmr_get_misuse_handler(NULL) == NULL;
}

static void dbg_deallocate(pmr_mem_resource *self, void *p, size_t bytes,
                           size_t alignment) {
  state *s = state_of(self);
  pthread_mutex_lock(&s->lock);
  entry *e = validate(s, p, bytes, alignment, true);
  size_t problems = e == NULL ? 1 : free_block(s, e);
  bool die = problems != 0 && should_abort(s);
  pthread_mutex_unlock(&s->lock);
  if (die) abort();
}

static bool dbg_try_resize(pmr_mem_resource *self, void *p, size_t old_bytes,
                           size_t new_bytes, size_t alignment) {
  state *s = state_of(self);
  bool resized = false;
  pthread_mutex_lock(&s->lock);
  entry *e = validate(s, p, old_bytes, alignment, false);
  size_t problems = e == NULL ? 1 : check_block(s, e, "by try_resize");
  if (e != NULL) {
    size_t a = up_align(alignment), pre = prefix_of(alignment);
    bool refused = new_bytes > old_bytes &&
                   (s->fail_always || over_limit(s, new_bytes - old_bytes));
    /* pre + GUARD + a fit in size_t: the block was allocated with them. */
    if (!refused && new_bytes <= SIZE_MAX - GUARD - a - pre &&
        pmr_try_resize(s->upstream, e->p - pre, pre + old_bytes + GUARD,
                       pre + new_bytes + GUARD, a)) {
      if (new_bytes > old_bytes) {
        memset(e->p + old_bytes, FRESH_BYTE, new_bytes - old_bytes);
        note_in_use(s, new_bytes - old_bytes);
      } else {
        s->c.bytes_in_use -= old_bytes - new_bytes;
      }
      memset(e->p + new_bytes, GUARD_BYTE, GUARD);
      e->bytes = new_bytes;
      write_front(e);
      resized = true;
    }
  }
  bool die = problems != 0 && should_abort(s);
  pthread_mutex_unlock(&s->lock);
  if (die) abort();
  return resized;
}

static unsigned dbg_traits(const pmr_mem_resource *self) {
  (void)self;
  return PMR_TRAIT_THREAD_SAFE;
}

static const pmr_mem_resource_ops debug_ops = {
    .allocate = dbg_allocate,
    .deallocate = dbg_deallocate,
    .is_equal = NULL, /* identity only */
    .try_resize = dbg_try_resize,
    .traits = dbg_traits,
    /* None: it checks every deallocation against the exact request, which a
     * caller that keeps no sizes could not give back. */
    .usable_size = NULL,
};

/* ---- public functions ------------------------------------------------------
 */

enum { DEFAULT_Q_BLOCKS = 1024, DEFAULT_Q_BYTES = 4 << 20 };

/* ---- live resources --------------------------------------------------------
 * Before fork(): every live resource's mutex (a thread of the parent may be
 * inside one, calling upstream). In the child the mutexes are new. */

static bool lock_at(void *instance, size_t k, pmr_impl_live_lock *out) {
  out->spin = NULL;
  out->mutex = &state_of(&((pmr_debug_resource *)instance)->base)->lock;
  return k == 0;
}

static pmr_impl_live_registry registry =
    PMR_IMPL_LIVE_REGISTRY("debug_resource", lock_at, NULL);

bool pmr_debug_resource_init(pmr_debug_resource *d,
                             const pmr_debug_resource_options *opts,
                             pmr_mem_resource *upstream) {
  PMR_IMPL_CHECK_NOT_NULL(d, "debug_resource", false);
  pmr_debug_resource_options o;
  memset(&o, 0, sizeof o);
  if (opts != NULL) o = *opts;
  state *s = state_of(&d->base);
  if (pmr_impl_live_has(&registry, d)) {
    /* Init over a live resource: destroyed first (its leaks reported). */
    pmr_impl_live_report_init(&registry, d);
    pmr_debug_resource_destroy(d);
  }
  d->base.ops = &debug_ops;
  memset(s, 0, sizeof *s);
  s->upstream = pmr_resource_or_default(upstream);
  s->self = d;
  pthread_mutex_init(&s->lock, NULL);
  s->q_max_blocks = o.no_quarantine            ? 0
                    : o.quarantine_blocks != 0 ? o.quarantine_blocks
                                               : DEFAULT_Q_BLOCKS;
  s->q_max_bytes = o.no_quarantine           ? 0
                   : o.quarantine_bytes != 0 ? o.quarantine_bytes
                                             : DEFAULT_Q_BYTES;
  s->abort_on_misuse = !o.continue_on_misuse;
  if (o.name != NULL) {
    size_t n = strlen(o.name);
    if (n > sizeof s->name - 1) n = sizeof s->name - 1;
    memcpy(s->name, o.name, n);
    s->name[n] = '\0';
  }
  pmr_impl_live_add(&registry, &s->node, d);
  return true;
}

static int by_serial(const void *a, const void *b) {
  uint64_t x = ((const entry *)a)->serial, y = ((const entry *)b)->serial;
  return (x > y) - (x < y);
}

static void leak(state *s, const entry *e, size_t i, size_t n) {
  report(s,
         "leak %zu of %zu: block %p (#%" PRIu64
         ", %zu bytes, alignment %zu) was never deallocated; freed to "
         "upstream",
         i, n, (void *)e->p, e->serial, e->bytes, e->alignment);
  upstream_free(s, e);
}

size_t pmr_debug_resource_destroy(pmr_debug_resource *d) {
  PMR_IMPL_CHECK_NOT_NULL(d, "debug_resource", 0);
  state *s = state_of(&d->base);
  if (!pmr_impl_live_remove(&registry, &s->node))
    return 0; /* destroyed already */
  pthread_mutex_lock(&s->lock);
  size_t problems = flush_locked(s);
  size_t leaks = 0;
  for (size_t i = 0; i < s->table.cap; ++i)
    if (s->table.slots[i].p != NULL && s->table.slots[i].state == LIVE) {
      problems += check_block(s, &s->table.slots[i], "at destroy");
      ++leaks;
    }
  if (leaks != 0) {
    /* Listed in allocation order when there is memory to sort them. */
    entry *list = (entry *)malloc(leaks * sizeof(entry));
    size_t k = 0;
    for (size_t i = 0; i < s->table.cap; ++i) {
      entry *e = &s->table.slots[i];
      if (e->p == NULL || e->state != LIVE) continue;
      if (list != NULL)
        list[k++] = *e;
      else
        leak(s, e, ++k, leaks);
    }
    if (list != NULL) {
      qsort(list, leaks, sizeof(entry), by_serial);
      for (size_t i = 0; i < leaks; ++i) leak(s, &list[i], i + 1, leaks);
      free(list);
    }
    problems += leaks;
  }
  pmr_impl_ptr_table_free(&s->table);
  ring_free(&s->quarantine);
  ring_free(&s->history);
  bool die = problems != 0 && should_abort(s);
  pthread_mutex_unlock(&s->lock);
  pthread_mutex_destroy(&s->lock);
  if (die) abort();
  return leaks;
}

pmr_mem_resource *pmr_debug_resource_upstream(const pmr_debug_resource *d) {
  PMR_IMPL_CHECK_NOT_NULL(d, "debug_resource", NULL);
  return mstate_of(d)->upstream;
}

size_t pmr_debug_resource_check(pmr_debug_resource *d) {
  PMR_IMPL_CHECK_NOT_NULL(d, "debug_resource", 0);
  state *s = state_of(&d->base);
  pthread_mutex_lock(&s->lock);
  size_t problems = 0;
  for (size_t i = 0; i < s->table.cap; ++i)
    if (s->table.slots[i].p != NULL && s->table.slots[i].state != FREED)
      problems +=
          check_block(s, &s->table.slots[i], "by pmr_debug_resource_check");
  bool die = problems != 0 && should_abort(s);
  pthread_mutex_unlock(&s->lock);
  if (die) abort();
  return problems;
}

size_t pmr_debug_resource_flush_quarantine(pmr_debug_resource *d) {
  PMR_IMPL_CHECK_NOT_NULL(d, "debug_resource", 0);
  state *s = state_of(&d->base);
  pthread_mutex_lock(&s->lock);
  size_t problems = flush_locked(s);
  bool die = problems != 0 && should_abort(s);
  pthread_mutex_unlock(&s->lock);
  if (die) abort();
  return problems;
}

pmr_debug_resource_stats pmr_debug_resource_get_stats(
    const pmr_debug_resource *d) {
  PMR_IMPL_CHECK_NOT_NULL(d, "debug_resource", (pmr_debug_resource_stats){0});
  state *s = mstate_of(d);
  pthread_mutex_lock(&s->lock);
  pmr_debug_resource_stats c = s->c;
  c.quarantined_blocks = s->quarantine.len;
  c.quarantined_bytes = s->q_bytes;
  pthread_mutex_unlock(&s->lock);
  return c;
}

pmr_debug_resource_options pmr_debug_resource_get_options(
    const pmr_debug_resource *d) {
  PMR_IMPL_CHECK_NOT_NULL(d, "debug_resource", (pmr_debug_resource_options){0});
  state *s = state_of((pmr_mem_resource *)&d->base);
  pmr_debug_resource_options o;
  memset(&o, 0, sizeof o);
  pthread_mutex_lock(&s->lock);
  o.name = s->name[0] != '\0' ? s->name : NULL;
  o.no_quarantine = s->q_max_blocks == 0;
  o.quarantine_blocks = s->q_max_blocks;
  o.quarantine_bytes = s->q_max_bytes;
  o.continue_on_misuse = !s->abort_on_misuse;
  pthread_mutex_unlock(&s->lock);
  return o;
}

void pmr_debug_resource_set_abort_on_misuse(pmr_debug_resource *d, bool on) {
  PMR_IMPL_CHECK_NOT_NULL(d, "debug_resource", );
  state *s = state_of(&d->base);
  pthread_mutex_lock(&s->lock);
  s->abort_on_misuse = on;
  pthread_mutex_unlock(&s->lock);
}

void pmr_debug_resource_fail_nth(pmr_debug_resource *d, uint64_t n) {
  PMR_IMPL_CHECK_NOT_NULL(d, "debug_resource", );
  state *s = state_of(&d->base);
  pthread_mutex_lock(&s->lock);
  s->fail_countdown = n;
  pthread_mutex_unlock(&s->lock);
}

void pmr_debug_resource_fail_over_bytes(pmr_debug_resource *d, size_t limit) {
  PMR_IMPL_CHECK_NOT_NULL(d, "debug_resource", );
  state *s = state_of(&d->base);
  pthread_mutex_lock(&s->lock);
  s->byte_limit = limit;
  s->byte_limit_on = true;
  pthread_mutex_unlock(&s->lock);
}

void pmr_debug_resource_fail_always(pmr_debug_resource *d) {
  PMR_IMPL_CHECK_NOT_NULL(d, "debug_resource", );
  state *s = state_of(&d->base);
  pthread_mutex_lock(&s->lock);
  s->fail_always = true;
  pthread_mutex_unlock(&s->lock);
}

void pmr_debug_resource_stop_failing(pmr_debug_resource *d) {
  PMR_IMPL_CHECK_NOT_NULL(d, "debug_resource", );
  state *s = state_of(&d->base);
  pthread_mutex_lock(&s->lock);
  s->fail_countdown = 0;
  s->byte_limit_on = false;
  s->fail_always = false;
  pthread_mutex_unlock(&s->lock);
}
