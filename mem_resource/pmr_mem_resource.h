/* pmr-c: polymorphic memory resources for C.
 *
 * The abstract memory resource, its dispatch functions, and the process-wide
 * resources every program has: the malloc resource, the null resource and the
 * default resource. This is C++'s std::pmr::memory_resource re-expressed for C:
 * where C++ throws, pmr-c returns NULL.
 *
 * A concrete resource is a struct whose FIRST member is a pmr_mem_resource:
 *
 *     typedef struct { pmr_mem_resource base; ... } my_resource;
 *
 * so a pointer to it converts to and from `pmr_mem_resource *`. Code that needs
 * memory takes a `pmr_mem_resource *` and calls pmr_allocate / pmr_deallocate.
 *
 * The contract every resource of this library keeps (and a user's resource
 * should keep):
 *   - alignment is a power of two; any alignment up to at least 4096 works.
 *   - pmr_deallocate gets back exactly the bytes and alignment pmr_allocate got
 *     (sized deallocation: that is what lets pools work without block headers).
 *   - pmr_allocate(r, 0, a) returns a valid, distinct pointer that may be
 *     passed back to pmr_deallocate(r, p, 0, a).
 *   - failure is NULL, never an abort and never a block that is too small.
 *
 * Bad arguments are rejected by pmr_allocate itself, identically for every
 * resource, before any hook runs (see pmr_allocate). Hooks therefore always
 * receive a power-of-two alignment and a size with bytes + alignment <=
 * SIZE_MAX.
 *
 * NULL, one rule for the whole library:
 *   - a NULL resource means the default resource, everywhere: as the
 *     upstream or resource given to an init (the default at that moment,
 *     kept), and in every dispatch function below (pmr_allocate,
 *     pmr_deallocate, pmr_try_resize, pmr_is_equal, pmr_malloc, pmr_free,
 *     pmr_good_size, pmr_usable_size:
 *     the default at the time of the call, so memory allocated through NULL
 *     goes back through NULL only while the default is unchanged);
 *   - NULL data with a length of 0 is a valid empty input everywhere (an
 *     empty needle, an empty range, zero bytes to append or compare);
 *   - any other NULL (an object to operate on, data with a length above 0,
 *     a NULL element or key pointer) is a caller error: undefined behaviour
 *     in release builds; debug builds (-DPMR_DEBUG) report it through
 *     pmr_report_misuse and the call does nothing and fails as documented
 *     by its function (false, NULL, not found).
 */
#ifndef PMR_MEM_RESOURCE_H
#define PMR_MEM_RESOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version (semantic versioning: a MINOR release adds API, a
 * MAJOR one may break it; what the promise covers: README.md, "Versions").
 * CMakeLists.txt reads it from here; CHANGELOG.md says what each version
 * changed. */
#define PMR_VERSION_MAJOR 1
#define PMR_VERSION_MINOR 0
#define PMR_VERSION_PATCH 0
#define PMR_VERSION_STRING "1.0.0"
/* One comparable number: MAJOR * 10000 + MINOR * 100 + PATCH. */
#define PMR_VERSION \
  (PMR_VERSION_MAJOR * 10000 + PMR_VERSION_MINOR * 100 + PMR_VERSION_PATCH)

#if defined(__GNUC__) || defined(__clang__)
#define PMR_LIKELY(x) __builtin_expect(!!(x), 1)
#define PMR_UNLIKELY(x) __builtin_expect(!!(x), 0)
/* Keeps a slow path out of its caller, so the fast path stays a leaf. */
#define PMR_NOINLINE __attribute__((noinline))
/* On functions a macro defines for the user, who may not call them all. */
#define PMR_MAYBE_UNUSED __attribute__((unused))
#else
#define PMR_LIKELY(x) (x)
#define PMR_UNLIKELY(x) (x)
#define PMR_NOINLINE
#define PMR_MAYBE_UNUSED
#endif

/* 1 when this translation unit is built with AddressSanitizer (GCC and
 * clang say it differently); the one test of it, for the library's headers.
 * Not for direct use. */
#if defined(__SANITIZE_ADDRESS__)
#define PMR_IMPL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PMR_IMPL_ASAN 1
#endif
#endif

