/* The misuse suite: one memory bug of a program per run (argv: CASE N),
 * then the heap is used again and checked, so that the test
 * (misuse_suite_test.cc) can tell, under glibc's malloc and under pmr-c's
 * drop-in, what became of the bug:
 *   stopped    the allocator stopped the process (SIGABRT), with a message;
 *   unnoticed  exit 0: the heap still hands out distinct blocks and no
 *              block the program did not write to changed;
 *   corrupt    exit 3: a block handed out twice, or overlapping a live one,
 *              or one the program did not touch changed;
 *   crashed    any other end (a signal such as SIGSEGV).
 * N is the size of the blocks misused: 8 B, 4 KiB and 256 KiB in the test
 * (a small class, a page-sized one, a block of its own). The program never
 * names pmr-c: it is run as it is, or with LD_PRELOAD.
 *
 * Cases:
 *   double          free(p); free(p)
 *   double_delayed  free(p); other sizes come and go; free(p)
 *   double_between  free(p); free(q); free(p)
 *   double_remote   free(p); free(p) again on another thread
 *   realloc_freed   free(p); realloc(p, 2 N)
 *   interior        free(p + 16) (p + 8 when N < 32)
 *   unaligned       free(p + 1)
 *   stack           free() of a local variable
 *   global          free() of a static variable
 *   foreign_map     free() of a pointer into a page mapped by mmap
 *   overflow_1      p[N] changed (inverted), then p and its neighbours freed
 *   overflow_32     p[N .. N + 31] written, then the same
 *   underflow_1     p[-1] changed (inverted), then the same
 *   underflow_32    p[-32 .. -1] written, then the same
 *   write_freed     free(p); its first 16 bytes written; blocks of N taken
 *   write_freed_32  free(p); its first 32 bytes written with a pointer-like
 *                   value; blocks of N taken
 *   zero_write      q = malloc(0); q[0 .. min(N, 32) - 1] written; freed */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* FRESH: blocks of N taken after the bug, as a program going on would take
 * them: enough (FRESH_MAX for N of 8 bytes, 4 KiB of them and 16 more) for
 * an allocator to go through its lists of that size, where a double free
 * not caught at the free may be caught before a block is handed out twice
 * (pmr-c's default build: page_heap.h, "misuse"). */
enum { LIVE = 24, FRESH_MIN = 32, FRESH_MAX = 4096 / 8 + 16 };

/* p, hidden from the compiler (which would warn of, or remove, the bugs). */
__attribute__((noinline)) static void *opaque(void *p) {
  __asm__ volatile("" : "+r"(p));
  return p;
}

static void fill(unsigned char *b, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; ++i) b[i] = (unsigned char)(seed * 31u + i * 7u);
}

/* Whether b[from .. n - from - 1] hold what fill(b, n, seed) wrote. */
static int filled(const unsigned char *b, size_t n, unsigned seed,
                  size_t from) {
  for (size_t i = from; i + from < n; ++i)
    if (b[i] != (unsigned char)(seed * 31u + i * 7u)) return 0;
  return 1;
}

static void corrupt(const char *what) {
  printf("CORRUPT %s\n", what);
  fflush(stdout);
  _exit(3);
}

static void *remote_free(void *p) {
  free(opaque(p));
  return NULL;
}

