/* The library's own records' memory (meta_mem.h). */
#include "resources/internal/meta_mem.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "resources/internal/fork_guard.h"
#include "resources/internal/platform.h"
#include "resources/internal/spin_lock.h"

/* A block's header: one cache line, so the payload starts a line of its
 * own. */
#define HEADER ((size_t)PMR_IMPL_CACHE_LINE)
#define MIN_SHIFT 6 /* blocks of 64 bytes ... */
#define CLASSES 13  /* ... to 256 KiB, header included */
_Static_assert(((size_t)1 << MIN_SHIFT) == HEADER,
               "the smallest block is one line");
#define CHUNK ((size_t)1 << 20)
/* A header's class for a block that is a mapping of its own. */
#define DIRECT ((unsigned)CLASSES)

typedef struct meta_header {
  size_t cls;   /* class, or DIRECT */
  size_t bytes; /* of a DIRECT block: the mapping's size */
} meta_header;

typedef struct free_block {
  struct free_block *next;
} free_block;

static atomic_bool os_mode;
static atomic_bool fork_registered;
static pmr_impl_spin lock;
static free_block *free_lists[CLASSES]; /* lock */
static char *bump, *bump_end;           /* lock: the current chunk */
static size_t mapped;                   /* lock */

static const pmr_impl_fork_client fork_client = {.spin = &lock};

void pmr_impl_meta_use_os(void) {
  atomic_store_explicit(&os_mode, true, memory_order_release);
}

bool pmr_impl_meta_uses_os(void) {
  return atomic_load_explicit(&os_mode, memory_order_acquire);
}

static void *os_alloc(size_t bytes) {
  if (bytes > SIZE_MAX / 2 - HEADER - CHUNK) return NULL;
  size_t total = bytes + HEADER;
  unsigned cls = 0;
  while (cls < CLASSES && ((size_t)1 << (MIN_SHIFT + cls)) < total) ++cls;
  meta_header *h;
  if (cls == DIRECT) {
    size_t len = pmr_impl_round_up(total, pmr_impl_os_page_size());
    if ((h = (meta_header *)pmr_impl_os_map_records(len)) == NULL) return NULL;
    h->cls = DIRECT;
    h->bytes = len;
    pmr_impl_spin_lock(&lock);
    mapped += len;
    pmr_impl_spin_unlock(&lock);
    return (char *)h + HEADER; /* a fresh mapping reads as zeros */
  }
  size_t size = (size_t)1 << (MIN_SHIFT + cls);
  pmr_impl_spin_lock(&lock);
  free_block *f = free_lists[cls];
  if (f != NULL) {
    free_lists[cls] = f->next;
    pmr_impl_spin_unlock(&lock);
    memset(f, 0, size);
    h = (meta_header *)(void *)f;
  } else {
    if ((size_t)(bump_end - bump) < size) {
      /* The rest of the chunk is dropped: records are few and long-lived. */
      pmr_impl_spin_unlock(&lock);
      char *chunk = (char *)pmr_impl_os_map_records(CHUNK);
      if (chunk == NULL) return NULL;
      pmr_impl_spin_lock(&lock);
      bump = chunk;
      bump_end = chunk + CHUNK;
      mapped += CHUNK;
    }
    h = (meta_header *)(void *)bump;
    bump += size;
    pmr_impl_spin_unlock(&lock); /* never used: zeros */
  }
  h->cls = cls;
  return (char *)h + HEADER;
}

static void os_free(void *p) {
  meta_header *h = (meta_header *)(void *)((char *)p - HEADER);
  if (h->cls == DIRECT) {
    size_t len = h->bytes;
    pmr_impl_spin_lock(&lock);
    mapped -= len;
    pmr_impl_spin_unlock(&lock);
    pmr_impl_os_unmap_records(h, len);
    return;
  }
  free_block *f = (free_block *)(void *)h;
  pmr_impl_spin_lock(&lock);
  f->next = free_lists[h->cls];
  free_lists[h->cls] = f;
  pmr_impl_spin_unlock(&lock);
}

void *pmr_impl_meta_alloc(size_t bytes) {
  int saved = errno;
  void *p;
  if (pmr_impl_meta_uses_os()) {
    if (!atomic_load_explicit(&fork_registered, memory_order_acquire) &&
        pmr_impl_fork_register_first(&fork_client))
      atomic_store_explicit(&fork_registered, true, memory_order_release);
    p = os_alloc(bytes);
  } else if (bytes >= CHUNK / 4) {
    p = calloc(1, bytes); /* large and zeroed: calloc can leave it untouched */
  } else {
    size_t size = pmr_impl_round_up(bytes, HEADER);
    p = aligned_alloc(HEADER, size != 0 ? size : HEADER);
    if (p != NULL) memset(p, 0, size);
  }
  errno = saved;
  return p;
}

void pmr_impl_meta_free(void *p) {
  if (p == NULL) return;
  int saved = errno;
  if (pmr_impl_meta_uses_os())
    os_free(p);
  else
    free(p);
  errno = saved;
}

size_t pmr_impl_meta_mapped_bytes(void) {
  pmr_impl_spin_lock(&lock);
  size_t n = mapped;
  pmr_impl_spin_unlock(&lock);
  return n;
}