/* alignof(T) in C and C++: the typed container macros take both. */
#ifndef PMR_ALIGNOF
#ifdef __cplusplus
#define PMR_ALIGNOF(T) alignof(T)
#else
#define PMR_ALIGNOF(T) _Alignof(T)
#endif
#endif

/* The strictest alignment malloc guarantees without asking (16 on x86-64). */
#ifdef __cplusplus
#define PMR_MAX_ALIGN ((size_t)alignof(max_align_t))
#else
#define PMR_MAX_ALIGN ((size_t) _Alignof(max_align_t))
#endif

typedef struct pmr_mem_resource pmr_mem_resource;

/* The table of operations a resource implements. One constant instance per
 * resource type; every instance of that type points at it. */
typedef struct pmr_mem_resource_ops {
  /* Returns `bytes` bytes aligned to `alignment`, or NULL. Called only with a
   * power-of-two alignment and bytes <= SIZE_MAX - alignment. */
  void *(*allocate)(pmr_mem_resource *self, size_t bytes, size_t alignment);
  /* Gives back p (never NULL), allocated from self with these bytes and
   * alignment. */
  void (*deallocate)(pmr_mem_resource *self, void *p, size_t bytes,
                     size_t alignment);
  /* True when memory allocated from self may be deallocated through other.
   * Called only when self != other. May be NULL: then only identity is equal.
   */
  bool (*is_equal)(const pmr_mem_resource *self, const pmr_mem_resource *other);
  /* Optional (may be NULL): tries to change the size of block p, allocated
   * from self with old_bytes and alignment, to new_bytes WITHOUT moving it.
   * Returns true when p now holds new_bytes (and must later be deallocated
   * with new_bytes); false leaves the block exactly as it was. A monotonic
   * buffer implements it for its most recent allocation, so containers grow
   * there without copying. Called only with new_bytes <= SIZE_MAX - alignment.
   */
  bool (*try_resize)(pmr_mem_resource *self, void *p, size_t old_bytes,
                     size_t new_bytes, size_t alignment);
  /* Optional (may be NULL: none known): what self is, as PMR_TRAIT_* bits,
   * for a resource stacked on it (pmr_resource_traits). The answer must not
   * change while a resource uses self as its upstream. */
  unsigned (*traits)(const pmr_mem_resource *self);
  /* Optional (may be NULL: sizes nobody can tell): usable sizes that self
   * can tell from a block's address alone, for callers that keep no sizes
   * (pmr_malloc_adapter; see pmr_usable_size and pmr_good_size).
   *   p == NULL: the usable size of a block allocated with (bytes,
   *     alignment), when self will tell it from the block's address; else
   *     0. A non-zero answer u is at least bytes, and a block allocated
   *     with (u, alignment) has usable size u.
   *   p != NULL (bytes is 0): p is a block of self in use, allocated
   *     with `alignment`, or an address inside such a block; its usable
   *     size if p is the start of a block whose request self answered
   *     non-zero for, else 0.
   * The requests it answers for are those up to a bound of its own: 0 for
   * (bytes, alignment) means 0 for every larger bytes too.
   * Any thread may call it while self is used; the answers must not change
   * while self lives. Called only with a power-of-two alignment and bytes
   * <= SIZE_MAX - alignment. */
  size_t (*usable_size)(const pmr_mem_resource *self, const void *p,
                        size_t bytes, size_t alignment);
  /* Optional (may be NULL: then pmr_deallocate_unsized asks usable_size
   * and calls deallocate with its answer): deallocates p, a block of self
   * in use allocated with `alignment`, without its size, when self tells
   * that size from p's address (usable_size would answer u != 0), and
   * returns u; otherwise does nothing and returns 0. Called only with
   * p != NULL and a power-of-two alignment. */
  size_t (*deallocate_unsized)(pmr_mem_resource *self, void *p,
                               size_t alignment);
} pmr_mem_resource_ops;

