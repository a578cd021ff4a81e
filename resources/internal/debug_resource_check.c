/* pmr_debug_resource's checks: the layout of a guarded block (header and
 * guards), the checks of a block's guards and freed fill, the validation
 * of the pointers and sizes a caller gives back, and the misuse reports
 * (debug_resource_impl.h). Every function runs under the resource's mutex. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "resources/internal/debug_resource_impl.h"

#define HEADER_MAGIC 0x2167626472616d70ull /* "pmradbg!" */

/* Short names for the shared types (debug_resource_impl.h). */
typedef pmr_impl_debug_resource_state state;
/* One user pointer the resource knows (state: PMR_IMPL_DEBUG_RESOURCE_LIVE,
 * PMR_IMPL_DEBUG_RESOURCE_QUARANTINED, PMR_IMPL_DEBUG_RESOURCE_FREED). */
typedef pmr_impl_ptr_entry entry;

/* ---- block layout ----------------------------------------------------------
 */

static void header_bytes(
    const entry *e, unsigned char out[sizeof(pmr_impl_debug_resource_header)]) {
  pmr_impl_debug_resource_header h;
  memset(&h, 0, sizeof h);
  h.magic = HEADER_MAGIC;
  h.serial = e->serial;
  h.bytes = e->bytes;
  h.alignment = e->alignment;
  memcpy(out, &h, sizeof h);
}

void pmr_impl_debug_resource_write_front(const entry *e) {
  size_t pre = pmr_impl_debug_resource_prefix_of(e->alignment);
  unsigned char *base = e->p - pre;
  header_bytes(e, base);
  memset(base + sizeof(pmr_impl_debug_resource_header),
         PMR_IMPL_DEBUG_RESOURCE_GUARD_BYTE,
         pre - sizeof(pmr_impl_debug_resource_header));
}

/* ---- reports ---------------------------------------------------------------
 */

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 2, 3)))
#endif
void pmr_impl_debug_resource_report(state *s, const char *format, ...) {
  char message[448];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof message, format, args);
  va_end(args);
  ++s->c.misuse;
  if (s->name[0] != '\0')
    pmr_report_misuse("debug_resource \"%s\" %p: %s", s->name, s->self,
                      message);
  else
    pmr_report_misuse("debug_resource %p: %s", s->self, message);
}

/* Checks (and, once reported, restores) the header and guards of e and, in
 * quarantine, its freed fill. Returns the number of problems. */
size_t pmr_impl_debug_resource_check_block(state *s, const entry *e,
                                           const char *found) {
  size_t problems = 0, pre = pmr_impl_debug_resource_prefix_of(e->alignment),
         n = e->bytes;
  unsigned char *user = e->p, *base = user - pre;
  unsigned char hb[sizeof(pmr_impl_debug_resource_header)];
  header_bytes(e, hb);

  size_t changed = 0, nearest = 0;
  for (size_t k = pre; k-- > 0;) {
    unsigned char want =
        k < sizeof hb ? hb[k] : PMR_IMPL_DEBUG_RESOURCE_GUARD_BYTE;
    if (base[k] != want && changed++ == 0) nearest = pre - k;
  }
  if (changed != 0) {
    pmr_impl_debug_resource_report(
        s,
        "buffer underrun before block %p (#%" PRIu64
        ", %zu bytes, alignment %zu): %zu of the %zu bytes before it "
        "overwritten, the nearest at offset -%zu; found %s",
        (void *)user, e->serial, n, e->alignment, changed, pre, nearest, found);
    pmr_impl_debug_resource_write_front(e);
    ++problems;
  }

  changed = 0;
  size_t first = 0;
  for (size_t i = 0; i < PMR_IMPL_DEBUG_RESOURCE_GUARD; ++i)
    if (user[n + i] != PMR_IMPL_DEBUG_RESOURCE_GUARD_BYTE && changed++ == 0)
      first = i;
  if (changed != 0) {
    pmr_impl_debug_resource_report(
        s,
        "buffer overrun after block %p (#%" PRIu64
        ", %zu bytes, alignment %zu): %zu of the %zu guard bytes after it "
        "overwritten, the first at offset %zu; found %s",
        (void *)user, e->serial, n, e->alignment, changed,
        PMR_IMPL_DEBUG_RESOURCE_GUARD, n + first, found);
    memset(user + n, PMR_IMPL_DEBUG_RESOURCE_GUARD_BYTE,
           PMR_IMPL_DEBUG_RESOURCE_GUARD);
    ++problems;
  }

  if (e->state == PMR_IMPL_DEBUG_RESOURCE_QUARANTINED) {
    changed = 0;
    for (size_t i = 0; i < n; ++i)
      if (user[i] != PMR_IMPL_DEBUG_RESOURCE_FREED_BYTE && changed++ == 0)
        first = i;
    if (changed != 0) {
      pmr_impl_debug_resource_report(
          s,
          "use after free: block %p (#%" PRIu64
          ", %zu bytes, alignment %zu) was written after it was freed: "
          "%zu bytes changed, the first at offset %zu; found %s",
          (void *)user, e->serial, n, e->alignment, changed, first, found);
      memset(user, PMR_IMPL_DEBUG_RESOURCE_FREED_BYTE, n);
      ++problems;
    }
  }
  return problems;
}

