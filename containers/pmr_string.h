/* pmr-c: pmr_string, a byte string over any pmr_mem_resource
 * (std::pmr::string for C).
 *
 * - Always NUL-terminated: c_str() can be handed to any C function.
 * - Binary-safe: functions taking an explicit length accept embedded NULs
 *   (the *_cstr variants stop at the first NUL of their argument).
 * - Short strings live inline, with no allocation: up to
 *   PMR_STRING_INLINE_CAPACITY characters (23 on 64-bit targets, in a 32-byte
 *   struct that also holds the resource; std::pmr::string holds 15 in 40).
 *   Longer ones live in a block of capacity + 1 bytes, alignment 1, from the
 *   resource given at init (NULL = the default resource at that moment), kept
 *   for the string's whole life.
 * - Growth factor 2: when an edit needs room, the capacity becomes
 *   max(2 * capacity, needed length). When the resource can grow the block in
 *   place (pmr_try_resize), the string grows there without copying.
 *
 * Errors: a function that needs memory it cannot get, or a length beyond
 * pmr_string_max_size(), or a position beyond length(), returns false and
 * leaves the string exactly as it was (contents, length, capacity). No
 * function aborts. Arguments of every function may point into the string
 * itself (e.g. append s to itself), except the arguments of the format
 * functions.
 *
 * Pointers from c_str()/data() stay valid until the next edit that grows the
 * capacity, shrink_to_fit, an assignment, swap, move or destroy. Any edit
 * changes the bytes they show.
 *
 * Relocation: a pmr_string holds no pointer into itself, so its bytes may be
 * moved to another address with memcpy (a C array or container growing,
 * realloc); the copy is then the string, and the old bytes must not be used
 * as a string again (not destroyed: that would free the block twice).
 *
 * Thread safety: none; a string is used by one thread at a time.
 *
 * NULL (the library's rule, pmr_mem_resource.h): NULL bytes with a length
 * of 0 are an empty input (and a NULL C string counts as ""); NULL bytes
 * with a length above 0 are a caller error, which debug builds
 * (-DPMR_DEBUG) report through pmr_report_misuse: find/rfind then return
 * PMR_STRING_NPOS and compare_bytes compares with the empty string, the
 * edits return false. A NULL string (given to any function, the inline ones
 * included) is a caller error too: debug builds report it and the call
 * changes nothing and returns false, NULL, 0, PMR_STRING_NPOS (searches)
 * or, for empty, true.
 */
#ifndef PMR_CONTAINERS_STRING_H
#define PMR_CONTAINERS_STRING_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../mem_resource/pmr_mem_resource.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Characters stored without allocation: 23 on 64-bit targets. */
#define PMR_STRING_INLINE_CAPACITY (sizeof(char *) + sizeof(size_t) + 7)

/* "Not found" for find/rfind, and "to the end" for lengths. */
#define PMR_STRING_NPOS ((size_t)-1)

/* The fields are private: use the functions. Short form: the characters
 * inline, the last inline byte holding INLINE_CAPACITY - length (so it is the
 * terminator when the string is full). Long form: that byte is 0xFF. */
typedef struct pmr_string {
  union {
    struct {
      char *ptr;
      size_t len;
      uint32_t cap_lo;
      uint16_t cap_hi;
      unsigned char unused[2];
    } l;
    char s[sizeof(char *) + sizeof(size_t) + 8];
  } u;
  pmr_mem_resource *resource;
} pmr_string;

/* Not for direct use: true when the characters are in an allocated block. */
static inline bool pmr_impl_string_is_long(const pmr_string *s) {
  return (unsigned char)s->u.s[PMR_STRING_INLINE_CAPACITY] == 0xFF;
}

/* Initialises an empty string over r (NULL = the default resource). Never
 * allocates, never fails. */
void pmr_string_init(pmr_string *s, pmr_mem_resource *r);

/* Initialises s with the n bytes at p (may contain NULs) / the C string cstr
 * (NULL counts as ""). False on failure: s is then a valid empty string. */
bool pmr_string_init_bytes(pmr_string *s, const void *p, size_t n,
                           pmr_mem_resource *r);
bool pmr_string_init_cstr(pmr_string *s, const char *cstr, pmr_mem_resource *r);

/* Gives any block back. s is then empty (same resource) and may be reused or
 * destroyed again. */
void pmr_string_destroy(pmr_string *s);

/* The resource given at init. */
pmr_mem_resource *pmr_string_resource(const pmr_string *s);

/* The longest length a string may have. */
size_t pmr_string_max_size(void);

/* The characters, NUL-terminated (data()[length()] == '\0'). The pointer from
 * data() may be used to modify the length() characters in place. */
