/* pmr_monotonic_buffer: bump allocation over an initial buffer, then over
 * chunks from upstream that grow geometrically. */
#include "resources/pmr_monotonic_buffer.h"

#include <errno.h>
#include <string.h>

#include "resources/internal/live_registry.h"
#include "resources/internal/mem_check.h"

/* Kept at the END of each chunk, so a chunk's first byte is as aligned as the
 * chunk itself and an over-aligned request needs no padding. */
struct pmr_impl_mono_chunk {
  struct pmr_impl_mono_chunk *next;
  char *start; /* what upstream returned */
  size_t size; /* total bytes asked of upstream, header included */
  size_t alignment;
  char *used_end; /* bump position when this chunk stopped being current */
  size_t depth;   /* in use: 1 + the chunk's place in the list (initial: 1) */
};

typedef struct pmr_impl_mono_chunk chunk;

#define HEADER_SIZE sizeof(chunk)

static void *mono_allocate(pmr_mem_resource *self, size_t bytes,
                           size_t alignment) {
  pmr_monotonic_buffer *m = (pmr_monotonic_buffer *)self;
  /* pmr_allocate already validated the arguments; skip the repeat. */
  void *p;
  if (PMR_LIKELY(pmr_impl_monotonic_bump(m, bytes, alignment, &p))) {
    PMR_IMPL_UNDEFINED(p, bytes + (bytes == 0));
    return p;
  }
  return pmr_impl_monotonic_buffer_refill(m, bytes, alignment);
}

/* Sanitizer builds: memory in [from, to) is no longer handed out. */
static void forget(char *from, char *to) {
  if (from != NULL && to > from) PMR_IMPL_NOACCESS(from, (size_t)(to - from));
}

static void mono_deallocate(pmr_mem_resource *self, void *p, size_t bytes,
                            size_t alignment) {
  /* Monotonic: memory comes back only with release, reset or rewind. */
  (void)self;
  (void)p;
  (void)bytes;
  (void)alignment;
}

static void drop_after(pmr_monotonic_buffer *m, size_t depth, char *at);

/* The depth of the current buffer (see before()). */
static size_t current_depth(const pmr_monotonic_buffer *m) {
  return m->chunks != NULL ? m->chunks->depth : 1;
}

/* Grows or shrinks the most recent allocation in place. The markers taken
 * since it was allocated point inside it or at its old end: stale. */
static bool mono_try_resize(pmr_mem_resource *self, void *p, size_t old_bytes,
                            size_t new_bytes, size_t alignment) {
  pmr_monotonic_buffer *m = (pmr_monotonic_buffer *)self;
  (void)alignment;
  size_t old_n = old_bytes + (old_bytes == 0);
  size_t new_n = new_bytes + (new_bytes == 0);
  uintptr_t q = (uintptr_t)p;
  /* Only the latest block, i.e. the one that ends where the bump pointer is. */
  if (q > (uintptr_t)m->cur || (uintptr_t)m->cur - q != old_n) return false;
  if (new_n > (uintptr_t)m->end - q) return false;
  drop_after(m, current_depth(m), (char *)p);
  m->cur = (char *)p + new_n;
  if (new_n > old_n)
    PMR_IMPL_UNDEFINED((char *)p + old_n, new_n - old_n);
  else
    forget((char *)p + new_n, (char *)p + old_n);
  return true;
}

/* The runs in use: in m, or in the array from upstream. */
static pmr_impl_mono_run *runs_of(pmr_monotonic_buffer *m) {
  return m->runs_more != NULL ? m->runs_more : m->run;
}

/* Gives the runs' array back to upstream; the runs are in m again (the
 * caller resets them). */
static void free_runs(pmr_monotonic_buffer *m) {
  if (m->runs_more != NULL)
    pmr_deallocate(m->upstream, m->runs_more,
                   m->runs_cap * sizeof(pmr_impl_mono_run),
                   _Alignof(pmr_impl_mono_run));
  m->runs_more = NULL;
  m->runs_cap = PMR_IMPL_MONO_RUNS + 1;
}

/* Room for twice the runs, from upstream. False, changing nothing (errno
 * included), when upstream refuses. */
static bool grow_runs(pmr_monotonic_buffer *m) {
  if (m->runs_cap > SIZE_MAX / 2 / sizeof(pmr_impl_mono_run)) return false;
  size_t cap = m->runs_cap * 2;
  int saved = errno;
  pmr_impl_mono_run *r = (pmr_impl_mono_run *)pmr_allocate(
      m->upstream, cap * sizeof *r, _Alignof(pmr_impl_mono_run));
  errno = saved;
  if (r == NULL) return false;
  memcpy(r, runs_of(m), m->runs * sizeof *r);
  size_t runs = m->runs;
  free_runs(m);
  m->runs = runs;
  m->runs_more = r;
  m->runs_cap = cap;
  return true;
}