/* The block p names if it is live with these sizes; otherwise reports the
 * misuse of operation `op` and returns NULL. */
entry *pmr_impl_debug_resource_validate(state *s, void *p, size_t bytes,
                                        size_t alignment, bool freeing) {
  const char *op = freeing ? "deallocate" : "try_resize";
  entry *e = pmr_impl_debug_resource_table_find(s, p);
  if (e == NULL) {
    /* Not a block start: say which block it points into, if any. The
     * search is slow, but only misuse pays for it. */
    char inside[160] = "";
    uintptr_t u = (uintptr_t)p;
    for (size_t i = 0; i < s->table.cap; ++i) {
      const entry *b = &s->table.slots[i];
      uintptr_t start = (uintptr_t)b->p;
      if (b->p != NULL && b->state != PMR_IMPL_DEBUG_RESOURCE_FREED &&
          u > start && u - start < b->bytes) {
        snprintf(
            inside, sizeof inside,
            "; it points %zu bytes into block %p (#%" PRIu64
            ", %zu bytes, alignment %zu%s)",
            (size_t)(u - start), (void *)b->p, b->serial, b->bytes,
            b->alignment,
            b->state == PMR_IMPL_DEBUG_RESOURCE_QUARANTINED ? ", freed" : "");
        break;
      }
    }
    pmr_impl_debug_resource_report(
        s,
        "%s(%p, %zu bytes, alignment %zu) of a pointer it never gave "
        "out%s; ignored",
        op, p, bytes, alignment, inside);
    return NULL;
  }
  if (e->state != PMR_IMPL_DEBUG_RESOURCE_LIVE) {
    pmr_impl_debug_resource_report(
        s,
        "%s %p (%s(%zu bytes, alignment %zu)): block #%" PRIu64
        " of %zu bytes, alignment %zu, was freed already (%s); ignored",
        freeing ? "double free of" : "try_resize of freed block", p, op, bytes,
        alignment, e->serial, e->bytes, e->alignment,
        e->state == PMR_IMPL_DEBUG_RESOURCE_QUARANTINED
            ? "it is in quarantine"
            : "and returned to upstream");
    return NULL;
  }
  if (e->bytes != bytes || e->alignment != alignment) {
    pmr_impl_debug_resource_report(
        s,
        "%p (#%" PRIu64
        ") was allocated with %zu bytes, alignment %zu, "
        "but %s %zu bytes, alignment %zu; ignored",
        p, e->serial, e->bytes, e->alignment,
        freeing ? "deallocated with" : "resized from", bytes, alignment);
    return NULL;
  }
  return e;
}
