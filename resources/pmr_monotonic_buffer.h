/* pmr_monotonic_buffer: a bump ("arena") resource, std::pmr's
 * monotonic_buffer_resource, plus mark/rewind and a chunk-keeping reset.
 *
 * Allocation moves a pointer forward through the current buffer; deallocate
 * does nothing; memory comes back all at once with release (to upstream),
 * reset (kept for reuse) or rewind (back to a marker, like a stack).
 *
 *   - An optional initial buffer (e.g. on the stack) is used first; nothing is
 *     asked of upstream while allocations fit in it. Init never calls upstream.
 *   - Then chunks come from upstream. The first is the initial chunk size
 *     (default PMR_MONOTONIC_DEFAULT_CHUNK, or the initial buffer's size if
 *     larger, or the size given to init_with_size); each following chunk is
 *     twice the previous one, up to PMR_MONOTONIC_MAX_CHUNK (or the first
 *     chunk's size if larger). A request larger than the next chunk gets a
 * chunk just big enough for it. Every chunk is asked with alignment
 *     PMR_MAX_ALIGN, except a chunk made for an over-aligned request, which is
 *     asked with that alignment alone (later chunks are not over-aligned).
 *     Chunk sizes include a small header kept at the chunk's end.
 *   - pmr_try_resize works on the latest block only, inside the current
 *     buffer (never across into another chunk); see rewind for what it does
 *     to markers.
 *
 * Thread safety: none. One thread at a time per instance.
 * Failure: NULL when upstream fails (errno as upstream left it); the resource
 * stays usable.
 * NULL (pmr_mem_resource.h): a NULL buffer given to any function below, the
 * inline ones included, is a caller error: debug builds report it through
 * pmr_report_misuse and the call changes nothing and returns false, NULL
 * or 0 (mark: a marker no buffer accepts). */
#ifndef PMR_RESOURCES_MONOTONIC_BUFFER_H
#define PMR_RESOURCES_MONOTONIC_BUFFER_H

#include "../mem_resource/pmr_mem_resource.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PMR_MONOTONIC_DEFAULT_CHUNK ((size_t)1024)
#define PMR_MONOTONIC_MAX_CHUNK ((size_t)64 << 20) /* 64 MiB */

struct pmr_impl_mono_chunk;

/* Rewind bookkeeping (private): the bytes handed out now, split into runs
 * by the drops (rewinds, in-place resizes) that reached them; each run has
 * the generation of the drop it starts at. A marker older than the run
 * holding it was dropped and handed out again since. run[0] starts before
 * everything; each further run starts at the stop position of a drop that
 * stopped above the previous one. The first PMR_IMPL_MONO_RUNS + 1 runs are
 * kept in the buffer itself, more in an array from upstream (see
 * pmr_monotonic_buffer_rewind). */
#define PMR_IMPL_MONO_RUNS 4
typedef struct pmr_impl_mono_run {
  char *at;     /* the run starts after this position ... */
  size_t depth; /* ... of this buffer (0: before everything) */
  uint64_t gen; /* generation of the drop that started the run */
} pmr_impl_mono_run;

/* Fields are private: use the functions below. */
typedef struct pmr_monotonic_buffer {
  pmr_mem_resource base;              /* first: the abstract resource */
  char *cur;                          /* next free byte of the current buffer */
  char *end;                          /* end of the current buffer */
  struct pmr_impl_mono_chunk *chunks; /* chunks in use, newest first */
  struct pmr_impl_mono_chunk *spare;  /* chunks kept by reset/rewind */
  pmr_mem_resource *upstream;
  char *initial_buffer;
  size_t initial_size;
  size_t initial_next; /* first chunk size, restored by release */
  size_t next_size;    /* size of the next chunk from upstream */
  size_t initial_used; /* bytes used in the initial buffer when left */
  size_t max_next;     /* growth cap: max(PMR_MONOTONIC_MAX_CHUNK, first) */
  uint64_t gen;        /* drops (release, reset, rewind, resize) so far */
  size_t runs;         /* runs in use (at least 1) */
  size_t runs_cap;     /* runs the current array holds */
  pmr_impl_mono_run *runs_more; /* NULL: the runs are in run[] */
  pmr_impl_mono_run run[PMR_IMPL_MONO_RUNS + 1];
} pmr_monotonic_buffer;

