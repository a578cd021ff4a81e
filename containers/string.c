/* pmr_string: see string.h. */
#include "containers/pmr_string.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "containers/internal/hash.h"

#define INLINE_CAP PMR_STRING_INLINE_CAPACITY
#define LONG_TAG 0xFF

_Static_assert(sizeof(((pmr_string *)0)->u.s) == sizeof(((pmr_string *)0)->u.l),
               "the inline buffer and the long form overlap exactly");
_Static_assert(INLINE_CAP + 1 == sizeof(((pmr_string *)0)->u.s),
               "the tag is the last inline byte");
_Static_assert(INLINE_CAP < LONG_TAG, "inline lengths fit the tag byte");

/* ---- Representation -------------------------------------------------- */

static unsigned char *tag_byte(pmr_string *s) {
  return (unsigned char *)s->u.s + INLINE_CAP;
}
static bool is_long(const pmr_string *s) { return pmr_impl_string_is_long(s); }
static char *buf(pmr_string *s) { return is_long(s) ? s->u.l.ptr : s->u.s; }
static size_t len_of(const pmr_string *s) { return pmr_string_length(s); }
static size_t cap_of(const pmr_string *s) { return pmr_string_capacity(s); }

static void set_cap(pmr_string *s, size_t cap) {
  s->u.l.cap_lo = (uint32_t)((uint64_t)cap & 0xffffffffu);
  s->u.l.cap_hi = (uint16_t)((uint64_t)cap >> 32);
}

/* Sets the length (<= capacity) and writes the terminator. */
static void set_len(pmr_string *s, size_t n) {
  if (is_long(s)) {
    s->u.l.len = n;
    s->u.l.ptr[n] = '\0';
  } else {
    s->u.s[n] = '\0'; /* when n == INLINE_CAP this is the tag, set next */
    *tag_byte(s) = (unsigned char)(INLINE_CAP - n);
  }
}

/* Gives the long block back (if any), leaving an empty inline string. */
static void release(pmr_string *s) {
  if (is_long(s)) pmr_deallocate(s->resource, s->u.l.ptr, cap_of(s) + 1, 1);
  s->u.s[0] = '\0';
  *tag_byte(s) = (unsigned char)INLINE_CAP;
}

/* Installs a block of cap + 1 bytes holding len characters (terminated). */
static void adopt(pmr_string *s, char *p, size_t len, size_t cap) {
  s->u.l.ptr = p;
  s->u.l.len = len;
  set_cap(s, cap);
  *tag_byte(s) = LONG_TAG;
}

size_t pmr_string_max_size(void) {
  /* The capacity has 48 bits, and capacity + 1 must fit in ptrdiff_t. */
  const uint64_t cap_max = ((uint64_t)1 << 48) - 2;
  const uint64_t ptr_max = (uint64_t)PTRDIFF_MAX - 1;
  return (size_t)(cap_max < ptr_max ? cap_max : ptr_max);
}

/* The capacity for an edit that needs `needed` characters. */
static size_t grown_capacity(size_t cap, size_t needed) {
  size_t max = pmr_string_max_size();
  size_t c = cap <= max / 2 ? cap * 2 : max;
  return c > needed ? c : needed;
}

/* Tries to make the long block hold new_cap + 1 bytes without moving it. */
static bool resize_in_place(pmr_string *s, size_t new_cap) {
  if (!is_long(s) ||
      !pmr_try_resize(s->resource, s->u.l.ptr, cap_of(s) + 1, new_cap + 1, 1))
    return false;
  set_cap(s, new_cap);
  return true;
}

/* Sets the capacity to exactly new_cap (>= length, > INLINE_CAP) keeping
 * the contents. */
static bool set_long_capacity(pmr_string *s, size_t new_cap) {
  if (is_long(s) && new_cap == cap_of(s)) return true;
  if (resize_in_place(s, new_cap)) return true;
  const size_t len = len_of(s);
  char *p = pmr_allocate(s->resource, new_cap + 1, 1);
  if (p == NULL) return false;
  memcpy(p, pmr_string_c_str(s), len + 1);
  if (is_long(s)) pmr_deallocate(s->resource, s->u.l.ptr, cap_of(s) + 1, 1);
  adopt(s, p, len, new_cap);
  return true;
}

/* ---- The one editing primitive --------------------------------------- */

/* Replaces [pos, pos + n) with the m bytes at src (NULL: `fill` bytes).
 * Requires pos <= length and n <= length - pos. src may point into s. */
