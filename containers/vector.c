/* pmr_vector: see vector.h. */
#include "containers/pmr_vector.h"

#include <stdint.h>
#include <string.h>

#define MIN_GROWTH 4

bool pmr_vector_init(pmr_vector *v, size_t elem_size, size_t elem_align,
                     pmr_mem_resource *r) {
  PMR_IMPL_CHECK_NOT_NULL(v, "vector", false);
  if (v == NULL || elem_size == 0 || !pmr_is_pow2(elem_align) ||
      elem_size % elem_align != 0)
    return false;
  v->data = NULL;
  v->size = 0;
  v->capacity = 0;
  v->elem_size = elem_size;
  v->elem_align = elem_align;
  v->resource = pmr_resource_or_default(r);
  return true;
}

static void release_storage(pmr_vector *v) {
  pmr_deallocate(v->resource, v->data, v->capacity * v->elem_size,
                 v->elem_align);
  v->data = NULL;
  v->capacity = 0;
  v->size = 0;
}

void pmr_vector_destroy(pmr_vector *v) {
  PMR_IMPL_CHECK_NOT_NULL(v, "vector", );
  release_storage(v);
}

pmr_mem_resource *pmr_vector_resource(const pmr_vector *v) {
  PMR_IMPL_CHECK_NOT_NULL(v, "vector", NULL);
  return v->resource;
}

size_t pmr_vector_max_size(const pmr_vector *v) {
  PMR_IMPL_CHECK_NOT_NULL(v, "vector", 0);
  return (size_t)PTRDIFF_MAX / v->elem_size;
}

/* The capacity for an insertion that needs `needed` elements. */
static size_t grown_capacity(const pmr_vector *v, size_t needed) {
  size_t max = pmr_vector_max_size(v);
  size_t c = v->capacity <= max / 2 ? v->capacity * 2 : max;
  if (c < MIN_GROWTH) c = MIN_GROWTH < max ? MIN_GROWTH : max;
  return c > needed ? c : needed;
}

/* Tries to make the block hold new_cap elements without moving it. */
static bool resize_in_place(pmr_vector *v, size_t new_cap) {
  if (v->data == NULL ||
      !pmr_try_resize(v->resource, v->data, v->capacity * v->elem_size,
                      new_cap * v->elem_size, v->elem_align))
    return false;
  v->capacity = new_cap;
  return true;
}

/* Sets the capacity to new_cap (>= size), keeping the elements. */
static bool set_capacity(pmr_vector *v, size_t new_cap) {
  if (new_cap == v->capacity) return true;
  if (new_cap == 0) {
    release_storage(v);
    return true;
  }
  if (resize_in_place(v, new_cap)) return true;
  unsigned char *p =
      pmr_allocate(v->resource, new_cap * v->elem_size, v->elem_align);
  if (p == NULL) return false;
  if (v->size != 0) memcpy(p, v->data, v->size * v->elem_size);
  pmr_deallocate(v->resource, v->data, v->capacity * v->elem_size,
                 v->elem_align);
  v->data = p;
  v->capacity = new_cap;
  return true;
}

/* Opens a gap of n elements at pos and fills it from src (NULL: zeros).
 * src may lie within the vector's elements. Requires pos <= size. */
