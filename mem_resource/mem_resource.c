/* The malloc, null and default resources. */
/* POSIX 2008 (clock_gettime, posix_memalign, O_CLOEXEC) for builds that ask
 * for strict ISO C (-std=c11) and define nothing. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "mem_resource/pmr_mem_resource.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *pmr_impl_bad_request(size_t bytes, size_t alignment) {
  (void)bytes;
  errno = pmr_is_pow2(alignment) ? ENOMEM : EINVAL;
  return NULL;
}

/* pmr_reallocate of a block (p != NULL) on r (not NULL: every call below
 * must reach the same resource). Out of line, so that a new block (p ==
 * NULL: realloc(NULL, n), as an allocator hook such as Lua's asks for every
 * new object) costs pmr_reallocate no frame: a test and a jump. */
PMR_NOINLINE static void *reallocate_block(pmr_mem_resource *r, void *p,
                                           size_t old_bytes, size_t new_bytes,
                                           size_t alignment) {
  if (!pmr_is_pow2(alignment)) return pmr_impl_bad_request(0, alignment);
  if (new_bytes == old_bytes) return p;
  if (pmr_try_resize(r, p, old_bytes, new_bytes, alignment)) return p;
  void *q = pmr_allocate(r, new_bytes, alignment);
  if (q == NULL) return NULL;
  memcpy(q, p, old_bytes < new_bytes ? old_bytes : new_bytes);
  pmr_deallocate(r, p, old_bytes, alignment);
  return q;
}

void *pmr_reallocate(pmr_mem_resource *r, void *p, size_t old_bytes,
                     size_t new_bytes, size_t alignment) {
  if (p == NULL) return pmr_allocate(r, new_bytes, alignment);
  return reallocate_block(pmr_resource_or_default(r), p, old_bytes, new_bytes,
                          alignment);
}

/* ---- malloc resource ----------------------------------------------------- */

static void *malloc_allocate(pmr_mem_resource *self, size_t bytes,
                             size_t alignment) {
  (void)self;
  /* malloc(0) may return NULL; ask for one byte so 0 gets a distinct block. */
  if (bytes == 0) bytes = 1;
  if (alignment <= PMR_MAX_ALIGN) return malloc(bytes);
  /* posix_memalign accepts any power of two >= sizeof(void *) and any size,
   * including bytes < alignment (aligned_alloc has historically been pickier).
   */
  void *p = NULL;
  int rc = posix_memalign(&p, alignment, bytes);
  if (rc != 0) {
    errno = rc;
    return NULL;
  }
  return p;
}

static void malloc_deallocate(pmr_mem_resource *self, void *p, size_t bytes,
                              size_t alignment) {
  (void)self;
  (void)bytes;
  (void)alignment;
  free(p);
}

static unsigned thread_safe(const pmr_mem_resource *self) {
  (void)self;
  return PMR_TRAIT_THREAD_SAFE;
}

static unsigned system_memory(const pmr_mem_resource *self) {
  (void)self;
  return PMR_TRAIT_THREAD_SAFE | PMR_TRAIT_SYSTEM_MEMORY;
}

static const pmr_mem_resource_ops malloc_ops = {.allocate = malloc_allocate,
                                                .deallocate = malloc_deallocate,
                                                .traits = system_memory};
static pmr_mem_resource malloc_resource = {&malloc_ops};

pmr_mem_resource *pmr_malloc_resource(void) { return &malloc_resource; }

/* ---- null resource ------------------------------------------------------- */

static void *null_allocate(pmr_mem_resource *self, size_t bytes,
                           size_t alignment) {
  (void)self;
  (void)bytes;
  (void)alignment;
  errno = ENOMEM;
  return NULL;
}

static void null_deallocate(pmr_mem_resource *self, void *p, size_t bytes,
                            size_t alignment) {
  (void)self;
  (void)p;
  (void)bytes;
  (void)alignment;
}

static const pmr_mem_resource_ops null_ops = {.allocate = null_allocate,
                                              .deallocate = null_deallocate,
                                              .traits = thread_safe};