static bool replace_impl(pmr_string *s, size_t pos, size_t n, const char *src,
                         size_t m, char fill) {
  const size_t len = len_of(s), cap = cap_of(s);
  const size_t keep = len - n; /* characters that stay */
  if (m > pmr_string_max_size() - keep) return false;
  const size_t new_len = keep + m, tail = len - pos - n;

  /* Does src alias our characters? Compared as integers: unrelated
   * pointers must not be compared with < in C. */
  char *d = buf(s);
  bool aliased = false;
  size_t off = 0;
  if (src != NULL && m != 0) {
    uintptr_t a = (uintptr_t)src, b = (uintptr_t)d;
    if (a >= b && a < b + len + 1) {
      off = (size_t)(a - b);
      if (m > len - off) return false; /* reaches past the characters */
      aliased = true;
    }
  }

  if (new_len > cap) {
    size_t new_cap = grown_capacity(cap, new_len);
    if (!resize_in_place(s, new_cap)) {
      char *p = pmr_allocate(s->resource, new_cap + 1, 1);
      if (p == NULL) return false;
      memcpy(p, d, pos);
      if (src != NULL)
        memcpy(p + pos, src, m); /* still valid in the old storage */
      else
        memset(p + pos, fill, m);
      memcpy(p + pos + m, d + pos + n, tail);
      p[new_len] = '\0';
      if (is_long(s)) pmr_deallocate(s->resource, d, cap + 1, 1);
      adopt(s, p, new_len, new_cap);
      return true;
    }
  }

  /* In place. */
  if (src == NULL) {
    memmove(d + pos + m, d + pos + n, tail);
    memset(d + pos, fill, m);
  } else if (!aliased) {
    memmove(d + pos + m, d + pos + n, tail);
    memcpy(d + pos, src, m);
  } else if (m <= n) {
    /* Copy first (nothing has moved yet), then close the gap. */
    memmove(d + pos, d + off, m);
    memmove(d + pos + m, d + pos + n, tail);
  } else {
    /* Open the gap first: source bytes before pos + n stay where they are,
     * those after it move up by m - n. */
    const size_t grow = m - n, edge = pos + n;
    memmove(d + pos + m, d + edge, tail);
    size_t first = off < edge ? (edge - off < m ? edge - off : m) : 0;
    if (first != 0) memmove(d + pos, d + off, first);
    if (first != m) memcpy(d + pos + first, d + off + first + grow, m - first);
  }
  set_len(s, new_len);
  return true;
}

/* ---- Life cycle ------------------------------------------------------- */

void pmr_string_init(pmr_string *s, pmr_mem_resource *r) {
  PMR_IMPL_CHECK_NOT_NULL(s, "string", );
  s->resource = pmr_resource_or_default(r);
  s->u.s[0] = '\0';
  *tag_byte(s) = (unsigned char)INLINE_CAP;
}

bool pmr_string_init_bytes(pmr_string *s, const void *p, size_t n,
                           pmr_mem_resource *r) {
  PMR_IMPL_CHECK_NOT_NULL(s, "string", false);
  pmr_string_init(s, r);
  if (n != 0 && p == NULL) return false;
  return replace_impl(s, 0, 0, (const char *)p, n, 0);
}

bool pmr_string_init_cstr(pmr_string *s, const char *cstr,
                          pmr_mem_resource *r) {
  PMR_IMPL_CHECK_NOT_NULL(s, "string", false);
  return pmr_string_init_bytes(s, cstr, cstr != NULL ? strlen(cstr) : 0, r);
}

void pmr_string_destroy(pmr_string *s) {
  PMR_IMPL_CHECK_NOT_NULL(s, "string", );
  release(s);
}

pmr_mem_resource *pmr_string_resource(const pmr_string *s) {
  PMR_IMPL_CHECK_NOT_NULL(s, "string", NULL);
  return s->resource;
}

/* ---- Capacity --------------------------------------------------------- */

bool pmr_string_reserve(pmr_string *s, size_t n) {
  PMR_IMPL_CHECK_NOT_NULL(s, "string", false);
  if (n <= cap_of(s)) return true;
  if (n > pmr_string_max_size()) return false;
  return set_long_capacity(s, n);
}

bool pmr_string_shrink_to_fit(pmr_string *s) {
  PMR_IMPL_CHECK_NOT_NULL(s, "string", false);
  if (!is_long(s)) return true;
  const size_t len = len_of(s);
  if (len <= INLINE_CAP) {
    char *p = s->u.l.ptr;
    size_t cap = cap_of(s);
    memcpy(s->u.s, p, len); /* overwrites the long fields, p saved */
    pmr_deallocate(s->resource, p, cap + 1, 1);
    s->u.s[len] = '\0';
    *tag_byte(s) = (unsigned char)(INLINE_CAP - len);
    return true;
  }
  return set_long_capacity(s, len);
}

