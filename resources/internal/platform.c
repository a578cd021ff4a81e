/* The platform layer (platform.h): every OS call of the library. */
/* madvise and MAP_ANONYMOUS are outside strict POSIX, mremap is Linux's. */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE
#endif
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE
#endif
#ifndef _DARWIN_C_SOURCE
#define _DARWIN_C_SOURCE
#endif
#include "resources/internal/platform.h"

#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "resources/internal/mem_check.h"
#include "resources/internal/page_geometry.h"

#if defined(__linux__)
#include <sys/syscall.h>
#endif
#if defined(__unix__) || defined(__APPLE__)
#define PMR_IMPL_OS_UNIX 1
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>
#if !defined(MAP_ANONYMOUS) && defined(MAP_ANON)
#define MAP_ANONYMOUS MAP_ANON
#endif
#if defined(MAP_ANONYMOUS)
#define PMR_IMPL_OS_MMAP 1
#endif
#endif

#if defined(PMR_IMPL_ASAN)
/* Mapped memory is no heap block: LeakSanitizer must scan it for pointers
 * to the heap (a pooled block may hold the only one). LeakSanitizer's
 * list of root regions has a lock of its own that fork() does not guard:
 * every call goes through root_lock, which the fork guard holds across a
 * fork, so a child never inherits it held by a thread it does not have. */
#include <sanitizer/lsan_interface.h>

#include "resources/internal/fork_guard.h"
#include "resources/internal/spin_lock.h"

static pmr_impl_spin root_lock;
static const pmr_impl_fork_client root_fork_client = {.spin = &root_lock};

static void root_change(void *p, size_t n, bool add) {
  pmr_impl_fork_register(&root_fork_client);
  pmr_impl_spin_lock(&root_lock);
  if (add)
    __lsan_register_root_region(p, n);
  else
    __lsan_unregister_root_region(p, n);
  pmr_impl_spin_unlock(&root_lock);
}
#define ROOT_ADD(p, n) root_change((p), (n), true)
#define ROOT_REMOVE(p, n) root_change((p), (n), false)
#else
#define ROOT_ADD(p, n) ((void)(p), (void)(n))
#define ROOT_REMOVE(p, n) ((void)(p), (void)(n))
#endif

static atomic_size_t page_size_cache;

size_t pmr_impl_os_page_size(void) {
  size_t s = atomic_load_explicit(&page_size_cache, memory_order_relaxed);
  if (s == 0) {
    s = PMR_IMPL_OS_PAGE_MIN;
#if defined(PMR_IMPL_OS_MMAP)
    int saved = errno;
    long v = sysconf(_SC_PAGESIZE);
    errno = saved;
    if (v > 0 && ((unsigned long)v & ((unsigned long)v - 1)) == 0)
      s = (size_t)v;
#endif
    atomic_store_explicit(&page_size_cache, s, memory_order_relaxed);
  }
  return s;
}

bool pmr_impl_os_direct(const pmr_mem_resource *upstream) {
#if defined(PMR_IMPL_OS_MMAP)
  return (pmr_resource_traits(upstream) & PMR_TRAIT_SYSTEM_MEMORY) != 0 &&
         pmr_impl_os_page_size() <= PMR_IMPL_PAGE_SIZE;
#else
  (void)upstream;
  return false;
#endif
}

_Static_assert(PMR_TRAIT_LARGE_MIN == PMR_IMPL_OS_LARGE_MIN,
               "the public bound is the one the pools map from");

bool pmr_impl_os_maps_large(const pmr_mem_resource *upstream) {
  return pmr_impl_os_direct(upstream) ||
         (pmr_resource_traits(upstream) & PMR_TRAIT_MAPS_LARGE) != 0;
}

bool pmr_impl_os_backed(const pmr_mem_resource *r, size_t bytes) {
  return bytes >= PMR_IMPL_OS_LARGE_MIN &&
         (pmr_resource_traits(r) & PMR_TRAIT_MAPS_LARGE) != 0;
}

