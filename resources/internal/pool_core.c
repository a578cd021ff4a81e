/* Size classes, options, oversize blocks and debug checks shared by the pool
 * resources. */
#include "resources/internal/pool_core.h"

#include <errno.h>

#include "resources/internal/debug_track.h"
#include "resources/internal/spin_lock.h"

/* Class of each size s <= 1024, indexed by (s + 7) / 8. Built by hand from
 * the class rule in pool_core.h; pmr_impl_pool_class_of is tested against
 * pmr_impl_pool_class_size for every size. */
#define C8(x) x, x, x, x, x, x, x, x
const uint8_t
    pmr_impl_pool_class_table[PMR_IMPL_POOL_TABLE_LIMIT / 8 + 1] =
        {
            0,      0,      1,      2,      3,      4,
            5,      6,      7, /* s = 0..64, step 8 */
            8,      8,      9,      9,      10,     10,
            11,     11, /* 72..128: 80, 96, 112, 128 */
            12,     12,     12,     12,     13,     13,
            13,     13,     14,     14,     14,     14,
            15,     15,     15,     15,     /* ..256 */
            C8(16), C8(17), C8(18), C8(19), /* ..512 */
            C8(20), C8(20), C8(21), C8(21), C8(22), C8(22),
            C8(23), C8(23), /* ..1024 */
};
#undef C8

pmr_pool_options pmr_impl_pool_effective_options(const pmr_pool_options *opts) {
  pmr_pool_options o = {0, 0, 0};
  if (opts != NULL) o = *opts;
  o.max_blocks_per_chunk = pmr_impl_clamp_option(
      o.max_blocks_per_chunk, PMR_POOL_DEFAULT_MAX_BLOCKS_PER_CHUNK,
      PMR_POOL_MAX_MAX_BLOCKS_PER_CHUNK);
  size_t largest = pmr_impl_clamp_option(o.largest_required_pool_block,
                                         PMR_POOL_DEFAULT_LARGEST_BLOCK,
                                         PMR_POOL_MAX_LARGEST_BLOCK);
  o.largest_required_pool_block =
      pmr_impl_pool_class_size(pmr_impl_pool_class_of(largest));
  if (o.max_free_bytes == 0) o.max_free_bytes = PMR_POOL_DEFAULT_MAX_FREE_BYTES;
  return o;
}

bool pmr_impl_pool_debug_free(struct pmr_impl_track *t, const char *kind,
                              const void *resource, void *p, size_t bytes,
                              size_t alignment, bool pooled) {
  size_t b = 0, a = 0;
  switch (pmr_impl_track_remove(t, p, bytes, alignment, pooled, &b, &a)) {
    case PMR_IMPL_TRACK_OK:
      return true;
    case PMR_IMPL_TRACK_DOUBLE_FREE:
      pmr_report_misuse(
          "%s %p: double free of %p (deallocate(%zu bytes, alignment %zu)); "
          "ignored",
          kind, resource, p, bytes, alignment);
      return false;
    case PMR_IMPL_TRACK_MISMATCH:
      pmr_report_misuse(
          "%s %p: %p was allocated with %zu bytes, alignment %zu, but "
          "deallocated with %zu bytes, alignment %zu; ignored",
          kind, resource, p, b, a, bytes, alignment);
      return false;
    default:
      pmr_report_misuse(
          "%s %p: deallocate(%p, %zu bytes, alignment %zu) of a pointer it "
          "never gave out; ignored",
          kind, resource, p, bytes, alignment);
      return false;
  }
}

bool pmr_impl_pool_debug_free_locked(struct pmr_impl_track *t, void *lock,
                                     const char *kind, const void *resource,
                                     void *p, size_t bytes, size_t alignment,
                                     bool pooled) {
  pmr_impl_spin_lock(lock);
  bool ok =
      pmr_impl_pool_debug_free(t, kind, resource, p, bytes, alignment, pooled);
  pmr_impl_spin_unlock(lock);
  return ok;
}

void pmr_impl_pool_debug_add_locked(struct pmr_impl_track *t, void *lock,
                                    const void *p, size_t bytes,
                                    size_t alignment) {
  pmr_impl_spin_lock(lock);
  pmr_impl_track_add(t, p, bytes, alignment);
  pmr_impl_spin_unlock(lock);
}

/* ---- oversize blocks ------------------------------------------------------
 */

#define BIG_TRAILER sizeof(pmr_impl_big_block)

static size_t big_offset(size_t bytes) {
  return pmr_impl_pool_block_size(bytes, PMR_MAX_ALIGN);
}

void *pmr_impl_big_alloc(pmr_impl_big_block *list, void *lock,
                         pmr_mem_resource *upstream, size_t bytes,
                         size_t alignment) {
  if (bytes > SIZE_MAX - PMR_MAX_ALIGN - BIG_TRAILER - alignment) {
    errno = ENOMEM;
    return NULL;
  }
  size_t off = big_offset(bytes);
  size_t align = alignment > PMR_MAX_ALIGN ? alignment : PMR_MAX_ALIGN;
  char *p = (char *)pmr_allocate(upstream, off + BIG_TRAILER, align);
  if (p == NULL) return NULL;
  pmr_impl_big_block *b = (pmr_impl_big_block *)(void *)(p + off);
  b->size = off + BIG_TRAILER;
  b->alignment = align;
  if (lock != NULL) pmr_impl_spin_lock(lock);
  list->size += b->size;
  b->prev = list;
  b->next = list->next;
  list->next->prev = b;
  list->next = b;
  if (lock != NULL) pmr_impl_spin_unlock(lock);
  return p;
}

void pmr_impl_big_free(pmr_impl_big_block *list, void *lock,
                       pmr_mem_resource *upstream, void *p, size_t bytes,
                       size_t alignment) {
  size_t off = big_offset(bytes);
  pmr_impl_big_block *b = (pmr_impl_big_block *)(void *)((char *)p + off);
  (void)alignment; /* the trailer knows what upstream got */
  if (lock != NULL) pmr_impl_spin_lock(lock);
  list->size -= b->size;
  b->prev->next = b->next;
  b->next->prev = b->prev;
  if (lock != NULL) pmr_impl_spin_unlock(lock);
  pmr_deallocate(upstream, p, b->size, b->alignment);
}

void pmr_impl_big_release(pmr_impl_big_block *list,
                          pmr_mem_resource *upstream) {
  pmr_impl_big_block *b = list->next;
  while (b != list) {
    pmr_impl_big_block *next = b->next;
    pmr_deallocate(upstream, (char *)b - (b->size - BIG_TRAILER), b->size,
                   b->alignment);
    b = next;
  }
  pmr_impl_big_init(list);
}