void pmr_string_clear(pmr_string *s) {
  PMR_IMPL_CHECK_NOT_NULL(s, "string", );
  set_len(s, 0);
}

bool pmr_string_resize(pmr_string *s, size_t n, char fill) {
  PMR_IMPL_CHECK_NOT_NULL(s, "string", false);
  const size_t len = len_of(s);
  if (n <= len) {
    set_len(s, n);
    return true;
  }
  return replace_impl(s, len, 0, NULL, n - len, fill);
}

/* ---- Edits ------------------------------------------------------------ */

bool pmr_string_assign_bytes(pmr_string *s, const void *p, size_t n) {
  PMR_IMPL_CHECK_NOT_NULL(s, "string", false);
  if (n != 0 && p == NULL) return false;
  return replace_impl(s, 0, len_of(s), (const char *)p, n, 0);
}

bool pmr_string_assign_cstr(pmr_string *s, const char *cstr) {
  PMR_IMPL_CHECK_NOT_NULL(s, "string", false);
  return pmr_string_assign_bytes(s, cstr, cstr != NULL ? strlen(cstr) : 0);
}

bool pmr_string_copy_assign(pmr_string *s, const pmr_string *src) {
  PMR_IMPL_CHECK_NOT_NULL(s, "string", false);
  PMR_IMPL_CHECK_NOT_NULL(src, "string", false);
  if (s == src) return true;
  return pmr_string_assign_bytes(s, pmr_string_c_str(src), len_of(src));
}

PMR_NOINLINE bool pmr_impl_string_push_back_grow(pmr_string *s, char c) {
  return replace_impl(s, len_of(s), 0, &c, 1, 0);
}

bool pmr_string_append_bytes(pmr_string *s, const void *p, size_t n) {
  PMR_IMPL_CHECK_NOT_NULL(s, "string", false);
  if (n != 0 && p == NULL) return false;
  const size_t len = len_of(s);
  if (PMR_LIKELY(n <= cap_of(s) - len)) {
    if (n != 0) memmove(buf(s) + len, p, n);
    set_len(s, len + n);
    return true;
  }
  return replace_impl(s, len, 0, (const char *)p, n, 0);
}

bool pmr_string_append_cstr(pmr_string *s, const char *cstr) {
  PMR_IMPL_CHECK_NOT_NULL(s, "string", false);
  return pmr_string_append_bytes(s, cstr, cstr != NULL ? strlen(cstr) : 0);
}

bool pmr_string_append_string(pmr_string *s, const pmr_string *other) {
  PMR_IMPL_CHECK_NOT_NULL(s, "string", false);
  PMR_IMPL_CHECK_NOT_NULL(other, "string", false);
  return pmr_string_append_bytes(s, pmr_string_c_str(other), len_of(other));
}

bool pmr_string_append_vformat(pmr_string *s, const char *format, va_list ap) {
  PMR_IMPL_CHECK_NOT_NULL(s, "string", false);
  /* Short output goes through a local buffer (one formatting pass); longer
   * output is formatted again straight into reserved room. */
  char local[256];
  va_list again;
  va_copy(again, ap);
  int n = vsnprintf(local, sizeof local, format, ap);
  bool ok = false;
  if (n < 0) {
    ok = false;
  } else if ((size_t)n < sizeof local) {
    ok = pmr_string_append_bytes(s, local, (size_t)n);
  } else {
    const size_t len = len_of(s);
    /* The same growth rule as every other edit (found by the string fuzz
     * target: reserving exactly made repeated long appends quadratic). */
    const size_t need = len + (size_t)n;
    if ((size_t)n <= pmr_string_max_size() - len &&
        (need <= cap_of(s) ||
         set_long_capacity(s, grown_capacity(cap_of(s), need)))) {
      char *d = buf(s);
      int k = vsnprintf(d + len, (size_t)n + 1, format, again);
      if (k == n) {
        set_len(s, len + (size_t)n);
        ok = true;
      } else {
        d[len] = '\0'; /* the format changed its mind: leave s as it was */
      }
    }
  }
  va_end(again);
  return ok;
}

bool pmr_string_append_format(pmr_string *s, const char *format, ...) {
  PMR_IMPL_CHECK_NOT_NULL(s, "string", false);
  va_list ap;
  va_start(ap, format);
  bool ok = pmr_string_append_vformat(s, format, ap);
  va_end(ap);
  return ok;
}

