/* pmr-c as the process's malloc (pmr_dropin.h): C++'s operator new and
 * delete in every standard form, over dropin.c's functions. */
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

#include "malloc/internal/dropin.h"
#include "mem_resource/pmr_mem_resource.h"

#ifdef PMR_DROPIN_RENAME
#include "malloc/internal/dropin_rename.h"
#endif

/* ---- C++'s operator new and delete -------------------------------------- */

/* The Itanium C++ ABI's names, on LP64 targets (size_t is unsigned long,
 * 'm'). Failure follows the standard: call the new-handler while there is
 * one, else throw std::bad_alloc, through libstdc++ (weak: a C program
 * that never calls operator new needs no C++ runtime). */
#if defined(__LP64__) && (defined(__GNUC__) || defined(__clang__))
#define PMR_DROPIN_CXX 1
static bool power_of_two(size_t a) { return a != 0 && (a & (a - 1)) == 0; }

typedef void (*new_handler_fn)(void);
extern new_handler_fn _ZSt15get_new_handlerv(void) __attribute__((weak));
/* std::__throw_bad_alloc(), named through an asm label: its name holds a
 * double underscore, which our own identifiers never do. */
extern void pmr_impl_throw_bad_alloc(void) __asm__("_ZSt17__throw_bad_allocv")
    __attribute__((weak, noreturn));

void *_Znwm(size_t);
void *_Znam(size_t);
void *_ZnwmRKSt9nothrow_t(size_t, const void *);
void *_ZnamRKSt9nothrow_t(size_t, const void *);
void *_ZnwmSt11align_val_t(size_t, size_t);
void *_ZnamSt11align_val_t(size_t, size_t);
void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t, size_t, const void *);
void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t, size_t, const void *);
void _ZdlPv(void *);
void _ZdaPv(void *);
void _ZdlPvm(void *, size_t);
void _ZdaPvm(void *, size_t);
void _ZdlPvRKSt9nothrow_t(void *, const void *);
void _ZdaPvRKSt9nothrow_t(void *, const void *);
void _ZdlPvSt11align_val_t(void *, size_t);
void _ZdaPvSt11align_val_t(void *, size_t);
void _ZdlPvmSt11align_val_t(void *, size_t, size_t);
void _ZdaPvmSt11align_val_t(void *, size_t, size_t);
void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *, size_t, const void *);
void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *, size_t, const void *);

PMR_NOINLINE static void *new_failed(size_t bytes, size_t alignment) {
  for (;;) {
    new_handler_fn h = _ZSt15get_new_handlerv ? _ZSt15get_new_handlerv() : 0;
    if (h == NULL) {
      if (pmr_impl_throw_bad_alloc) pmr_impl_throw_bad_alloc();
      abort(); /* operator new cannot return NULL, and cannot throw here */
    }
    h();
    void *p = alignment == 0 ? malloc(bytes)
                             : pmr_impl_dropin_aligned(alignment, bytes);
    if (p != NULL) return p;
  }
}

static inline void *new_plain(size_t bytes) {
  void *p = malloc(bytes);
  return PMR_LIKELY(p != NULL) ? p : new_failed(bytes, 0);
}

static void *new_pmr_impl_dropin_aligned(size_t bytes, size_t alignment) {
  void *p = power_of_two(alignment) ? pmr_impl_dropin_aligned(alignment, bytes)
                                    : NULL;
  return p != NULL ? p : new_failed(bytes, alignment);
}

void *_Znwm(size_t n) { return new_plain(n); }
void *_Znam(size_t n) { return new_plain(n); }
void *_ZnwmRKSt9nothrow_t(size_t n, const void *t) {
  (void)t;
  return malloc(n);
}
void *_ZnamRKSt9nothrow_t(size_t n, const void *t) {
  (void)t;
  return malloc(n);
}
void *_ZnwmSt11align_val_t(size_t n, size_t a) {
  return new_pmr_impl_dropin_aligned(n, a);
}
void *_ZnamSt11align_val_t(size_t n, size_t a) {
  return new_pmr_impl_dropin_aligned(n, a);
}
void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t n, size_t a, const void *t) {
  (void)t;
  return power_of_two(a) ? pmr_impl_dropin_aligned(a, n) : NULL;
}
void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t n, size_t a, const void *t) {
  (void)t;
  return power_of_two(a) ? pmr_impl_dropin_aligned(a, n) : NULL;
}
void _ZdlPv(void *p) { free(p); }
void _ZdaPv(void *p) { free(p); }
void _ZdlPvm(void *p, size_t n) {
  (void)n;
  free(p);
}
void _ZdaPvm(void *p, size_t n) {
  (void)n;
  free(p);
}
void _ZdlPvRKSt9nothrow_t(void *p, const void *t) {
  (void)t;
  free(p);
}
void _ZdaPvRKSt9nothrow_t(void *p, const void *t) {
  (void)t;
  free(p);
}
void _ZdlPvSt11align_val_t(void *p, size_t a) {
  (void)a;
  free(p);
}
void _ZdaPvSt11align_val_t(void *p, size_t a) {
  (void)a;
  free(p);
}
void _ZdlPvmSt11align_val_t(void *p, size_t n, size_t a) {
  (void)n;
  (void)a;
  free(p);
}
void _ZdaPvmSt11align_val_t(void *p, size_t n, size_t a) {
  (void)n;
  (void)a;
  free(p);
}
void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, size_t a, const void *t) {
  (void)a;
  (void)t;
  free(p);
}
void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, size_t a, const void *t) {
  (void)a;
  (void)t;
  free(p);
}
#else
/* Not an LP64 Itanium-ABI target: libstdc++'s operators, which call
 * malloc and free. */
typedef int pmr_impl_dropin_no_cxx;
#endif