/* What a resource says of itself (pmr_mem_resource_ops.traits), so that a
 * resource over it can adapt; a third-party resource may say them too.
 *   PMR_TRAIT_THREAD_SAFE: every operation may run from several threads at
 *     once. The thread-safe resources over it (synchronized_pool,
 *     thread_cache) need it: debug builds report an upstream that declares
 *     traits without it.
 *   PMR_TRAIT_KEEPS_FREED: it keeps freed blocks for reuse, within bounds of
 *     its own: a pool over it keeps no freed oversize block, so the same
 *     memory is not kept at two levels.
 *   PMR_TRAIT_MAPS_LARGE: a block of at least PMR_TRAIT_LARGE_MIN bytes it
 *     gives is memory of its own mapping from the OS, which it neither reads
 *     nor writes while the block is lent out: a pool over it may give the
 *     physical memory of free pages in such blocks back to the OS
 *     (madvise), and touch it again later. Such blocks must come at any
 *     power-of-two alignment up to 1 MiB: a pool over it asks that of its
 *     segments, so that a block's page descriptor is found in one table
 *     per MiB.
 *   PMR_TRAIT_SYSTEM_MEMORY: it hands out the process's ordinary memory
 *     (the system allocator's) and keeps no account of it, so a resource
 *     over it may take memory from the OS itself instead of asking it: the
 *     pools and the thread cache then map their segments and large blocks
 *     with mmap and give free pages back to the OS (pmr_pool_options.h).
 *     The malloc resource says it; a resource that counts, limits, places
 *     or inspects what it hands out must not (what bypasses it would go
 *     unseen). */
#define PMR_TRAIT_THREAD_SAFE 1u
#define PMR_TRAIT_KEEPS_FREED 2u
#define PMR_TRAIT_MAPS_LARGE 4u
#define PMR_TRAIT_SYSTEM_MEMORY 8u
#define PMR_TRAIT_LARGE_MIN ((size_t)128 << 10)

/* The abstract resource: the first member of every concrete resource. */
struct pmr_mem_resource {
  const pmr_mem_resource_ops *ops;
};

/* Out-of-line failure path of pmr_allocate: sets errno and returns NULL.
 * Not for direct use. */
void *pmr_impl_bad_request(size_t bytes, size_t alignment);

/* True when a is a power of two (0 is not). */
static inline bool pmr_is_pow2(size_t a) {
  return a != 0 && (a & (a - 1)) == 0;
}

/* ---- For the library's resources (not for direct use) -------------------- */

/* n rounded up to a multiple of a, a power of two. The caller rules out
 * overflow (n + a - 1 fits). */
static inline size_t pmr_impl_round_up(size_t n, size_t a) {
  return (n + (a - 1)) & ~(a - 1);
}

/* The address p rounded up to a multiple of a, a power of two. */
static inline uintptr_t pmr_impl_align_up(uintptr_t p, size_t a) {
  return (p + (a - 1)) & ~(uintptr_t)(a - 1);
}

/* What a resource's private state is aligned for (see PMR_IMPL_STATE). */
typedef union pmr_impl_state_align {
  void *p;
  uint64_t u;
} pmr_impl_state_align;

/* The private state of a resource, inside its public struct so that it
 * lives on the stack or inside another struct without an allocation: n bytes
 * that only the resource's source reads. The source checks that its state
 * fits with PMR_IMPL_STATE_FITS. */
#define PMR_IMPL_STATE(n)       \
  union {                       \
    pmr_impl_state_align align; \
    unsigned char bytes[n];     \
  } pmr_impl_state

/* Compile-time check, in a resource's source, that its state type S fits the
 * PMR_IMPL_STATE of its public type T, in size and alignment. */