/* Everything handed out is dropped: every earlier marker becomes invalid.
 * The runs' array is kept. */
static void drop_all(pmr_monotonic_buffer *m) {
  ++m->gen;
  m->runs = 1;
  pmr_impl_mono_run *run = runs_of(m);
  run[0].at = NULL;
  run[0].depth = 0;
  run[0].gen = m->gen;
}

/* Makes the initial buffer (possibly none) the current one, empty. */
static void restart_initial(pmr_monotonic_buffer *m) {
  drop_all(m);
  m->cur = m->initial_buffer;
  m->end =
      m->initial_buffer != NULL ? m->initial_buffer + m->initial_size : NULL;
  m->initial_used = 0;
  forget(m->cur, m->end);
}

/* Declared: one thread at a time, and deallocation keeps nothing. */
static unsigned mono_traits(const pmr_mem_resource *self) {
  (void)self;
  return 0;
}

static const pmr_mem_resource_ops mono_ops = {
    .allocate = mono_allocate,
    .deallocate = mono_deallocate,
    .try_resize = mono_try_resize,
    .traits = mono_traits,
};

/* A destroyed buffer's: every call fails (live_registry.h). The inline
 * pmr_monotonic_buffer_allocate bypasses the ops, but a destroyed buffer
 * has no room (cur == end == NULL), so it always reaches refill, which
 * checks the ops. */
PMR_IMPL_DESTROYED_OPS(destroyed_ops, "monotonic_buffer");

/* Debug builds: the live monotonic buffers, to report init over one. */
static pmr_impl_live_registry registry =
    PMR_IMPL_LIVE_REGISTRY("monotonic_buffer", NULL, NULL);

bool pmr_monotonic_buffer_init_with_buffer(pmr_monotonic_buffer *m,
                                           void *buffer, size_t size,
                                           pmr_mem_resource *upstream) {
  PMR_IMPL_CHECK_NOT_NULL(m, "monotonic_buffer", false);
  if (pmr_impl_live_debug_init(&registry, m)) pmr_monotonic_buffer_destroy(m);
  pmr_impl_live_debug_add(&registry, m);
  m->base.ops = &mono_ops;
  m->upstream = pmr_resource_or_default(upstream);
  m->chunks = NULL;
  m->spare = NULL;
  m->initial_buffer = buffer != NULL ? (char *)buffer : NULL;
  m->initial_size = buffer != NULL ? size : 0;
  m->gen = 0;
  m->runs_more = NULL;
  m->runs_cap = PMR_IMPL_MONO_RUNS + 1;
  restart_initial(m);
  size_t first = PMR_MONOTONIC_DEFAULT_CHUNK;
  if (m->initial_size > first) first = m->initial_size;
  if (first > PMR_MONOTONIC_MAX_CHUNK) first = PMR_MONOTONIC_MAX_CHUNK;
  m->initial_next = m->next_size = first;
  m->max_next = PMR_MONOTONIC_MAX_CHUNK;
  return true;
}

bool pmr_monotonic_buffer_init(pmr_monotonic_buffer *m,
                               pmr_mem_resource *upstream) {
  PMR_IMPL_CHECK_NOT_NULL(m, "monotonic_buffer", false);
  pmr_monotonic_buffer_init_with_buffer(m, NULL, 0, upstream);
  return true;
}

bool pmr_monotonic_buffer_init_with_size(pmr_monotonic_buffer *m,
                                         size_t initial_size,
                                         pmr_mem_resource *upstream) {
  PMR_IMPL_CHECK_NOT_NULL(m, "monotonic_buffer", false);
  pmr_monotonic_buffer_init_with_buffer(m, NULL, 0, upstream);
  if (initial_size != 0) {
    /* Room for the header, so the first chunk really holds initial_size
     * bytes of allocations, at any size (std: the first buffer is at least
     * initial_size). A size upstream cannot serve fails there. */
    size_t first = SIZE_MAX & ~(PMR_MAX_ALIGN - 1);
    if (initial_size <= first - HEADER_SIZE - (PMR_MAX_ALIGN - 1))
      first = pmr_impl_round_up(initial_size + HEADER_SIZE, PMR_MAX_ALIGN);
    m->initial_next = m->next_size = first;
    if (first > m->max_next) m->max_next = first;
  }
  return true;
}

static void free_list(pmr_mem_resource *upstream, chunk *c) {
  while (c != NULL) {
    chunk *next = c->next;
    PMR_IMPL_UNDEFINED(c->start,
                       (size_t)((char *)c - c->start)); /* open again */
    pmr_deallocate(upstream, c->start, c->size, c->alignment);
    c = next;
  }
}

