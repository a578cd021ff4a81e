/* pmr_debug_resource: guarded blocks, a table of user pointers, a FIFO
 * quarantine of freed blocks and a bounded memory of returned ones, all
 * behind one mutex. This file: the resource's hooks and public functions;
 * the block checks and misuse reports are in internal/debug_resource_check.c,
 * freeing and the quarantine in internal/debug_resource_free.c. */
#include "resources/pmr_debug_resource.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "resources/internal/debug_resource_impl.h"
#include "resources/internal/live_registry.h"
#include "resources/internal/ptr_table.h"

#define FRESH_BYTE 0xCD /* new blocks: reading it means "never written" */
/* The first size of the table of user pointers. */
#define FIRST_SLOTS ((size_t)256)

/* Short names for the shared types (debug_resource_impl.h). */
typedef pmr_impl_debug_resource_state state;
/* One user pointer the resource knows (state: PMR_IMPL_DEBUG_RESOURCE_LIVE,
 * PMR_IMPL_DEBUG_RESOURCE_QUARANTINED, PMR_IMPL_DEBUG_RESOURCE_FREED). */
typedef pmr_impl_ptr_entry entry;

PMR_IMPL_STATE_FITS(pmr_debug_resource, state);

static state *state_of(pmr_mem_resource *self) {
  return (state *)(void *)((pmr_debug_resource *)self)->pmr_impl_state.bytes;
}
/* Readers lock too: the mutex is logically mutable. */
static state *mstate_of(const pmr_debug_resource *d) {
  return (state *)(void *)(uintptr_t)d->pmr_impl_state.bytes;
}

/* ---- the table of user pointers --------------------------------------------
 */

/* Makes room for one more entry, so allocate fails cleanly instead of
 * handing out a block it could not track. */
static bool table_reserve(state *s) {
  return pmr_impl_ptr_table_reserve(&s->table, FIRST_SLOTS);
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
  size_t a = pmr_impl_debug_resource_up_align(alignment),
         pre = pmr_impl_debug_resource_prefix_of(alignment);
  if (pre > SIZE_MAX - PMR_IMPL_DEBUG_RESOURCE_GUARD - a ||
      bytes > SIZE_MAX - PMR_IMPL_DEBUG_RESOURCE_GUARD - a - pre ||
      !table_reserve(s)) {
    errno = ENOMEM;
    return NULL;
  }
  unsigned char *base = (unsigned char *)pmr_allocate(
      s->upstream, pre + bytes + PMR_IMPL_DEBUG_RESOURCE_GUARD, a);
  if (base == NULL) return NULL; /* errno from upstream */
  entry e = {base + pre, ++s->c.allocations, bytes, alignment,
             PMR_IMPL_DEBUG_RESOURCE_LIVE};
  pmr_impl_debug_resource_write_front(&e);
  memset(e.p, FRESH_BYTE, bytes);
  memset(e.p + bytes, PMR_IMPL_DEBUG_RESOURCE_GUARD_BYTE,
         PMR_IMPL_DEBUG_RESOURCE_GUARD);
  pmr_impl_ptr_table_put(&s->table, &e);
  ++s->c.blocks_in_use;
  note_in_use(s, bytes);
  return e.p;
}