static void *map_aligned(size_t bytes, size_t alignment, int flags) {
#if defined(PMR_IMPL_OS_MMAP)
  size_t ps = pmr_impl_os_page_size();
  if (alignment < ps) alignment = ps;
  if (alignment > SIZE_MAX / 4 || bytes > SIZE_MAX - 2 * alignment) {
    errno = ENOMEM;
    return NULL;
  }
  size_t len = pmr_impl_round_up(bytes, ps);
  size_t span = len + (alignment - ps); /* room to align within */
  int saved = errno;
  char *m = (char *)mmap(NULL, span, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);
  if (m == (char *)MAP_FAILED) {
    errno = ENOMEM;
    return NULL;
  }
  char *a = (char *)pmr_impl_align_up((uintptr_t)m, alignment);
  if (a != m) munmap(m, (size_t)(a - m));
  if (a + len != m + span) munmap(a + len, (size_t)(m + span - (a + len)));
  errno = saved;
  ROOT_ADD(a, len);
  return a;
#else
  (void)bytes;
  (void)alignment;
  (void)flags;
  errno = ENOMEM; /* unreachable: pmr_impl_os_direct is false */
  return NULL;
#endif
}

void *pmr_impl_os_map(size_t bytes, size_t alignment) {
  return map_aligned(bytes, alignment, 0);
}

void *pmr_impl_os_reserve(size_t bytes, size_t alignment) {
#if defined(MAP_NORESERVE)
  return map_aligned(bytes, alignment, MAP_NORESERVE);
#else
  return map_aligned(bytes, alignment, 0);
#endif
}

void pmr_impl_os_lsan_root(void *p, size_t bytes, bool add) {
#if defined(PMR_IMPL_OS_MMAP)
  size_t len = pmr_impl_round_up(bytes, pmr_impl_os_page_size());
  if (add) {
    ROOT_ADD(p, len);
  } else {
    ROOT_REMOVE(p, len);
  }
#else
  (void)p;
  (void)bytes;
  (void)add;
#endif
}

void pmr_impl_os_unmap(void *p, size_t bytes) {
#if defined(PMR_IMPL_OS_MMAP)
  size_t len = pmr_impl_round_up(bytes, pmr_impl_os_page_size());
  int saved = errno;
  ROOT_REMOVE(p, len);
  munmap(p, len);
  errno = saved;
#else
  (void)p;
  (void)bytes;
#endif
}

#if defined(PMR_IMPL_OS_MMAP) && defined(__linux__) && defined(MREMAP_FIXED)
/* In two steps, so that `to` is never left unmapped: a fixed move unmaps
 * its target before it looks at its source, and kernels before 6.17 refuse
 * a source that spans two mappings only then. So first a move where the
 * kernel chooses, one page longer (a resize, refused with nothing changed
 * when the source spans two mappings: then each half is moved alone), and
 * then the fixed move of a source that is one mapping. */
/* Pieces below this are given back rather than split further: each split
 * costs system calls (and, with other threads running, TLB shootdowns)
 * that cost more than faulting the pages in again. */
#define MOVE_SPLIT_MIN ((size_t)256 << 10)