void pmr_monotonic_buffer_release(pmr_monotonic_buffer *m) {
  PMR_IMPL_CHECK_NOT_NULL(m, "monotonic_buffer", );
  free_list(m->upstream, m->chunks);
  free_list(m->upstream, m->spare);
  free_runs(m);
  m->chunks = NULL;
  m->spare = NULL;
  restart_initial(m);
  m->next_size = m->initial_next;
}

void pmr_monotonic_buffer_destroy(pmr_monotonic_buffer *m) {
  PMR_IMPL_CHECK_NOT_NULL(m, "monotonic_buffer", );
  pmr_impl_live_debug_remove(&registry, m);
  pmr_monotonic_buffer_release(m);
  /* The caller's buffer is theirs again, and m forgets it: a later destroy or
   * release of m must not mark it unused again (under ASan that poisons
   * memory the caller may be using, e.g. a stack frame). */
  if (m->initial_buffer != NULL)
    PMR_IMPL_UNDEFINED(m->initial_buffer, m->initial_size);
  m->initial_buffer = NULL;
  m->initial_size = 0;
  m->cur = m->end = NULL;
  m->base.ops = &destroyed_ops;
}

/* A position in the order allocations pass it: the buffer's depth (initial
 * buffer 1, then each chunk in use one more), then the address. */
static bool before(size_t d1, const char *a1, size_t d2, const char *a2) {
  return d1 < d2 || (d1 == d2 && (uintptr_t)a1 < (uintptr_t)a2);
}

/* Everything after (depth, at) is dropped: markers past it become invalid,
 * markers at or before it stay valid. */
static void drop_after(pmr_monotonic_buffer *m, size_t depth, char *at) {
  ++m->gen;
  pmr_impl_mono_run *run = runs_of(m);
  while (m->runs > 1 &&
         !before(run[m->runs - 1].depth, run[m->runs - 1].at, depth, at))
    --m->runs;
  if (m->runs == m->runs_cap) {
    if (grow_runs(m)) {
      run = runs_of(m);
    } else {
      /* Full, and no more memory: the two newest runs merge under the
       * newer generation, which can only refuse markers, never accept a
       * stale one. The runs below stay exact. */
      run[m->runs - 2].gen = run[m->runs - 1].gen;
      --m->runs;
    }
  }
  run[m->runs].at = at;
  run[m->runs].depth = depth;
  run[m->runs].gen = m->gen;
  ++m->runs;
}

/* Chunk c becomes the current one, on top of the chunks in use. */
static void push_chunk(pmr_monotonic_buffer *m, chunk *c) {
  c->depth = (m->chunks != NULL ? m->chunks->depth : 1) + 1;
  c->next = m->chunks;
  m->chunks = c;
}

/* Moves the chunks in use down to (not including) `keep` onto the spare
 * list, oldest first, so reuse replays the original order. */
static void park_chunks_until(pmr_monotonic_buffer *m, chunk *keep) {
  while (m->chunks != keep) {
    chunk *c = m->chunks;
    m->chunks = c->next;
    c->next = m->spare;
    m->spare = c;
    forget(c->start, (char *)c);
  }
}

void pmr_monotonic_buffer_reset(pmr_monotonic_buffer *m) {
  PMR_IMPL_CHECK_NOT_NULL(m, "monotonic_buffer", );
  park_chunks_until(m, NULL);
  restart_initial(m);
}

bool pmr_monotonic_buffer_rewind(pmr_monotonic_buffer *m,
                                 pmr_monotonic_marker marker) {
  PMR_IMPL_CHECK_NOT_NULL(m, "monotonic_buffer", false);
  /* Validate first: the marker's chunk must be one in use, and its position
   * inside what that chunk has handed out. */
  uintptr_t lo, hi;
  if (marker.chunk == NULL) {
    lo = (uintptr_t)m->initial_buffer;
    hi = m->chunks == NULL ? (uintptr_t)m->cur : lo + m->initial_used;
  } else {
    chunk *c = m->chunks;
    while (c != NULL && c != marker.chunk) c = c->next;
    if (c == NULL) return false;
    lo = (uintptr_t)c->start;
    hi = (uintptr_t)(c == m->chunks ? m->cur : c->used_end);
  }
  uintptr_t at = (uintptr_t)marker.cur;
  if (at < lo || at > hi) return false;
  /* Then its generation: the run holding the marker's position must be no
   * newer than the marker (else that position was dropped and handed out
   * again since the mark). */
  size_t depth = marker.chunk != NULL ? marker.chunk->depth : 1;
  const pmr_impl_mono_run *run = runs_of(m);
  /* The last run starting before the marker's position, by bisection (the
   * runs rise): it is in [k, past). */
  size_t k = 0, past = m->runs;
  while (past - k > 1) {
    size_t mid = k + (past - k) / 2;
    if (before(run[mid].depth, run[mid].at, depth, marker.cur))
      k = mid;
    else
      past = mid;
  }
  if (marker.gen < run[k].gen) return false;
  park_chunks_until(m, marker.chunk);
  drop_after(m, depth, marker.cur);
  if (marker.chunk == NULL) {
    /* Back in the initial buffer (not restart_initial: what lies before
     * the marker is still in use). */
    m->end =
        m->initial_buffer != NULL ? m->initial_buffer + m->initial_size : NULL;
    m->initial_used = 0;
  } else {
    m->end = (char *)marker.chunk;
  }
  m->cur = marker.cur;
  forget(m->cur, m->end);
  return true;
}

