/* PRIVATE, tests only: with PMR_DROPIN_RENAME defined, dropin.c and
 * dropin_cxx.c define their entry points under the names below instead of
 * malloc's, so the drop-in's own code runs inside a process whose malloc
 * stays the sanitizers' (AddressSanitizer, ThreadSanitizer replace malloc
 * themselves and cannot run under a preloaded one):
 * //tests:dropin_renamed_test. Included after the system headers. */
#ifndef PMR_IMPL_MALLOC_DROPIN_RENAME_H
#define PMR_IMPL_MALLOC_DROPIN_RENAME_H

#include <stddef.h>

#define malloc pmr_dropin_test_malloc
#define free pmr_dropin_test_free
#define calloc pmr_dropin_test_calloc
#define realloc pmr_dropin_test_realloc
#define reallocarray pmr_dropin_test_reallocarray
#define posix_memalign pmr_dropin_test_posix_memalign
#define aligned_alloc pmr_dropin_test_aligned_alloc
#define memalign pmr_dropin_test_memalign
#define valloc pmr_dropin_test_valloc
#define pvalloc pmr_dropin_test_pvalloc
#define malloc_usable_size pmr_dropin_test_malloc_usable_size
#define malloc_trim pmr_dropin_test_malloc_trim
#define _Znwm pmr_dropin_test_new
#define _ZnwmSt11align_val_t pmr_dropin_test_new_aligned
#define _ZnwmRKSt9nothrow_t pmr_dropin_test_new_nothrow
#define _ZdlPv pmr_dropin_test_delete
#define _ZdlPvmSt11align_val_t pmr_dropin_test_delete_sized_aligned
#define _Znam pmr_dropin_test_new_array
#define _ZnamRKSt9nothrow_t pmr_dropin_test_new_array_nothrow
#define _ZnamSt11align_val_t pmr_dropin_test_new_array_aligned
#define _ZnwmSt11align_val_tRKSt9nothrow_t pmr_dropin_test_new_aligned_nothrow
#define _ZnamSt11align_val_tRKSt9nothrow_t \
  pmr_dropin_test_new_array_aligned_nothrow
#define _ZdaPv pmr_dropin_test_delete_array
#define _ZdlPvm pmr_dropin_test_delete_sized
#define _ZdaPvm pmr_dropin_test_delete_array_sized
#define _ZdlPvRKSt9nothrow_t pmr_dropin_test_delete_nothrow
#define _ZdaPvRKSt9nothrow_t pmr_dropin_test_delete_array_nothrow
#define _ZdlPvSt11align_val_t pmr_dropin_test_delete_aligned
#define _ZdaPvSt11align_val_t pmr_dropin_test_delete_array_aligned
#define _ZdaPvmSt11align_val_t pmr_dropin_test_delete_array_sized_aligned
#define _ZdlPvSt11align_val_tRKSt9nothrow_t \
  pmr_dropin_test_delete_aligned_nothrow
#define _ZdaPvSt11align_val_tRKSt9nothrow_t \
  pmr_dropin_test_delete_array_aligned_nothrow

void *malloc(size_t bytes);
void free(void *p);
void *calloc(size_t count, size_t size);
void *realloc(void *p, size_t bytes);
void *reallocarray(void *p, size_t count, size_t size);
int posix_memalign(void **out, size_t alignment, size_t bytes);
void *aligned_alloc(size_t alignment, size_t bytes);
void *memalign(size_t alignment, size_t bytes);
void *valloc(size_t bytes);
void *pvalloc(size_t bytes);
size_t malloc_usable_size(void *p);
int malloc_trim(size_t pad);

#endif /* PMR_IMPL_MALLOC_DROPIN_RENAME_H */
