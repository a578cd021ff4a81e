/* pmr-c: pmr_vector, a growable array of fixed-size elements over any
 * pmr_mem_resource (std::pmr::vector for C).
 *
 * Elements are plain bytes of the size and alignment given at init; the vector
 * copies them with memcpy and never interprets them. The resource given at
 * init (NULL = the default resource at that moment) is kept for the vector's
 * whole life; storage is requested with the element's alignment and given
 * back with exactly the same size and alignment.
 *
 * Errors: every function that may need memory returns false (or NULL) when it
 * cannot get it, when a size would exceed pmr_vector_max_size(), or when a
 * position is out of range; the vector is then exactly as it was (contents,
 * size, capacity). No function aborts.
 *
 * Growth: when an insertion needs room, the capacity becomes
 * max(2 * capacity, needed size, 4) (growth factor 2). reserve() and resize()
 * give exactly what they ask when that is more. When the resource can grow the
 * block in place (pmr_try_resize), the vector grows there without copying.
 *
 * Pointers into the vector (data(), at(), slots from emplace) stay valid until
 * an operation changes the capacity (growth, reserve, shrink_to_fit, the
 * assignments) or moves the element (insert/erase before or at it, swap).
 * Clear, pop_back and erase never reallocate.
 *
 * Iteration: for (size_t i = 0; i < pmr_vector_size(v); ++i) pmr_vector_at(v,
 * i) or over pmr_vector_data(v) as an array.
 *
 * Thread safety: none; a vector is used by one thread at a time.
 *
 * NULL (the library's rule, pmr_mem_resource.h): elems == NULL with n == 0
 * is an empty range; a NULL vector (given to any function, the inline ones
 * included) or element pointer (push_back, insert, elems with n > 0) is a
 * caller error, which debug builds (-DPMR_DEBUG) report through
 * pmr_report_misuse, the call then changing nothing and returning false,
 * NULL or 0 (empty: true). The PMR_VECTOR_*_T macros are not checked.
 */
#ifndef PMR_CONTAINERS_VECTOR_H
#define PMR_CONTAINERS_VECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "../mem_resource/pmr_mem_resource.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The fields are private: use the functions. A zero-filled struct is NOT a
 * valid vector; call pmr_vector_init. */
typedef struct pmr_vector {
  unsigned char *data;
  size_t size;
  size_t capacity;
  size_t elem_size;
  size_t elem_align;
  pmr_mem_resource *resource;
} pmr_vector;

/* Initialises an empty vector (no allocation) of elements of elem_size bytes
 * aligned to elem_align, over r (NULL = the current default resource).
 * False, with v untouched, when elem_size is 0, elem_align is not a power of
 * two, or elem_size is not a multiple of elem_align (as sizeof always is). */
bool pmr_vector_init(pmr_vector *v, size_t elem_size, size_t elem_align,
                     pmr_mem_resource *r);

/* Gives the storage back. v is then an empty vector with the same resource
 * and element type: destroying it again, or reusing it, is allowed. */
void pmr_vector_destroy(pmr_vector *v);

/* The resource given at init. */
pmr_mem_resource *pmr_vector_resource(const pmr_vector *v);

/* The largest size this vector may ever have: PTRDIFF_MAX / elem_size. */
size_t pmr_vector_max_size(const pmr_vector *v);

/* Size, capacity, emptiness (a NULL vector, in debug builds: 0, true). */
static inline size_t pmr_vector_size(const pmr_vector *v) {
  PMR_IMPL_CHECK_NOT_NULL(v, "vector", 0);
  return v->size;
}
static inline size_t pmr_vector_capacity(const pmr_vector *v) {
  PMR_IMPL_CHECK_NOT_NULL(v, "vector", 0);
  return v->capacity;
}
static inline bool pmr_vector_empty(const pmr_vector *v) {
  PMR_IMPL_CHECK_NOT_NULL(v, "vector", true);
  return v->size == 0;
}
static inline size_t pmr_vector_elem_size(const pmr_vector *v) {
  PMR_IMPL_CHECK_NOT_NULL(v, "vector", 0);
  return v->elem_size;
}