bool pmr_string_pop_back(pmr_string *s) {
  PMR_IMPL_CHECK_NOT_NULL(s, "string", false);
  const size_t len = len_of(s);
  if (len == 0) return false;
  set_len(s, len - 1);
  return true;
}

bool pmr_string_insert_bytes(pmr_string *s, size_t pos, const void *p,
                             size_t n) {
  PMR_IMPL_CHECK_NOT_NULL(s, "string", false);
  if (pos > len_of(s) || (n != 0 && p == NULL)) return false;
  return replace_impl(s, pos, 0, (const char *)p, n, 0);
}

bool pmr_string_insert_cstr(pmr_string *s, size_t pos, const char *cstr) {
  PMR_IMPL_CHECK_NOT_NULL(s, "string", false);
  return pmr_string_insert_bytes(s, pos, cstr, cstr != NULL ? strlen(cstr) : 0);
}

bool pmr_string_erase(pmr_string *s, size_t pos, size_t n) {
  PMR_IMPL_CHECK_NOT_NULL(s, "string", false);
  const size_t len = len_of(s);
  if (pos > len) return false;
  if (n > len - pos) n = len - pos;
  char *d = buf(s);
  memmove(d + pos, d + pos + n, len - pos - n);
  set_len(s, len - n);
  return true;
}

bool pmr_string_replace(pmr_string *s, size_t pos, size_t n, const void *p,
                        size_t m) {
  PMR_IMPL_CHECK_NOT_NULL(s, "string", false);
  const size_t len = len_of(s);
  if (pos > len || (m != 0 && p == NULL)) return false;
  if (n > len - pos) n = len - pos;
  return replace_impl(s, pos, n, (const char *)p, m, 0);
}

/* ---- Search and comparison -------------------------------------------- */

/* NULL bytes with a length above 0: a caller error (see the header). */
static bool null_bytes(const pmr_string *s, const void *p, size_t n,
                       const char *op) {
#ifdef PMR_DEBUG
  if (p == NULL && n != 0) {
    pmr_report_misuse("string %p: %s with NULL and length %zu; ignored",
                      (const void *)s, op, n);
    return true;
  }
#else
  (void)s;
  (void)p;
  (void)n;
  (void)op;
#endif
  return false;
}

size_t pmr_string_find(const pmr_string *s, const void *needle, size_t n,
                       size_t pos) {
  PMR_IMPL_CHECK_NOT_NULL(s, "string", PMR_STRING_NPOS);
  if (null_bytes(s, needle, n, "find")) return PMR_STRING_NPOS;
  const size_t len = len_of(s);
  if (pos > len || n > len - pos) return PMR_STRING_NPOS;
  if (n == 0) return pos;
  const char *hay = pmr_string_c_str(s), *nd = (const char *)needle;
  const char *p = hay + pos, *last = hay + (len - n); /* last start */
  while (p <= last) {
    p = memchr(p, nd[0], (size_t)(last - p) + 1);
    if (p == NULL) break;
    if (memcmp(p + 1, nd + 1, n - 1) == 0) return (size_t)(p - hay);
    ++p;
  }
  return PMR_STRING_NPOS;
}

size_t pmr_string_find_cstr(const pmr_string *s, const char *needle,
                            size_t pos) {
  PMR_IMPL_CHECK_NOT_NULL(s, "string", PMR_STRING_NPOS);
  return pmr_string_find(s, needle, needle != NULL ? strlen(needle) : 0, pos);
}

size_t pmr_string_find_char(const pmr_string *s, char c, size_t pos) {
  PMR_IMPL_CHECK_NOT_NULL(s, "string", PMR_STRING_NPOS);
  return pmr_string_find(s, &c, 1, pos);
}

size_t pmr_string_rfind(const pmr_string *s, const void *needle, size_t n,
                        size_t pos) {
  PMR_IMPL_CHECK_NOT_NULL(s, "string", PMR_STRING_NPOS);
  if (null_bytes(s, needle, n, "rfind")) return PMR_STRING_NPOS;
  const size_t len = len_of(s);
  if (n > len) return PMR_STRING_NPOS;
  size_t i = len - n < pos ? len - n : pos;
  if (n == 0) return i;
  const char *hay = pmr_string_c_str(s), *nd = (const char *)needle;
  for (;;) {
    if (hay[i] == nd[0] && memcmp(hay + i + 1, nd + 1, n - 1) == 0) return i;
    if (i == 0) return PMR_STRING_NPOS;
    --i;
  }
}

size_t pmr_string_rfind_cstr(const pmr_string *s, const char *needle,
                             size_t pos) {
  PMR_IMPL_CHECK_NOT_NULL(s, "string", PMR_STRING_NPOS);
  return pmr_string_rfind(s, needle, needle != NULL ? strlen(needle) : 0, pos);
}