static inline const char *pmr_string_c_str(const pmr_string *s) {
  PMR_IMPL_CHECK_NOT_NULL(s, "string", NULL);
  return pmr_impl_string_is_long(s) ? s->u.l.ptr : s->u.s;
}
static inline char *pmr_string_data(pmr_string *s) {
  PMR_IMPL_CHECK_NOT_NULL(s, "string", NULL);
  return pmr_impl_string_is_long(s) ? s->u.l.ptr : s->u.s;
}
static inline size_t pmr_string_length(const pmr_string *s) {
  PMR_IMPL_CHECK_NOT_NULL(s, "string", 0);
  return pmr_impl_string_is_long(s)
             ? s->u.l.len
             : PMR_STRING_INLINE_CAPACITY -
                   (unsigned char)s->u.s[PMR_STRING_INLINE_CAPACITY];
}
static inline bool pmr_string_empty(const pmr_string *s) {
  PMR_IMPL_CHECK_NOT_NULL(s, "string", true);
  return pmr_string_length(s) == 0;
}
/* Characters that fit without reallocating (not counting the terminator). */
static inline size_t pmr_string_capacity(const pmr_string *s) {
  PMR_IMPL_CHECK_NOT_NULL(s, "string", 0);
  return pmr_impl_string_is_long(s)
             ? (size_t)((uint64_t)s->u.l.cap_hi << 32 | s->u.l.cap_lo)
             : PMR_STRING_INLINE_CAPACITY;
}

/* Makes capacity >= n. False on failure, string unchanged. */
bool pmr_string_reserve(pmr_string *s, size_t n);

/* Makes capacity as small as the length allows (inline when it fits, which
 * gives the block back). Tries in-place resize first. False when a smaller
 * block could not be had (string unchanged). */
bool pmr_string_shrink_to_fit(pmr_string *s);

/* Length 0; keeps the capacity. */
void pmr_string_clear(pmr_string *s);

/* Sets the length to n, padding with `fill`. False on failure. */
bool pmr_string_resize(pmr_string *s, size_t n, char fill);

/* Replaces the contents with the n bytes at p / with cstr / with src's
 * contents (copy-assign: keeps s's resource). False on failure, unchanged. */
bool pmr_string_assign_bytes(pmr_string *s, const void *p, size_t n);
bool pmr_string_assign_cstr(pmr_string *s, const char *cstr);
bool pmr_string_copy_assign(pmr_string *s, const pmr_string *src);

/* Appends a character / n bytes / a C string / another string. False on
 * failure, string unchanged. */
static inline bool pmr_string_push_back(pmr_string *s, char c);
bool pmr_string_append_bytes(pmr_string *s, const void *p, size_t n);
bool pmr_string_append_cstr(pmr_string *s, const char *cstr);
bool pmr_string_append_string(pmr_string *s, const pmr_string *other);

/* Appends printf-style output. No argument may point into s. False on
 * failure (out of memory, or an encoding error in vsnprintf): unchanged. */
bool pmr_string_append_format(pmr_string *s, const char *format, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
bool pmr_string_append_vformat(pmr_string *s, const char *format, va_list ap)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 0)))
#endif
    ;

/* Removes the last character. False when empty. */
bool pmr_string_pop_back(pmr_string *s);

/* Inserts the n bytes at p / cstr before position pos (pos == length
 * appends). False when pos > length or on failure, unchanged. */
bool pmr_string_insert_bytes(pmr_string *s, size_t pos, const void *p,
                             size_t n);
bool pmr_string_insert_cstr(pmr_string *s, size_t pos, const char *cstr);

/* Removes up to n characters from pos (n = PMR_STRING_NPOS: to the end).
 * False when pos > length. Never allocates. */
bool pmr_string_erase(pmr_string *s, size_t pos, size_t n);

/* Replaces up to n characters at pos (clamped to the end, as erase) with the
 * m bytes at p. False when pos > length or on failure, unchanged. */
bool pmr_string_replace(pmr_string *s, size_t pos, size_t n, const void *p,
                        size_t m);

/* First position >= pos where the needle (n bytes / a C string / a char)
 * occurs, or PMR_STRING_NPOS. An empty needle is found at pos when
 * pos <= length. */
size_t pmr_string_find(const pmr_string *s, const void *needle, size_t n,
                       size_t pos);
size_t pmr_string_find_cstr(const pmr_string *s, const char *needle,
                            size_t pos);
size_t pmr_string_find_char(const pmr_string *s, char c, size_t pos);

/* Last position <= pos (PMR_STRING_NPOS: anywhere) where the needle occurs,
 * or PMR_STRING_NPOS. An empty needle is found at min(pos, length). */
