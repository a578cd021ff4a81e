/* The drop-in engine's upstream (malloc/internal/dropin.h): memory from the
 * OS, with the freed blocks below the engine's mapping threshold kept for
 * reuse.
 *
 * The engine maps its segments and its blocks of 128 KiB and more itself;
 * this upstream serves the oversize blocks between them (8 KiB to 128 KiB),
 * each a mapping of its own. A program that frees and takes such blocks at
 * a rate (a server's buffers) would otherwise map and unmap one per call;
 * here a freed one waits, up to KEEP_BYTES in all, for a request of the
 * same number of OS pages (one list per page count). */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>

#include "malloc/internal/dropin.h"
#include "resources/internal/fork_guard.h"
#include "resources/internal/platform.h"
#include "resources/internal/spin_lock.h"

#define KEEP_BYTES ((size_t)8 << 20)
/* Page counts kept: up to the engine's mapping threshold, in the smallest
 * OS pages (32 of 4 KiB). */
#define KEEP_PAGES ((unsigned)(PMR_IMPL_OS_LARGE_MIN / PMR_IMPL_OS_PAGE_MIN))

typedef struct kept_block {
  struct kept_block *next;
} kept_block;

static pmr_impl_spin lock;
static kept_block *lists[KEEP_PAGES + 1]; /* lock; by page count */
static size_t kept;                       /* lock: bytes in the lists */
static atomic_bool fork_registered;

static const pmr_impl_fork_client fork_client = {.spin = &lock};

/* The length of a block of `bytes`, and its list (0: not kept). */
static size_t length_of(size_t bytes, size_t *pages) {
  size_t ps = pmr_impl_os_page_size();
  size_t len = pmr_impl_round_up(bytes, ps);
  *pages = len / ps <= KEEP_PAGES ? len / ps : 0;
  return len;
}

static void *os_allocate(pmr_mem_resource *self, size_t bytes,
                         size_t alignment) {
  (void)self;
  if (bytes > SIZE_MAX / 2) {
    errno = ENOMEM;
    return NULL;
  }
  size_t pages;
  size_t len = length_of(bytes, &pages);
  if (pages != 0 && alignment <= pmr_impl_os_page_size()) {
    pmr_impl_spin_lock(&lock);
    kept_block *b = lists[pages];
    if (b != NULL) {
      lists[pages] = b->next;
      kept -= len;
    }
    pmr_impl_spin_unlock(&lock);
    if (b != NULL) return b;
  }
  return pmr_impl_os_map(len, alignment);
}

static void os_deallocate(pmr_mem_resource *self, void *p, size_t bytes,
                          size_t alignment) {
  (void)self;
  size_t pages;
  size_t len = length_of(bytes, &pages);
  if (pages != 0 && alignment <= pmr_impl_os_page_size()) {
    if (!atomic_load_explicit(&fork_registered, memory_order_acquire) &&
        pmr_impl_fork_register(&fork_client))
      atomic_store_explicit(&fork_registered, true, memory_order_release);
    pmr_impl_spin_lock(&lock);
    bool keep = kept + len <= KEEP_BYTES;
    if (keep) {
      kept_block *b = (kept_block *)p;
      b->next = lists[pages];
      lists[pages] = b;
      kept += len;
    }
    pmr_impl_spin_unlock(&lock);
    if (keep) return;
  }
  pmr_impl_os_unmap(p, len);
}

static bool os_is_equal(const pmr_mem_resource *self,
                        const pmr_mem_resource *other) {
  return self == other;
}

static unsigned os_traits(const pmr_mem_resource *self) {
  (void)self;
  return PMR_TRAIT_THREAD_SAFE | PMR_TRAIT_SYSTEM_MEMORY;
}

static const pmr_mem_resource_ops os_ops = {
    .allocate = os_allocate,
    .deallocate = os_deallocate,
    .is_equal = os_is_equal,
    .traits = os_traits,
};

pmr_mem_resource pmr_impl_dropin_os = {&os_ops};

size_t pmr_impl_dropin_os_trim(void) {
  size_t given = 0;
  for (unsigned pages = 1; pages <= KEEP_PAGES; ++pages) {
    size_t len = pages * pmr_impl_os_page_size();
    pmr_impl_spin_lock(&lock);
    kept_block *b = lists[pages];
    lists[pages] = NULL;
    for (kept_block *k = b; k != NULL; k = k->next) kept -= len;
    pmr_impl_spin_unlock(&lock);
    while (b != NULL) {
      kept_block *next = b->next;
      pmr_impl_os_unmap(b, len);
      given += len;
      b = next;
    }
  }
  return given;
}

size_t pmr_impl_dropin_os_kept(void) {
  pmr_impl_spin_lock(&lock);
  size_t n = kept;
  pmr_impl_spin_unlock(&lock);
  return n;
}