void *pmr_impl_monotonic_buffer_refill(pmr_monotonic_buffer *m, size_t bytes,
                                       size_t alignment) {
  if (PMR_UNLIKELY(m->base.ops != &mono_ops))
    return pmr_impl_destroyed_allocate("monotonic_buffer", &m->base, bytes,
                                       alignment);
  size_t n = bytes + (bytes == 0);

  /* Remember how far the current buffer got (for bytes_used and rewind). */
  if (m->chunks != NULL)
    m->chunks->used_end = m->cur;
  else if (m->initial_buffer != NULL)
    m->initial_used = (size_t)(m->cur - m->initial_buffer);

  /* A kept chunk that fits, first fit in original order. */
  for (chunk **link = &m->spare; *link != NULL; link = &(*link)->next) {
    chunk *c = *link;
    uintptr_t p = pmr_impl_align_up((uintptr_t)c->start, alignment);
    if (p <= (uintptr_t)c && n <= (uintptr_t)c - p) {
      *link = c->next;
      push_chunk(m, c);
      m->cur = (char *)(p + n);
      m->end = (char *)c;
      PMR_IMPL_UNDEFINED((void *)p, n);
      return (void *)p;
    }
  }

  /* A new chunk. Its start is aligned to max(alignment, PMR_MAX_ALIGN), so
   * the request sits at its very start. */
  if (n > SIZE_MAX - HEADER_SIZE - PMR_MAX_ALIGN) {
    errno = ENOMEM;
    return NULL;
  }
  size_t need = pmr_impl_round_up(n, PMR_MAX_ALIGN) + HEADER_SIZE;
  size_t size = pmr_impl_round_up(need > m->next_size ? need : m->next_size,
                                  PMR_MAX_ALIGN);
  size_t chunk_align = alignment > PMR_MAX_ALIGN ? alignment : PMR_MAX_ALIGN;
  char *start = (char *)pmr_allocate(m->upstream, size, chunk_align);
  if (start == NULL) return NULL;

  chunk *c = (chunk *)(void *)(start + size - HEADER_SIZE);
  c->start = start;
  c->size = size;
  c->alignment = chunk_align;
  c->used_end = start;
  push_chunk(m, c);
  m->cur = start + n;
  m->end = (char *)c;
  forget(m->cur, m->end);
  if (m->next_size < m->max_next / 2)
    m->next_size *= 2;
  else
    m->next_size = m->max_next;
  return start;
}

pmr_mem_resource *pmr_monotonic_buffer_upstream(const pmr_monotonic_buffer *m) {
  PMR_IMPL_CHECK_NOT_NULL(m, "monotonic_buffer", NULL);
  return m->upstream;
}

size_t pmr_monotonic_buffer_bytes_used(const pmr_monotonic_buffer *m) {
  PMR_IMPL_CHECK_NOT_NULL(m, "monotonic_buffer", 0);
  if (m->chunks == NULL)
    return m->initial_buffer != NULL ? (size_t)(m->cur - m->initial_buffer) : 0;
  size_t used = m->initial_used + (size_t)(m->cur - m->chunks->start);
  for (const chunk *c = m->chunks->next; c != NULL; c = c->next)
    used += (size_t)(c->used_end - c->start);
  return used;
}

size_t pmr_monotonic_buffer_bytes_left(const pmr_monotonic_buffer *m) {
  PMR_IMPL_CHECK_NOT_NULL(m, "monotonic_buffer", 0);
  return (size_t)(m->end - m->cur);
}

size_t pmr_monotonic_buffer_next_chunk_size(const pmr_monotonic_buffer *m) {
  PMR_IMPL_CHECK_NOT_NULL(m, "monotonic_buffer", 0);
  return m->next_size;
}