/* A position to rewind to (see pmr_monotonic_buffer_mark). */
typedef struct pmr_monotonic_marker {
  struct pmr_impl_mono_chunk
      *chunk; /* current chunk at mark time (NULL: initial) */
  char *cur;
  uint64_t gen; /* m->gen at mark time */
} pmr_monotonic_marker;

/* Initialises m with no initial buffer. upstream == NULL means the default
 * resource at this moment. Never fails (returns true), never calls upstream.
 * Debug builds report init over a live buffer (pmr_report_misuse) and
 * destroy it first. */
bool pmr_monotonic_buffer_init(pmr_monotonic_buffer *m,
                               pmr_mem_resource *upstream);

/* Same, with the first chunk's capacity: the first chunk asked of upstream
 * holds at least initial_size bytes of allocations (it is asked for
 * initial_size plus the chunk header, rounded up to PMR_MAX_ALIGN), whatever
 * the size, above PMR_MONOTONIC_MAX_CHUNK too (std's initial_size). Later
 * chunks double up to the larger of PMR_MONOTONIC_MAX_CHUNK and the first.
 * 0 = the default. */
bool pmr_monotonic_buffer_init_with_size(pmr_monotonic_buffer *m,
                                         size_t initial_size,
                                         pmr_mem_resource *upstream);

/* Same, serving from buffer[0, size) first. The buffer is borrowed: it must
 * outlive m, and is never given to upstream. Any alignment is fine. */
bool pmr_monotonic_buffer_init_with_buffer(pmr_monotonic_buffer *m,
                                           void *buffer, size_t size,
                                           pmr_mem_resource *upstream);

/* Releases everything (pmr_monotonic_buffer_release). Idempotent: a second
 * destroy does nothing more. m may be initialised again afterwards. Until
 * then m is dead (release or reset, not destroy, keep it usable): an
 * allocation from it, through pmr_allocate or the inline
 * pmr_monotonic_buffer_allocate, fails with NULL and errno EINVAL without
 * calling upstream; debug builds report it through pmr_report_misuse. */
void pmr_monotonic_buffer_destroy(pmr_monotonic_buffer *m);

/* Returns every chunk, spare ones included, to upstream with exactly the size
 * and alignment it was allocated with, then restarts from the initial buffer
 * and the initial chunk size (LWG 3120). All pointers from m become invalid.
 * Harmless on a fresh resource and when repeated. */
void pmr_monotonic_buffer_release(pmr_monotonic_buffer *m);

/* Like release, but keeps the chunks for reuse: the next allocations fill
 * the initial buffer and then the kept chunks before asking upstream for
 * more. For request-scoped arenas: after the first request, later ones of the
 * same size make no upstream call. Memory is held until release/destroy. */
void pmr_monotonic_buffer_reset(pmr_monotonic_buffer *m);

/* The current position. Everything allocated after it is dropped by
 * pmr_monotonic_buffer_rewind(m, marker). */
static inline pmr_monotonic_marker pmr_monotonic_buffer_mark(
    const pmr_monotonic_buffer *m);

/* Goes back to marker (a stack allocator's pop): chunks taken since are kept
 * as spares for reuse, and bytes_used is again what it was at the mark.
 * Returns false and does nothing when marker is not valid. A marker is valid
 * until one of these makes it stale:
 *   - release or reset of m;
 *   - a rewind to a marker positioned before it (markers at its position,
 *     the rewound one included, stay valid, as do those before it), even
 *     when allocations have passed its position again since;
 *   - a successful pmr_try_resize (grow, shrink or same size) of the block
 *     that was the latest at the mark: the markers taken since that block
 *     was allocated point inside it or past its end, and become stale;
 *     those taken before it stay valid;
 * and a marker from another resource is never valid. A stale marker is
 * always refused; a valid one is accepted, with one exception below.
 *
 * Telling every valid marker from every stale one takes one entry per
 * "drop" (rewind, or resize, which stops at the block's start) that stops
 * above the previous one with nothing below it dropped in between (an
 * entry goes when a later drop stops at or below it): so any number of
 * entries, and m has a fixed size. The first PMR_IMPL_MONO_RUNS (4) live in
 * m; more in an array that rewind and pmr_try_resize ask of upstream
 * (about 24 bytes an entry, doubling; kept by reset, given back by
 * release). The exception: when upstream refuses that array (the null
 * resource, say), m merges its two newest entries instead, and then, until
 * a drop stops at or below the third entry's position, a valid marker
 * positioned above that third position and taken before the newest drop
 * may be refused. Never is a stale marker accepted, and markers at or below
 * the third entry (outer scopes) and those taken since the newest drop are
 * always accepted. errno is left as it was. */