size_t pmr_string_rfind(const pmr_string *s, const void *needle, size_t n,
                        size_t pos);
size_t pmr_string_rfind_cstr(const pmr_string *s, const char *needle,
                             size_t pos);
size_t pmr_string_rfind_char(const pmr_string *s, char c, size_t pos);

/* Lexicographic comparison of the bytes as unsigned char, a shorter prefix
 * first: <0, 0 or >0 (-1, 0, 1), like std::string::compare. */
int pmr_string_compare(const pmr_string *a, const pmr_string *b);
int pmr_string_compare_bytes(const pmr_string *a, const void *p, size_t n);
int pmr_string_compare_cstr(const pmr_string *a, const char *cstr);
/* Same length and bytes. */
bool pmr_string_equal(const pmr_string *a, const pmr_string *b);

/* Initialises dst (not initialised before) over r (NULL = default) with up
 * to n characters of src from pos. False when pos > src's length or on
 * failure: dst is then a valid empty string over r. dst must not be src. */
bool pmr_string_substr(pmr_string *dst, const pmr_string *src, size_t pos,
                       size_t n, pmr_mem_resource *r);

/* Initialises dst (not initialised before) as a copy of src over r (NULL =
 * default). False on failure: dst is then a valid empty string over r. */
bool pmr_string_init_copy(pmr_string *dst, const pmr_string *src,
                          pmr_mem_resource *r);

/* Initialises dst (not initialised before) with src's contents and resource
 * in O(1), no allocation; src becomes empty (same resource). */
void pmr_string_init_move(pmr_string *dst, pmr_string *src);

/* Moves src's contents into dst (initialised), keeping dst's resource. When
 * pmr_is_equal(src's resource, dst's resource), dst takes src's block (no
 * allocation); otherwise the contents are copied into dst's resource. On
 * success src is empty. False, both unchanged, on failure. */
bool pmr_string_move_assign(pmr_string *dst, pmr_string *src);

/* Swaps contents, capacities and resources in O(1); no allocation. */
void pmr_string_swap(pmr_string *a, pmr_string *b);

/* A 64-bit hash of the contents: pmr_hash_bytes of its characters (keyed by
 * a per-process secret: stable within a process, different in each). Equal
 * strings hash equally whatever their resource or form. pmr_hashmap keys
 * each map with its own seed instead. Thread-safe. */
uint64_t pmr_string_hash(const pmr_string *s);

/* ---- Private: not for direct use. */

/* Makes s a read-only view of the n bytes at p (p[n] == '\0'), in the long
 * form, as if allocated from r: what pmr_hashmap shows of a string key it
 * stores as plain bytes. Only the functions that read may be given it; it
 * owns nothing (never edit, move or destroy it). */
static inline void pmr_impl_string_view(pmr_string *s, const char *p, size_t n,
                                        pmr_mem_resource *r) {
  memcpy(&s->u.l.ptr, &p, sizeof p); /* read-only: the const is the caller's */
  s->u.l.len = n;
  s->u.l.cap_lo = (uint32_t)n;
  s->u.l.cap_hi = (uint16_t)((uint64_t)n >> 32);
  s->u.l.unused[0] = 0;
  s->u.l.unused[1] = 0xFF; /* the long form's tag */
  s->resource = r;
}

/* The inline push_back. */

/* The growth path of pmr_string_push_back (out of line, so that the inline
 * part stays a few instructions). */
bool pmr_impl_string_push_back_grow(pmr_string *s, char c);

/* Inline while there is room: the character and the new terminator are
 * stored and the length bumped in place (inline form: the tag byte,
 * INLINE_CAPACITY - length, drops by one; it is the terminator when the
 * string becomes full). */
static inline bool pmr_string_push_back(pmr_string *s, char c) {
  PMR_IMPL_CHECK_NOT_NULL(s, "string", false);
  unsigned char *tag = (unsigned char *)s->u.s + PMR_STRING_INLINE_CAPACITY;
  const unsigned char t = *tag;
  if (t == 0xFF) {
    const size_t len = s->u.l.len;
    if (PMR_LIKELY(len < pmr_string_capacity(s))) {
      char *p = s->u.l.ptr;
      p[len] = c;
      p[len + 1] = '\0';
      s->u.l.len = len + 1;
      return true;
    }
  } else if (PMR_LIKELY(t != 0)) {
    const size_t len = PMR_STRING_INLINE_CAPACITY - t;
    s->u.s[len] = c;
    s->u.s[len + 1] = '\0'; /* the tag itself when this fills the string */
    *tag = (unsigned char)(t - 1);
    return true;
  }
  return pmr_impl_string_push_back_grow(s, c);
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PMR_CONTAINERS_STRING_H */