static bool insert_impl(pmr_vector *v, size_t pos, const void *src, size_t n) {
  const size_t es = v->elem_size;
  if (n == 0) return true;
  if (n > pmr_vector_max_size(v) - v->size) return false;
  const size_t new_size = v->size + n;
  const size_t gap = n * es, at = pos * es, used = v->size * es;

  /* Does src alias our elements? Compared as integers: unrelated pointers
   * must not be compared with < in C. */
  bool aliased = false;
  size_t off = 0;
  if (src != NULL && v->data != NULL) {
    uintptr_t s = (uintptr_t)src, b = (uintptr_t)v->data;
    if (s >= b && s < b + used) {
      off = (size_t)(s - b);
      if (gap > used - off) return false; /* reaches past the elements */
      aliased = true;
    }
  }

  if (new_size > v->capacity) {
    size_t new_cap = grown_capacity(v, new_size);
    if (!resize_in_place(v, new_cap)) {
      unsigned char *p = pmr_allocate(v->resource, new_cap * es, v->elem_align);
      if (p == NULL) return false;
      if (at != 0) memcpy(p, v->data, at);
      if (src != NULL)
        memcpy(p + at, src, gap); /* src is still valid in the old block */
      else
        memset(p + at, 0, gap);
      if (used != at) memcpy(p + at + gap, v->data + at, used - at);
      pmr_deallocate(v->resource, v->data, v->capacity * es, v->elem_align);
      v->data = p;
      v->capacity = new_cap;
      v->size = new_size;
      return true;
    }
  }

  unsigned char *d = v->data;
  if (used != at) memmove(d + at + gap, d + at, used - at);
  if (src == NULL) {
    memset(d + at, 0, gap);
  } else if (!aliased) {
    memcpy(d + at, src, gap);
  } else {
    /* Source bytes before `at` did not move; those at or after it moved up
     * by `gap`. Neither piece overlaps its destination. */
    size_t first = off < at ? (at - off < gap ? at - off : gap) : 0;
    if (first != 0) memcpy(d + at, d + off, first);
    if (first != gap) {
      size_t from = (off + first) + gap;
      memcpy(d + at + first, d + from, gap - first);
    }
  }
  v->size = new_size;
  return true;
}

bool pmr_vector_reserve(pmr_vector *v, size_t n) {
  PMR_IMPL_CHECK_NOT_NULL(v, "vector", false);
  if (n <= v->capacity) return true;
  if (n > pmr_vector_max_size(v)) return false;
  return set_capacity(v, n);
}

bool pmr_vector_resize(pmr_vector *v, size_t n) {
  PMR_IMPL_CHECK_NOT_NULL(v, "vector", false);
  if (n <= v->size) {
    v->size = n;
    return true;
  }
  if (n > pmr_vector_max_size(v)) return false;
  if (n > v->capacity && !set_capacity(v, n)) return false;
  memset(v->data + v->size * v->elem_size, 0, (n - v->size) * v->elem_size);
  v->size = n;
  return true;
}

bool pmr_vector_shrink_to_fit(pmr_vector *v) {
  PMR_IMPL_CHECK_NOT_NULL(v, "vector", false);
  return set_capacity(v, v->size);
}

void pmr_vector_clear(pmr_vector *v) {
  PMR_IMPL_CHECK_NOT_NULL(v, "vector", );
  v->size = 0;
}

bool pmr_impl_vector_push_back_grow(pmr_vector *v, const void *elem) {
  return insert_impl(v, v->size, elem, 1);
}

void *pmr_vector_emplace_back(pmr_vector *v) {
  PMR_IMPL_CHECK_NOT_NULL(v, "vector", NULL);
  if (!insert_impl(v, v->size, NULL, 1)) return NULL;
  return v->data + (v->size - 1) * v->elem_size;
}

bool pmr_vector_pop_back(pmr_vector *v, void *out) {
  PMR_IMPL_CHECK_NOT_NULL(v, "vector", false);
  if (v->size == 0) return false;
  --v->size;
  if (out != NULL) memcpy(out, v->data + v->size * v->elem_size, v->elem_size);
  return true;
}

bool pmr_impl_vector_null_elem(const pmr_vector *v, const char *op) {
#ifdef PMR_DEBUG
  pmr_report_misuse("vector %p: %s with a NULL element; ignored",
                    (const void *)v, op);
#else
  (void)v;
  (void)op;
#endif
  return false;
}

bool pmr_vector_insert(pmr_vector *v, size_t pos, const void *elem) {
  PMR_IMPL_CHECK_NOT_NULL(v, "vector", false);
  if (elem == NULL) return pmr_impl_vector_null_elem(v, "insert");
  if (pos > v->size) return false;
  return insert_impl(v, pos, elem, 1);
}