/* The first element (the array of size() elements); NULL when capacity is 0. */
static inline void *pmr_vector_data(const pmr_vector *v) {
  PMR_IMPL_CHECK_NOT_NULL(v, "vector", NULL);
  return v->data;
}

/* Element i, or NULL when i >= size (bounds-checked). */
static inline void *pmr_vector_at(const pmr_vector *v, size_t i) {
  PMR_IMPL_CHECK_NOT_NULL(v, "vector", NULL);
  return i < v->size ? v->data + i * v->elem_size : NULL;
}

/* The first / last element, or NULL when empty. */
static inline void *pmr_vector_front(const pmr_vector *v) {
  PMR_IMPL_CHECK_NOT_NULL(v, "vector", NULL);
  return v->size != 0 ? v->data : NULL;
}
static inline void *pmr_vector_back(const pmr_vector *v) {
  PMR_IMPL_CHECK_NOT_NULL(v, "vector", NULL);
  return v->size != 0 ? v->data + (v->size - 1) * v->elem_size : NULL;
}

/* Makes capacity >= n (exactly n when it grows). False on failure or
 * n > max_size, vector unchanged. */
bool pmr_vector_reserve(pmr_vector *v, size_t n);

/* Sets the size to n: new elements are zero-filled, extra ones dropped.
 * Capacity grows to exactly n when needed, never shrinks. False on failure,
 * vector unchanged. */
bool pmr_vector_resize(pmr_vector *v, size_t n);

/* Makes capacity == size (frees the storage when empty). Tries the resource's
 * in-place resize first. False when a smaller block could not be had: the
 * vector is then unchanged (still valid, still the old capacity). */
bool pmr_vector_shrink_to_fit(pmr_vector *v);

/* Size 0; keeps the capacity. */
void pmr_vector_clear(pmr_vector *v);

/* Out-of-line part of pmr_vector_push_back (growth). Not for direct use. */
bool pmr_impl_vector_push_back_grow(pmr_vector *v, const void *elem);
/* Reports a NULL element given to `op` (debug builds); returns false. */
bool pmr_impl_vector_null_elem(const pmr_vector *v, const char *op);

/* Appends a copy of *elem (elem_size bytes; may point into v itself).
 * False on failure, vector unchanged. Inline while there is capacity
 * (a call per element costs more than the copy: containers/README.md, "Why
 * inline"); 4- and 8-byte elements copy without a memcpy call.
 * PMR_VECTOR_PUSH_T copies a T directly. */
#if defined(__GNUC__) && !defined(__clang__)
/* The fixed-size copies below are for the element size the vector has; GCC
 * also sees them in the branches a caller's smaller element never takes. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Warray-bounds"
#pragma GCC diagnostic ignored "-Wstringop-overread"
#endif
static inline bool pmr_vector_push_back(pmr_vector *v, const void *elem) {
  PMR_IMPL_CHECK_NOT_NULL(v, "vector", false);
#ifdef PMR_DEBUG
  if (elem == NULL) return pmr_impl_vector_null_elem(v, "push_back");
#endif
  if (PMR_LIKELY(v->size < v->capacity)) {
    unsigned char *dst = v->data + v->size * v->elem_size;
    if (v->elem_size == 8)
      memcpy(dst, elem, 8); /* a single move, not a call */
    else if (v->elem_size == 4)
      memcpy(dst, elem, 4);
    else
      memcpy(dst, elem, v->elem_size);
    ++v->size;
    return true;
  }
  return pmr_impl_vector_push_back_grow(v, elem);
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

/* Appends one zero-filled element and returns it for the caller to fill, or
 * NULL on failure (vector unchanged). */
void *pmr_vector_emplace_back(pmr_vector *v);