static pmr_mem_resource null_resource = {&null_ops};

pmr_mem_resource *pmr_null_resource(void) { return &null_resource; }

/* ---- default resource ---------------------------------------------------- */

/* Statically initialised, so there is no first-use race. Acquire/release
 * ordering publishes the pointed-to resource's state along with the pointer. */
static _Atomic(pmr_mem_resource *) default_resource = &malloc_resource;

pmr_mem_resource *pmr_get_default_resource(void) {
  return atomic_load_explicit(&default_resource, memory_order_acquire);
}

void *pmr_impl_allocate_default(size_t bytes, size_t alignment) {
  pmr_mem_resource *r = pmr_get_default_resource();
  return r->ops->allocate(r, bytes, alignment);
}

void pmr_impl_deallocate_default(void *p, size_t bytes, size_t alignment) {
  pmr_mem_resource *r = pmr_get_default_resource();
  r->ops->deallocate(r, p, bytes, alignment);
}

pmr_mem_resource *pmr_set_default_resource(pmr_mem_resource *r) {
  if (r == NULL) r = &malloc_resource;
  return atomic_exchange_explicit(&default_resource, r, memory_order_acq_rel);
}

/* ---- misuse reports ------------------------------------------------------ */

static void default_misuse_handler(const char *message, void *context) {
  (void)context;
  fprintf(stderr, "pmr: %s\n", message);
}

static _Atomic(pmr_misuse_handler) misuse_handler = default_misuse_handler;
static _Atomic(void *) misuse_context = NULL;

pmr_misuse_handler pmr_set_misuse_handler(pmr_misuse_handler h, void *context) {
  if (h == NULL) h = default_misuse_handler;
  atomic_store_explicit(&misuse_context, context, memory_order_release);
  return atomic_exchange_explicit(&misuse_handler, h, memory_order_acq_rel);
}

pmr_misuse_handler pmr_get_misuse_handler(void **context) {
  pmr_misuse_handler h =
      atomic_load_explicit(&misuse_handler, memory_order_acquire);
  if (context != NULL)
    *context = atomic_load_explicit(&misuse_context, memory_order_acquire);
  return h == default_misuse_handler ? NULL : h;
}

void pmr_report_misuse(const char *format, ...) {
  char message[512];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof message, format, args);
  va_end(args);
  pmr_misuse_handler h =
      atomic_load_explicit(&misuse_handler, memory_order_acquire);
  h(message, atomic_load_explicit(&misuse_context, memory_order_acquire));
}

unsigned pmr_resource_traits(const pmr_mem_resource *r) {
  if (r == NULL) r = pmr_get_default_resource();
  return r->ops->traits != NULL ? r->ops->traits(r) : 0;
}

size_t pmr_good_size(const pmr_mem_resource *r, size_t bytes,
                     size_t alignment) {
  if (r == NULL) r = pmr_get_default_resource();
  if (r->ops->usable_size == NULL || !pmr_is_pow2(alignment) ||
      bytes > SIZE_MAX - alignment)
    return 0;
  return r->ops->usable_size(r, NULL, bytes, alignment);
}

size_t pmr_usable_size(const pmr_mem_resource *r, const void *p,
                       size_t alignment) {
  if (r == NULL) r = pmr_get_default_resource();
  if (r->ops->usable_size == NULL || p == NULL || !pmr_is_pow2(alignment))
    return 0;
  return r->ops->usable_size(r, p, 0, alignment);
}

size_t pmr_impl_deallocate_unsized_slow(pmr_mem_resource *r, void *p,
                                        size_t alignment) {
  if (r == NULL) r = pmr_get_default_resource();
  if (p == NULL || !pmr_is_pow2(alignment)) return 0;
  if (r->ops->deallocate_unsized != NULL)
    return r->ops->deallocate_unsized(r, p, alignment);
  size_t u = pmr_usable_size(r, p, alignment);
  if (u != 0) r->ops->deallocate(r, p, u, alignment);
  return u;
}