#define PMR_IMPL_STATE_FITS(T, S)                               \
  _Static_assert(sizeof(S) <= sizeof(((T *)0)->pmr_impl_state), \
                 #T ": PMR_IMPL_STATE too small for " #S);      \
  _Static_assert(_Alignof(S) <= _Alignof(pmr_impl_state_align), \
                 #T ": " #S " is aligned beyond PMR_IMPL_STATE")

/* Allocates `bytes` bytes aligned to `alignment` from r.
 *
 * Returns NULL when:
 *   - alignment is 0 or not a power of two        (errno = EINVAL);
 *   - bytes + alignment overflows size_t           (errno = ENOMEM);
 *   - the resource is out of memory. errno is then whatever the resource set:
 *     the malloc resource and the resources of this library leave ENOMEM
 *     when malloc did, the null resource sets ENOMEM.
 * On success errno is unchanged. bytes == 0 is valid and returns a distinct
 * pointer. Thread safety is the resource's (see each resource's header). */
/* The process-wide default resource, used wherever a NULL resource or
 * upstream is passed. Starts as the malloc resource. Thread-safe (atomic).
 * Resources and containers capture it when they are initialised, so changing
 * it later does not affect them. Declared here because pmr_allocate uses it;
 * pmr_set_default_resource is below. */
pmr_mem_resource *pmr_get_default_resource(void);
/* pmr_allocate / pmr_deallocate with a NULL resource: the default one. */
void *pmr_impl_allocate_default(size_t bytes, size_t alignment);
void pmr_impl_deallocate_default(void *p, size_t bytes, size_t alignment);

/* Allocates from r (NULL: the default resource). */
static inline void *pmr_allocate(pmr_mem_resource *r, size_t bytes,
                                 size_t alignment) {
  /* With a constant alignment (the usual call) the first test folds away. */
  if (PMR_UNLIKELY(!pmr_is_pow2(alignment) || bytes > SIZE_MAX - alignment))
    return pmr_impl_bad_request(bytes, alignment);
  if (PMR_UNLIKELY(r == NULL))
    return pmr_impl_allocate_default(bytes, alignment);
  return r->ops->allocate(r, bytes, alignment);
}

/* Gives p back to r (NULL: the default resource). p must come from
 * pmr_allocate on r (or on a resource equal to r) with the same bytes and
 * alignment, and not be given back yet. p == NULL does nothing. Never
 * fails. */
static inline void pmr_deallocate(pmr_mem_resource *r, void *p, size_t bytes,
                                  size_t alignment) {
  if (PMR_LIKELY(p != NULL)) {
    /* Out of line for NULL: the common call stays a test and a jump. */
    if (PMR_UNLIKELY(r == NULL)) {
      pmr_impl_deallocate_default(p, bytes, alignment);
      return;
    }
    r->ops->deallocate(r, p, bytes, alignment);
  }
}

/* Gives p back to r (NULL: the default resource) without its size, when r
 * tells the size from p's address: p's request got a non-zero
 * pmr_good_size answer (the pools' and the thread cache's pooled sizes, up
 * to their largest_required_pool_block; statistics over one of them). For
 * callers that cannot cheaply keep a block's size (a free list of
 * mixed-size nodes, a C API whose free takes only a pointer). Returns the
 * block's usable size; 0 when r cannot tell it (an oversize block, a
 * resource with no usable_size, p == NULL, an alignment that is not a power
 * of two): then nothing is done, and the block goes back through
 * pmr_deallocate with its size. p must come from r with `alignment` and be
 * in use; a block freed twice is reported as by pmr_deallocate (or,
 * once its page went back to the pool's free pages, 0 is returned).
 * Cost: the pools and the thread cache look the address up in the page
 * map (two dependent loads) and read the page's block size, where the
 * sized call reads nothing but the page: a few instructions more than
 * pmr_deallocate, against the caller's load of the size. A resource with
 * no deallocate_unsized hook pays a usable_size call first. A resource
 * that counts bytes (pmr_statistics) counts the usable size: allocate with
 * pmr_good_size's answer to keep its counts balanced. Thread-safe for a
 * thread-safe r. */
size_t pmr_impl_deallocate_unsized_slow(pmr_mem_resource *r, void *p,
                                        size_t alignment);
static inline size_t pmr_deallocate_unsized(pmr_mem_resource *r, void *p,
                                            size_t alignment) {
  if (PMR_LIKELY(r != NULL && p != NULL && pmr_is_pow2(alignment) &&
                 r->ops->deallocate_unsized != NULL))
    return r->ops->deallocate_unsized(r, p, alignment);
  return pmr_impl_deallocate_unsized_slow(r, p, alignment);
}

/* The PMR_TRAIT_* bits r says of itself (NULL: the default resource's); 0
 * when its ops have no traits. The malloc and null resources are
 * thread-safe; so are the synchronized pool, the thread cache, statistics
 * and the debug resource. The malloc resource hands out system memory. The
 * pools keep freed blocks and, over system memory (or an upstream that maps
 * its large blocks), map their large blocks. The unsynchronized pool and the
 * monotonic buffer declare that they are not thread-safe. */
unsigned pmr_resource_traits(const pmr_mem_resource *r);

/* How many bytes a block allocated from r (NULL: the default resource)
 * with (bytes, alignment) may use, if r can later tell it from the block's
 * address alone (pmr_usable_size); 0 otherwise (r has no usable_size op,
 * the request is one it cannot size so, alignment is not a power of two,
 * or bytes > SIZE_MAX - alignment). A non-zero answer u is at least bytes,
 * and allocating (u, alignment) gives a block whose usable size is u,
 * which is then deallocated with u. The pools and the thread cache answer
 * for their pooled sizes (the class size); statistics answers as its
 * upstream does. Thread-safe for a thread-safe r. */
size_t pmr_good_size(const pmr_mem_resource *r, size_t bytes, size_t alignment);

/* The usable size of block p, allocated from r (NULL: the default
 * resource) with `alignment` and in use, when r can tell it from the
 * address: p's request got a non-zero pmr_good_size answer. 0 otherwise:
 * any other block of r, an address inside a block of r, p == NULL, an
 * alignment that is not a power of two; never a wrong size. As
 * malloc_usable_size: it may exceed what was asked for. Thread-safe for a
 * thread-safe r. */
size_t pmr_usable_size(const pmr_mem_resource *r, const void *p,
                       size_t alignment);

/* True when memory from a may be given back to b (NULL, for either: the
 * default resource). Identity is equal without calling any hook; otherwise
 * only a's is_equal hook is called (as in std::pmr, the test is not
 * necessarily symmetric). */
static inline bool pmr_is_equal(const pmr_mem_resource *a,
                                const pmr_mem_resource *b) {
  if (a == b) return true;
  if (a == NULL) a = pmr_get_default_resource();
  if (b == NULL) b = pmr_get_default_resource();
  return a == b || (a->ops->is_equal != NULL && a->ops->is_equal(a, b));
}

/* Tries to grow or shrink block p (from r, NULL: the default resource, with
 * old_bytes and alignment) to
 * new_bytes in place. True: p now holds new_bytes (its first
 * min(old_bytes, new_bytes) bytes are unchanged) and must be deallocated with
 * new_bytes. False: nothing changed (the resource cannot resize in place, or
 * not this block, or not by that much, or new_bytes is too large, or the
 * alignment is not a power of two, refused before any hook runs); the caller
 * typically allocates, copies and deallocates instead. Never fails otherwise.
 */
static inline bool pmr_try_resize(pmr_mem_resource *r, void *p,
                                  size_t old_bytes, size_t new_bytes,
                                  size_t alignment) {
  if (r == NULL) r = pmr_get_default_resource();
  if (r->ops->try_resize == NULL || p == NULL || !pmr_is_pow2(alignment) ||
      new_bytes > SIZE_MAX - alignment)
    return false;
  return r->ops->try_resize(r, p, old_bytes, new_bytes, alignment);
}

/* Changes the size of block p (from r, NULL: the default resource at this
 * call, with old_bytes and alignment) to new_bytes, as realloc does, keeping
 * its first min(old_bytes, new_bytes) bytes:
 *   - in place when pmr_try_resize succeeds (returns p);
 *   - else allocates new_bytes from r, copies, and deallocates p with
 *     old_bytes (returns the new block);
 *   - p == NULL allocates new_bytes (old_bytes is ignored);
 *   - new_bytes == old_bytes returns p and calls nothing;
 *   - new_bytes == 0 is not a free: the result is a 0-byte block (what
 *     pmr_allocate(r, 0, alignment) gives) to be deallocated with 0 bytes.
 *     Call pmr_deallocate to free.
 * The result must later be deallocated with new_bytes and alignment.
 * Returns NULL on failure with errno as pmr_allocate sets it (EINVAL for a
 * bad alignment, ENOMEM when out of memory); p is then untouched and still
 * holds old_bytes. errno is unchanged on success. Thread safety is r's. */
void *pmr_reallocate(pmr_mem_resource *r, void *p, size_t old_bytes,
                     size_t new_bytes, size_t alignment);

/* ---- Misuse reports -------------------------------------------------------
 * Misuse that C cannot prevent (double free, wrong size, foreign pointer) is
 * detected by debug builds (-DPMR_DEBUG, `bazel build --config=debug`) and by
 * the debug resource. Each detection produces one message naming the
 * resource, the pointer and the sizes, and is passed to the misuse handler;
 * the bad operation is then ignored (never forwarded), so the resource stays
 * consistent. */

/* Receives one complete message (no trailing newline) and the context given
 * to pmr_set_misuse_handler. */
typedef void (*pmr_misuse_handler)(const char *message, void *context);

/* Installs h with its context and returns the previous handler. h == NULL
 * installs the default, which writes "pmr: <message>\n" to stderr. Set it
 * before other threads start: handler and context are two separate atomics. */
pmr_misuse_handler pmr_set_misuse_handler(pmr_misuse_handler h, void *context);

/* The installed handler, or NULL when it is the default (stderr); its
 * context goes to *context when context is not NULL. Thread-safe. */
pmr_misuse_handler pmr_get_misuse_handler(void **context);

/* Formats a message (printf-style) and passes it to the misuse handler.
 * Thread-safe. For resources, including users' own. */
void pmr_report_misuse(const char *format, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* The NULL rule's check, at the top of every public function of the
 * containers and resources that takes an object: in debug builds a NULL
 * `obj` (a `what`, named in the report) is reported through
 * pmr_report_misuse, naming the function, and the function returns `ret`
 * (empty for a void function) having changed nothing. Release builds: no
 * code, the fast paths stay as they are. Not for direct use. */
#ifdef PMR_DEBUG
#define PMR_IMPL_CHECK_NOT_NULL(obj, what, ret)                          \
  do {                                                                   \
    if (PMR_UNLIKELY((obj) == NULL)) {                                   \
      pmr_report_misuse("%s with a NULL %s; ignored", __func__, (what)); \
      return ret;                                                        \
    }                                                                    \
  } while (0)
#else
#define PMR_IMPL_CHECK_NOT_NULL(obj, what, ret) ((void)0)
#endif

/* Convenience: allocate with the alignment malloc would give (PMR_MAX_ALIGN).
 */
static inline void *pmr_malloc(pmr_mem_resource *r, size_t bytes) {
  return pmr_allocate(r, bytes, PMR_MAX_ALIGN);
}
static inline void pmr_free(pmr_mem_resource *r, void *p, size_t bytes) {
  pmr_deallocate(r, p, bytes, PMR_MAX_ALIGN);
}

/* ---- Process-wide resources --------------------------------------------- */

/* The malloc resource (std::pmr::new_delete_resource): a singleton over the C
 * heap. Any power-of-two alignment works (tested to 1 MiB), also when
 * bytes < alignment. Thread-safe. Equal only to itself. */
pmr_mem_resource *pmr_malloc_resource(void);

/* The null resource (std::pmr::null_memory_resource): every allocation fails
 * with NULL (errno = ENOMEM) without touching the heap; deallocate does
 * nothing. Thread-safe. Equal only to itself. Use it as the upstream of a
 * buffer-backed resource that must never fall back to the heap. */
pmr_mem_resource *pmr_null_resource(void);

/* Installs r as the default resource (pmr_get_default_resource, declared
 * before pmr_allocate, reads it) and returns the previous one.
 * r == NULL installs the malloc resource. r must outlive its use as the
 * default. Thread-safe (atomic exchange). */
pmr_mem_resource *pmr_set_default_resource(pmr_mem_resource *r);

/* r, or the current default resource when r is NULL. */
static inline pmr_mem_resource *pmr_resource_or_default(pmr_mem_resource *r) {
  return r != NULL ? r : pmr_get_default_resource();
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PMR_MEM_RESOURCE_H */