size_t pmr_string_rfind_char(const pmr_string *s, char c, size_t pos) {
  PMR_IMPL_CHECK_NOT_NULL(s, "string", PMR_STRING_NPOS);
  return pmr_string_rfind(s, &c, 1, pos);
}

int pmr_string_compare_bytes(const pmr_string *a, const void *p, size_t n) {
  PMR_IMPL_CHECK_NOT_NULL(a, "string", 0);
  if (null_bytes(a, p, n, "compare_bytes")) n = 0;
  const size_t len = len_of(a);
  const size_t k = len < n ? len : n;
  int c = k != 0 ? memcmp(pmr_string_c_str(a), p, k) : 0;
  if (c != 0) return c < 0 ? -1 : 1;
  return len < n ? -1 : len > n ? 1 : 0;
}

int pmr_string_compare(const pmr_string *a, const pmr_string *b) {
  PMR_IMPL_CHECK_NOT_NULL(a, "string", 0);
  PMR_IMPL_CHECK_NOT_NULL(b, "string", 0);
  return pmr_string_compare_bytes(a, pmr_string_c_str(b), len_of(b));
}

int pmr_string_compare_cstr(const pmr_string *a, const char *cstr) {
  PMR_IMPL_CHECK_NOT_NULL(a, "string", 0);
  if (cstr == NULL) cstr = "";
  return pmr_string_compare_bytes(a, cstr, strlen(cstr));
}

bool pmr_string_equal(const pmr_string *a, const pmr_string *b) {
  PMR_IMPL_CHECK_NOT_NULL(a, "string", false);
  PMR_IMPL_CHECK_NOT_NULL(b, "string", false);
  const size_t len = len_of(a);
  return len == len_of(b) &&
         memcmp(pmr_string_c_str(a), pmr_string_c_str(b), len) == 0;
}

uint64_t pmr_string_hash(const pmr_string *s) {
  PMR_IMPL_CHECK_NOT_NULL(s, "string", 0);
  uint64_t s0, s1;
  pmr_impl_hash_keys(pmr_impl_hash_process_seed(), &s0, &s1);
  return pmr_impl_hash_bytes(pmr_string_c_str(s), len_of(s), s0, s1);
}

/* ---- Copies, moves, swap ---------------------------------------------- */

bool pmr_string_substr(pmr_string *dst, const pmr_string *src, size_t pos,
                       size_t n, pmr_mem_resource *r) {
  PMR_IMPL_CHECK_NOT_NULL(dst, "string", false);
  PMR_IMPL_CHECK_NOT_NULL(src, "string", false);
  const size_t len = len_of(src);
  if (pos > len) {
    pmr_string_init(dst, r);
    return false;
  }
  if (n > len - pos) n = len - pos;
  return pmr_string_init_bytes(dst, pmr_string_c_str(src) + pos, n, r);
}

bool pmr_string_init_copy(pmr_string *dst, const pmr_string *src,
                          pmr_mem_resource *r) {
  PMR_IMPL_CHECK_NOT_NULL(dst, "string", false);
  PMR_IMPL_CHECK_NOT_NULL(src, "string", false);
  return pmr_string_init_bytes(dst, pmr_string_c_str(src), len_of(src), r);
}

void pmr_string_init_move(pmr_string *dst, pmr_string *src) {
  PMR_IMPL_CHECK_NOT_NULL(dst, "string", );
  PMR_IMPL_CHECK_NOT_NULL(src, "string", );
  *dst = *src;
  src->u.s[0] = '\0';
  *tag_byte(src) = (unsigned char)INLINE_CAP;
}

bool pmr_string_move_assign(pmr_string *dst, pmr_string *src) {
  PMR_IMPL_CHECK_NOT_NULL(dst, "string", false);
  PMR_IMPL_CHECK_NOT_NULL(src, "string", false);
  if (dst == src) return true;
  if (is_long(src) && pmr_is_equal(src->resource, dst->resource)) {
    release(dst);
    memcpy(&dst->u, &src->u, sizeof dst->u);
    src->u.s[0] = '\0';
    *tag_byte(src) = (unsigned char)INLINE_CAP;
    return true;
  }
  if (!pmr_string_copy_assign(dst, src)) return false;
  release(src);
  return true;
}

void pmr_string_swap(pmr_string *a, pmr_string *b) {
  PMR_IMPL_CHECK_NOT_NULL(a, "string", );
  PMR_IMPL_CHECK_NOT_NULL(b, "string", );
  pmr_string t = *a;
  *a = *b;
  *b = t;
}