static int static_block[64];

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: misuse_suite CASE N\n");
    return 2;
  }
  const char *c = argv[1];
  size_t n = strtoul(argv[2], NULL, 10);
  /* Live blocks around the one misused; the bugs touch only p, q, their
   * neighbours' first and last 32 bytes (the overflows) and the zero block,
   * so the middle of every live block must keep its contents. */
  unsigned char *live[LIVE];
  for (unsigned i = 0; i < LIVE; ++i) {
    live[i] = malloc(n);
    if (live[i] == NULL) corrupt("malloc failed");
    fill(live[i], n, i);
  }
  unsigned char *p = live[LIVE / 2], *q = live[LIVE / 2 + 1];
  live[LIVE / 2] = live[LIVE / 2 + 1] = NULL; /* p and q: the case's own */
  int p_freed = 0, q_freed = 0;
  if (!strcmp(c, "double")) {
    free(p);
    free(opaque(p));
    p_freed = 1;
  } else if (!strcmp(c, "double_delayed")) {
    free(p);
    p_freed = 1;
    static const size_t others[] = {24, 200, 700, 5000, 40000};
    for (unsigned k = 0; k < sizeof others / sizeof others[0]; ++k)
      for (int i = 0; i < 40; ++i) free(malloc(others[k]));
    free(opaque(p));
  } else if (!strcmp(c, "double_between")) {
    free(p);
    free(q);
    free(opaque(p));
    p_freed = q_freed = 1;
  } else if (!strcmp(c, "double_remote")) {
    free(p);
    p_freed = 1;
    pthread_t t;
    if (pthread_create(&t, NULL, remote_free, p) != 0) corrupt("thread");
    pthread_join(t, NULL);
  } else if (!strcmp(c, "realloc_freed")) {
    free(p);
    p_freed = 1;
    void *r = realloc(opaque(p), 2 * n);
    free(r);
  } else if (!strcmp(c, "interior")) {
    free(opaque(p + (n < 32 ? 8 : 16)));
  } else if (!strcmp(c, "unaligned")) {
    free(opaque(p + 1));
  } else if (!strcmp(c, "stack")) {
    long local[8] = {0};
    free(opaque(local));
    __asm__ volatile("" ::"r"(local) : "memory");
  } else if (!strcmp(c, "global")) {
    free(opaque(static_block + 4));
  } else if (!strcmp(c, "foreign_map")) {
    char *m = mmap(NULL, 65536, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) corrupt("mmap");
    free(opaque(m + 64));
  } else if (!strncmp(c, "overflow_", 9) || !strncmp(c, "underflow_", 10)) {
    size_t len = strtoul(strchr(c, '_') + 1, NULL, 10);
    unsigned char *at = opaque(c[0] == 'o' ? p + n : p - len);
    /* One byte: changed for sure (inverted), so that no run depends on
     * the byte that lay there (an allocator's check word, random). */
    if (len == 1)
      at[0] = (unsigned char)~at[0];
    else
      memset(at, 0x41, len);
    free(p);
    free(q);
    p_freed = q_freed = 1;
  } else if (!strcmp(c, "write_freed") || !strcmp(c, "write_freed_32")) {
    free(p);
    p_freed = 1;
    size_t len = c[11] == '_' ? 32 : 16;
    if (len > n) len = n;
    if (len == 32) {
      uintptr_t fake = (uintptr_t)static_block; /* a plausible address */
      for (size_t i = 0; i + sizeof fake <= len; i += sizeof fake)
        memcpy((unsigned char *)opaque(p) + i, &fake, sizeof fake);
    } else {
      memset(opaque(p), 0x41, len);
    }
  } else if (!strcmp(c, "zero_write")) {
    unsigned char *z = malloc(0);
    if (z == NULL) corrupt("malloc(0)");
    memset(opaque(z), 0x41, n < 32 ? n : 32);
    free(z);
  } else {
    fprintf(stderr, "unknown case %s\n", c);
    return 2;
  }
  /* Still running: the heap must hand out distinct blocks, none overlapping
   * a live one, and the live blocks keep their middles. */
  unsigned char *fresh[FRESH_MAX];
  const unsigned FRESH = n < 4096 ? (unsigned)(4096 / n) + 16 : FRESH_MIN;
  for (unsigned i = 0; i < FRESH; ++i) {
    fresh[i] = malloc(n);
    if (fresh[i] == NULL) corrupt("malloc failed");
    for (unsigned j = 0; j < i; ++j)
      if (fresh[j] == fresh[i]) corrupt("a block handed out twice");
    for (unsigned j = 0; j < LIVE; ++j)
      if (live[j] != NULL && fresh[i] + n > live[j] && live[j] + n > fresh[i])
        corrupt("a block overlapping a live one");
    if (!p_freed && fresh[i] + n > p && p + n > fresh[i])
      corrupt("a block overlapping p, still live");
    if (!q_freed && fresh[i] + n > q && q + n > fresh[i])
      corrupt("a block overlapping q, still live");
    fill(fresh[i], n, 100u + i);
  }
  /* The overflows may have written the first or last 32 bytes of the
   * neighbours (and the zero block's write, of anything next to it): only
   * the middles of large enough blocks are checked then. */
  int near = !strncmp(c, "overflow_", 9) || !strncmp(c, "underflow_", 10) ||
             !strcmp(c, "zero_write");
  size_t edge = near ? 32 : 0;
  for (unsigned i = 0; i < LIVE; ++i)
    if (live[i] != NULL && (!near || n > 2 * edge) &&
        !filled(live[i], n, i, edge))
      corrupt("a live block changed");
  for (unsigned i = 0; i < FRESH; ++i)
    if (!filled(fresh[i], n, 100u + i, 0)) corrupt("a fresh block changed");
  for (unsigned i = 0; i < FRESH; ++i) free(fresh[i]);
  for (unsigned i = 0; i < LIVE; ++i) free(live[i]);
  if (!p_freed && strcmp(c, "interior") && strcmp(c, "unaligned")) free(p);
  if (!q_freed) free(q);
  printf("UNNOTICED %s %zu\n", c, n);
  return 0;
}