bool pmr_monotonic_buffer_rewind(pmr_monotonic_buffer *m,
                                 pmr_monotonic_marker marker);

/* The upstream resource. */
pmr_mem_resource *pmr_monotonic_buffer_upstream(const pmr_monotonic_buffer *m);

/* Introspection. bytes_used: bytes handed out since init/release/reset,
 * alignment padding included (O(number of chunks)). bytes_left: what the
 * current buffer can still serve without upstream. next_chunk_size: the size
 * of the next chunk asked of upstream (before any request-specific
 * enlargement). */
size_t pmr_monotonic_buffer_bytes_used(const pmr_monotonic_buffer *m);
size_t pmr_monotonic_buffer_bytes_left(const pmr_monotonic_buffer *m);
size_t pmr_monotonic_buffer_next_chunk_size(const pmr_monotonic_buffer *m);

/* Slow path of pmr_monotonic_buffer_allocate. Not for direct use. */
void *pmr_impl_monotonic_buffer_refill(pmr_monotonic_buffer *m, size_t bytes,
                                       size_t alignment);

#if defined(PMR_IMPL_ASAN) || defined(PMR_VALGRIND)
#define PMR_IMPL_MONOTONIC_CHECKED 1
#endif

/* Takes bytes at alignment (both valid) from m's current buffer into *out;
 * false, changing nothing, when they do not fit. Not for direct use. */
static inline bool pmr_impl_monotonic_bump(pmr_monotonic_buffer *m,
                                           size_t bytes, size_t alignment,
                                           void **out) {
  const uintptr_t p = pmr_impl_align_up((uintptr_t)m->cur, alignment);
  const size_t n = bytes + (bytes == 0); /* 0 bytes still advance */
  if (p > (uintptr_t)m->end || n > (uintptr_t)m->end - p) return false;
  m->cur = (char *)(p + n);
  *out = (void *)p;
  return true;
}

/* The concrete fast path: the same as pmr_allocate(&m->base, bytes,
 * alignment), minus the indirect call. The checks of pmr_allocate are kept:
 * a bad alignment or an overflowing size gives NULL with errno set.
 * (Sanitizer and Valgrind builds take the out-of-line path, which tells the
 * tool which bytes are handed out.) */
static inline void *pmr_monotonic_buffer_allocate(pmr_monotonic_buffer *m,
                                                  size_t bytes,
                                                  size_t alignment) {
  PMR_IMPL_CHECK_NOT_NULL(m, "monotonic_buffer", NULL);
#ifdef PMR_IMPL_MONOTONIC_CHECKED
  return pmr_allocate(&m->base, bytes, alignment);
#endif
  if (PMR_UNLIKELY(!pmr_is_pow2(alignment) || bytes > SIZE_MAX - alignment))
    return pmr_impl_bad_request(bytes, alignment);
  void *p;
  if (PMR_LIKELY(pmr_impl_monotonic_bump(m, bytes, alignment, &p))) return p;
  return pmr_impl_monotonic_buffer_refill(m, bytes, alignment);
}

static inline pmr_monotonic_marker pmr_monotonic_buffer_mark(
    const pmr_monotonic_buffer *m) {
  pmr_monotonic_marker mk;
#ifdef PMR_DEBUG
  if (m == NULL) { /* the NULL rule: a marker no buffer accepts */
    pmr_report_misuse("%s with a NULL %s; ignored", __func__,
                      "monotonic_buffer");
    mk.chunk = NULL;
    mk.cur = NULL;
    mk.gen = 0; /* older than any buffer's first run */
    return mk;
  }
#endif
  mk.chunk = m->chunks;
  mk.cur = m->cur;
  mk.gen = m->gen;
  return mk;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PMR_RESOURCES_MONOTONIC_BUFFER_H */
