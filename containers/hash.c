/* The per-process secret of the containers' hash (see hash.h).
 *
 * Drawn at first use, from the first source that works:
 *   1. getrandom(2) (Linux, glibc >= 2.25), non-blocking; arc4random_buf on
 *      the BSDs and Apple;
 *   2. /dev/urandom;
 *   3. a fallback for systems with neither (e.g. a chroot without /dev): a mix
 *      of the clocks, the process id and addresses of a static, a stack and a
 *      code object (randomized by ASLR). Unpredictable in practice, but not
 *      cryptographic randomness.
 * Concurrent first uses may each draw a value; one compare-and-swap keeps the
 * first stored and every caller returns that one. errno is left as it was.
 * A child of fork() inherits its parent's secret (like its memory).
 */
/* POSIX 2008 (clock_gettime, posix_memalign, O_CLOEXEC) for builds that ask
 * for strict ISO C (-std=c11) and define nothing. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "containers/internal/hash.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__linux__) && defined(__has_include)
#if __has_include(<sys/random.h>)
#include <sys/random.h>
#define HAVE_GETRANDOM 1
#endif
#endif
#if defined(__APPLE__) || defined(__FreeBSD__) || defined(__OpenBSD__) || \
    defined(__NetBSD__)
#define HAVE_ARC4RANDOM 1
#endif

static _Atomic uint64_t process_seed;
static _Atomic uint64_t table_counter;

static bool read_all(int fd, unsigned char *p, size_t n) {
  while (n != 0) {
    ssize_t got = read(fd, p, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got;
    n -= (size_t)got;
  }
  return true;
}

static bool os_random(uint64_t *out) {
  unsigned char buf[sizeof *out];
#if defined(HAVE_GETRANDOM)
  for (;;) {
    ssize_t got = getrandom(buf, sizeof buf, GRND_NONBLOCK);
    if (got == (ssize_t)sizeof buf) {
      memcpy(out, buf, sizeof buf);
      return true;
    }
    if (got < 0 && errno == EINTR) continue;
    break; /* ENOSYS, EAGAIN (pool not ready), ...: try the device */
  }
#elif defined(HAVE_ARC4RANDOM)
  arc4random_buf(buf, sizeof buf);
  memcpy(out, buf, sizeof buf);
  return true;
#endif
  int fd;
  do {
    fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return false;
  bool ok = read_all(fd, buf, sizeof buf);
  close(fd);
  if (ok) memcpy(out, buf, sizeof buf);
  return ok;
}

static uint64_t fallback_random(void) {
  static const char anchor = 0;
  volatile char stack = 0;
  struct timespec rt = {0, 0}, mono = {0, 0};
  clock_gettime(CLOCK_REALTIME, &rt);
  clock_gettime(CLOCK_MONOTONIC, &mono);
  uint64_t parts[] = {(uint64_t)rt.tv_sec,        (uint64_t)rt.tv_nsec,
                      (uint64_t)mono.tv_sec,      (uint64_t)mono.tv_nsec,
                      (uint64_t)getpid(),         (uint64_t)(uintptr_t)&anchor,
                      (uint64_t)(uintptr_t)&stack};
  uint64_t h = 0;
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; ++i)
    h = pmr_impl_hash_avalanche(h ^ parts[i]);
  return h;
}

uint64_t pmr_impl_hash_process_seed(void) {
  uint64_t v = atomic_load_explicit(&process_seed, memory_order_acquire);
  if (v != 0) return v;
  const int saved_errno = errno;
  uint64_t drawn;
  if (!os_random(&drawn)) drawn = fallback_random();
  if (drawn == 0) drawn = PMR_IMPL_HASH_K0;
  uint64_t expected = 0;
  if (!atomic_compare_exchange_strong_explicit(&process_seed, &expected, drawn,
                                               memory_order_acq_rel,
                                               memory_order_acquire))
    drawn = expected; /* another thread stored first */
  errno = saved_errno;
  return drawn;
}

uint64_t pmr_impl_hash_table_seed(void) {
  uint64_t n =
      atomic_fetch_add_explicit(&table_counter, 1, memory_order_relaxed);
  return pmr_impl_hash_avalanche(pmr_impl_hash_process_seed() ^
                                 (n * PMR_IMPL_HASH_K0));
}