static bool move_range(char *from, char *to, size_t len, size_t ps) {
  void *q = mremap(from, len, len + ps, MREMAP_MAYMOVE);
  if (q == MAP_FAILED) {
    if (errno != EFAULT || len < 2 * MOVE_SPLIT_MIN) {
      munmap(from, len);
      return false;
    }
    size_t half = (len / 2) & ~(ps - 1);
    bool first = move_range(from, to, half, ps);
    return move_range(from + half, to + half, len - half, ps) && first;
  }
  if (mremap(q, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, to) == to) {
    munmap((char *)q + len, ps);
    return true;
  }
  /* Refused after all (the kernel out of memory): `to` mapped again if the
   * refusal left it unmapped, the pages given back. */
  mmap(to, len, PROT_READ | PROT_WRITE,
       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  munmap(q, len + ps);
  return false;
}
#endif

bool pmr_impl_os_move(void *from, void *to, size_t len) {
#if defined(PMR_IMPL_OS_MMAP) && defined(__linux__) && defined(MREMAP_FIXED)
  int saved = errno;
  bool moved =
      move_range((char *)from, (char *)to, len, pmr_impl_os_page_size());
  errno = saved;
  return moved;
#else
  pmr_impl_os_unmap(from, len);
  (void)to;
  return false;
#endif
}

bool pmr_impl_os_protect(void *p, size_t bytes, bool access) {
#if defined(PMR_IMPL_OS_MMAP)
  size_t ps = pmr_impl_os_page_size();
  uintptr_t lo = pmr_impl_align_up((uintptr_t)p, ps);
  uintptr_t hi = ((uintptr_t)p + bytes) & ~(uintptr_t)(ps - 1);
  if (hi <= lo) return true;
  int saved = errno;
  bool ok = mprotect((void *)lo, hi - lo,
                     access ? PROT_READ | PROT_WRITE : PROT_NONE) == 0;
  errno = saved;
  return ok;
#else
  (void)p;
  (void)bytes;
  (void)access;
  return false;
#endif
}

void pmr_impl_os_decommit(void *p, size_t bytes) {
#if defined(PMR_IMPL_OS_MMAP)
  size_t ps = pmr_impl_os_page_size();
  uintptr_t lo = pmr_impl_align_up((uintptr_t)p, ps);
  uintptr_t hi = ((uintptr_t)p + bytes) & ~(uintptr_t)(ps - 1);
  if (hi <= lo) return;
  int saved = errno;
#if defined(__linux__)
  /* Frees the pages now (MADV_FREE would leave them counted resident until
   * memory runs short). */
  madvise((void *)lo, hi - lo, MADV_DONTNEED);
#elif defined(MADV_FREE)
  madvise((void *)lo, hi - lo, MADV_FREE);
#endif
  errno = saved;
#else
  (void)p;
  (void)bytes;
#endif
}

bool pmr_impl_os_random(void *buf, size_t n) {
#if defined(__linux__) && defined(SYS_getrandom)
  int saved = errno;
  long got = syscall(SYS_getrandom, buf, n, 1 /* GRND_NONBLOCK */);
  errno = saved;
  return got == (long)n;
#else
  (void)buf;
  (void)n;
  return false;
#endif
}

void *pmr_impl_os_map_records(size_t bytes) {
#if defined(PMR_IMPL_OS_MMAP)
  int saved = errno;
  void *p = mmap(NULL, pmr_impl_round_up(bytes, pmr_impl_os_page_size()),
                 PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  errno = saved;
  return p == MAP_FAILED ? NULL : p;
#else
  (void)bytes;
  return NULL;
#endif
}

void pmr_impl_os_unmap_records(void *p, size_t bytes) {
#if defined(PMR_IMPL_OS_MMAP)
  int saved = errno;
  munmap(p, pmr_impl_round_up(bytes, pmr_impl_os_page_size()));
  errno = saved;
#else
  (void)p;
  (void)bytes;
#endif
}

/* ---- the process ------------------------------------------------------- */

bool pmr_impl_os_atfork(void (*prepare)(void), void (*parent)(void),
                        void (*child)(void)) {
  return pthread_atfork(prepare, parent, child) == 0;
}

bool pmr_impl_os_exit_key_create(pmr_impl_os_exit_key *k,
                                 void (*at_exit)(void *)) {
  return pthread_key_create(k, at_exit) == 0;
}

bool pmr_impl_os_exit_key_set(pmr_impl_os_exit_key k, void *value) {
  return pthread_setspecific(k, value) == 0;
}

const char *pmr_impl_os_getenv(const char *name) { return getenv(name); }

size_t pmr_impl_os_peak_rss(void) {
#if defined(PMR_IMPL_OS_UNIX)
  struct rusage ru;
  int saved = errno;
  int got = getrusage(RUSAGE_SELF, &ru);
  errno = saved;
#if defined(__APPLE__)
  if (got == 0) return (size_t)ru.ru_maxrss; /* bytes */
#else
  if (got == 0) return (size_t)ru.ru_maxrss * 1024; /* KiB */
#endif
#endif
  return 0;
}

void pmr_impl_os_write(int fd, const void *buf, size_t len) {
#if defined(PMR_IMPL_OS_UNIX)
  int saved = errno;
  for (size_t off = 0; off < len;) {
    ssize_t w = write(fd, (const char *)buf + off, len - off);
    if (w <= 0) break;
    off += (size_t)w;
  }
  errno = saved;
#else
  (void)fd;
  (void)buf;
  (void)len;
#endif
}

void pmr_impl_os_yield(void) { sched_yield(); }

/* ---- the clock ---------------------------------------------------------- */

_Atomic uint64_t pmr_impl_clock_fixed;

void pmr_impl_clock_set_for_tests(uint64_t ns) {
  atomic_store_explicit(&pmr_impl_clock_fixed, ns, memory_order_relaxed);
}