static void *debug_allocate(pmr_mem_resource *self, size_t bytes,
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

static void debug_deallocate(pmr_mem_resource *self, void *p, size_t bytes,
                             size_t alignment) {
  state *s = state_of(self);
  pthread_mutex_lock(&s->lock);
  entry *e = pmr_impl_debug_resource_validate(s, p, bytes, alignment, true);
  size_t problems = e == NULL ? 1 : pmr_impl_debug_resource_free_block(s, e);
  bool die = problems != 0 && should_abort(s);
  pthread_mutex_unlock(&s->lock);
  if (die) abort();
}

static bool debug_try_resize(pmr_mem_resource *self, void *p, size_t old_bytes,
                             size_t new_bytes, size_t alignment) {
  state *s = state_of(self);
  bool resized = false;
  pthread_mutex_lock(&s->lock);
  entry *e =
      pmr_impl_debug_resource_validate(s, p, old_bytes, alignment, false);
  size_t problems =
      e == NULL ? 1
                : pmr_impl_debug_resource_check_block(s, e, "by try_resize");
  if (e != NULL) {
    size_t a = pmr_impl_debug_resource_up_align(alignment),
           pre = pmr_impl_debug_resource_prefix_of(alignment);
    bool refused = new_bytes > old_bytes &&
                   (s->fail_always || over_limit(s, new_bytes - old_bytes));
    /* pre + PMR_IMPL_DEBUG_RESOURCE_GUARD + a fit in size_t: the block was
     * allocated with them. */
    if (!refused &&
        new_bytes <= SIZE_MAX - PMR_IMPL_DEBUG_RESOURCE_GUARD - a - pre &&
        pmr_try_resize(s->upstream, e->p - pre,
                       pre + old_bytes + PMR_IMPL_DEBUG_RESOURCE_GUARD,
                       pre + new_bytes + PMR_IMPL_DEBUG_RESOURCE_GUARD, a)) {
      if (new_bytes > old_bytes) {
        memset(e->p + old_bytes, FRESH_BYTE, new_bytes - old_bytes);
        note_in_use(s, new_bytes - old_bytes);
      } else {
        s->c.bytes_in_use -= old_bytes - new_bytes;
      }
      memset(e->p + new_bytes, PMR_IMPL_DEBUG_RESOURCE_GUARD_BYTE,
             PMR_IMPL_DEBUG_RESOURCE_GUARD);
      e->bytes = new_bytes;
      pmr_impl_debug_resource_write_front(e);
      resized = true;
    }
  }
  bool die = problems != 0 && should_abort(s);
  pthread_mutex_unlock(&s->lock);
  if (die) abort();
  return resized;
}

static unsigned debug_traits(const pmr_mem_resource *self) {
  (void)self;
  return PMR_TRAIT_THREAD_SAFE;
}

static const pmr_mem_resource_ops debug_ops = {
    .allocate = debug_allocate,
    .deallocate = debug_deallocate,
    .is_equal = NULL, /* identity only */
    .try_resize = debug_try_resize,
    .traits = debug_traits,
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
  pmr_impl_debug_resource_report(
      s,
      "leak %zu of %zu: block %p (#%" PRIu64
      ", %zu bytes, alignment %zu) was never deallocated; freed to "
      "upstream",
      i, n, (void *)e->p, e->serial, e->bytes, e->alignment);
  pmr_impl_debug_resource_upstream_free(s, e);
}

size_t pmr_debug_resource_destroy(pmr_debug_resource *d) {
  PMR_IMPL_CHECK_NOT_NULL(d, "debug_resource", 0);
  state *s = state_of(&d->base);
  if (!pmr_impl_live_remove(&registry, &s->node))
    return 0; /* destroyed already */
  pthread_mutex_lock(&s->lock);
  size_t problems = pmr_impl_debug_resource_flush_locked(s);
  size_t leaks = 0;
  for (size_t i = 0; i < s->table.cap; ++i)
    if (s->table.slots[i].p != NULL &&
        s->table.slots[i].state == PMR_IMPL_DEBUG_RESOURCE_LIVE) {
      problems += pmr_impl_debug_resource_check_block(s, &s->table.slots[i],
                                                      "at destroy");
      ++leaks;
    }
  if (leaks != 0) {
    /* Listed in allocation order when there is memory to sort them. */
    entry *list = (entry *)malloc(leaks * sizeof(entry));
    size_t k = 0;
    for (size_t i = 0; i < s->table.cap; ++i) {
      entry *e = &s->table.slots[i];
      if (e->p == NULL || e->state != PMR_IMPL_DEBUG_RESOURCE_LIVE) continue;
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
  pmr_impl_debug_resource_ring_free(&s->quarantine);
  pmr_impl_debug_resource_ring_free(&s->history);
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
    if (s->table.slots[i].p != NULL &&
        s->table.slots[i].state != PMR_IMPL_DEBUG_RESOURCE_FREED)
      problems += pmr_impl_debug_resource_check_block(
          s, &s->table.slots[i], "by pmr_debug_resource_check");
  bool die = problems != 0 && should_abort(s);
  pthread_mutex_unlock(&s->lock);
  if (die) abort();
  return problems;
}

size_t pmr_debug_resource_flush_quarantine(pmr_debug_resource *d) {
  PMR_IMPL_CHECK_NOT_NULL(d, "debug_resource", 0);
  state *s = state_of(&d->base);
  pthread_mutex_lock(&s->lock);
  size_t problems = pmr_impl_debug_resource_flush_locked(s);
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