bool pmr_vector_insert_range(pmr_vector *v, size_t pos, const void *elems,
                             size_t n) {
  PMR_IMPL_CHECK_NOT_NULL(v, "vector", false);
  if (elems == NULL && n != 0)
    return pmr_impl_vector_null_elem(v, "insert_range");
  if (pos > v->size) return false;
  return insert_impl(v, pos, elems, n);
}

bool pmr_vector_erase_range(pmr_vector *v, size_t first, size_t last) {
  PMR_IMPL_CHECK_NOT_NULL(v, "vector", false);
  if (first > last || last > v->size) return false;
  const size_t es = v->elem_size;
  if (last != v->size)
    memmove(v->data + first * es, v->data + last * es, (v->size - last) * es);
  v->size -= last - first;
  return true;
}

bool pmr_vector_erase(pmr_vector *v, size_t pos) {
  PMR_IMPL_CHECK_NOT_NULL(v, "vector", false);
  if (pos >= v->size) return false;
  return pmr_vector_erase_range(v, pos, pos + 1);
}

void pmr_vector_swap(pmr_vector *a, pmr_vector *b) {
  PMR_IMPL_CHECK_NOT_NULL(a, "vector", );
  PMR_IMPL_CHECK_NOT_NULL(b, "vector", );
  pmr_vector t = *a;
  *a = *b;
  *b = t;
}

bool pmr_vector_init_copy(pmr_vector *dst, const pmr_vector *src,
                          pmr_mem_resource *r) {
  PMR_IMPL_CHECK_NOT_NULL(dst, "vector", false);
  PMR_IMPL_CHECK_NOT_NULL(src, "vector", false);
  pmr_vector_init(dst, src->elem_size, src->elem_align, r);
  if (src->size == 0) return true;
  unsigned char *p =
      pmr_allocate(dst->resource, src->size * src->elem_size, src->elem_align);
  if (p == NULL) return false;
  memcpy(p, src->data, src->size * src->elem_size);
  dst->data = p;
  dst->size = dst->capacity = src->size;
  return true;
}

void pmr_vector_init_move(pmr_vector *dst, pmr_vector *src) {
  PMR_IMPL_CHECK_NOT_NULL(dst, "vector", );
  PMR_IMPL_CHECK_NOT_NULL(src, "vector", );
  *dst = *src;
  src->data = NULL;
  src->size = src->capacity = 0;
}

static bool same_type(const pmr_vector *a, const pmr_vector *b) {
  return a->elem_size == b->elem_size && a->elem_align == b->elem_align;
}

bool pmr_vector_copy_assign(pmr_vector *dst, const pmr_vector *src) {
  PMR_IMPL_CHECK_NOT_NULL(dst, "vector", false);
  PMR_IMPL_CHECK_NOT_NULL(src, "vector", false);
  if (dst == src) return true;
  if (!same_type(dst, src)) return false;
  const size_t bytes = src->size * src->elem_size;
  if (src->size > dst->capacity) {
    unsigned char *p = pmr_allocate(dst->resource, bytes, dst->elem_align);
    if (p == NULL) return false;
    release_storage(dst);
    dst->data = p;
    dst->capacity = src->size;
  }
  if (bytes != 0) memcpy(dst->data, src->data, bytes);
  dst->size = src->size;
  return true;
}

bool pmr_vector_move_assign(pmr_vector *dst, pmr_vector *src) {
  PMR_IMPL_CHECK_NOT_NULL(dst, "vector", false);
  PMR_IMPL_CHECK_NOT_NULL(src, "vector", false);
  if (dst == src) return true;
  if (!same_type(dst, src)) return false;
  if (pmr_is_equal(src->resource, dst->resource)) {
    release_storage(dst);
    dst->data = src->data;
    dst->size = src->size;
    dst->capacity = src->capacity;
    src->data = NULL;
    src->size = src->capacity = 0;
    return true;
  }
  if (!pmr_vector_copy_assign(dst, src)) return false;
  release_storage(src);
  return true;
}