/* Removes the last element, copying it to *out first when out is not NULL.
 * False (nothing changed) when empty. Never reallocates. */
bool pmr_vector_pop_back(pmr_vector *v, void *out);

/* Inserts a copy of *elem before position pos (pos == size appends).
 * False when pos > size or on failure, vector unchanged. */
bool pmr_vector_insert(pmr_vector *v, size_t pos, const void *elem);

/* Inserts copies of the n elements at elems before position pos. elems may
 * point into v itself (within its size). n == 0 does nothing and succeeds.
 * False when pos > size, elems is NULL with n > 0, or on failure. */
bool pmr_vector_insert_range(pmr_vector *v, size_t pos, const void *elems,
                             size_t n);

/* Removes element pos; later elements move down. False when pos >= size. */
bool pmr_vector_erase(pmr_vector *v, size_t pos);

/* Removes elements [first, last). False (nothing changed) unless
 * first <= last <= size. Never reallocates. */
bool pmr_vector_erase_range(pmr_vector *v, size_t first, size_t last);

/* Swaps contents, capacities, element types and resources in O(1); no
 * allocation. Each storage block keeps travelling with its resource. */
void pmr_vector_swap(pmr_vector *a, pmr_vector *b);

/* Initialises dst (not initialised before) as a copy of src over r
 * (NULL = the default resource), with capacity == src's size. False on
 * failure: dst is then a valid empty vector over r. */
bool pmr_vector_init_copy(pmr_vector *dst, const pmr_vector *src,
                          pmr_mem_resource *r);

/* Initialises dst (not initialised before) with src's storage and resource
 * in O(1), no allocation; src becomes empty (same resource, same type). */
void pmr_vector_init_move(pmr_vector *dst, pmr_vector *src);

/* Makes dst (initialised) a copy of src, keeping dst's resource. Reuses dst's
 * storage when large enough. False, dst unchanged, on failure or when the
 * element sizes or alignments differ. */
bool pmr_vector_copy_assign(pmr_vector *dst, const pmr_vector *src);

/* Moves src's elements into dst (initialised), keeping dst's resource. When
 * pmr_is_equal(src's resource, dst's resource), dst takes src's storage
 * (O(1), no allocation); otherwise the elements are copied into storage from
 * dst's resource. On success src is empty (its storage given back). False,
 * both unchanged, on failure or when the element types differ. */
bool pmr_vector_move_assign(pmr_vector *dst, pmr_vector *src);

/* ---- Thin typed convenience macros (T is the element type). v and i may be
 * evaluated more than once. */
#define PMR_VECTOR_INIT_T(v, T, r) \
  pmr_vector_init((v), sizeof(T), PMR_ALIGNOF(T), (r))
#define PMR_VECTOR_DATA_T(v, T) ((T *)pmr_vector_data(v))
/* Unchecked typed element i (i < size required). */
#define PMR_VECTOR_GET_T(v, T, i) (((T *)pmr_vector_data(v))[i])
#define PMR_VECTOR_AT_T(v, T, i) ((T *)pmr_vector_at((v), (i)))
#define PMR_VECTOR_FRONT_T(v, T) ((T *)pmr_vector_front(v))
#define PMR_VECTOR_BACK_T(v, T) ((T *)pmr_vector_back(v))
/* Appends value (an expression of type T, evaluated after the slot is made,
 * so it must not hold a pointer into v). Yields true, or false on failure. */
/* v is evaluated more than once. */
#define PMR_VECTOR_PUSH_T(v, T, value)                           \
  (PMR_LIKELY((v)->size < (v)->capacity)                         \
       ? (((T *)(void *)(v)->data)[(v)->size++] = (value), true) \
       : (pmr_vector_emplace_back(v) != NULL                     \
              ? (*(T *)pmr_vector_back(v) = (value), true)       \
              : false))

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PMR_CONTAINERS_VECTOR_H */
