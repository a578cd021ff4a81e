/* PRIVATE: what dropin.c shares with dropin_cxx.c. */
#ifndef PMR_IMPL_MALLOC_DROPIN_H
#define PMR_IMPL_MALLOC_DROPIN_H

#include <stddef.h>

/* A block of `bytes` aligned to `alignment` (a power of two, any size):
 * aligned_alloc's work without its checks. NULL with errno ENOMEM when
 * there is no memory. */
void *pmr_impl_dropin_aligned(size_t alignment, size_t bytes);

#endif /* PMR_IMPL_MALLOC_DROPIN_H */
