// A program run under the drop-in malloc by //tests:dropin_test: with
// LD_PRELOAD=libpmr_malloc.so (dropin_child) or linked with //malloc:dropin
// (dropin_child_static). argv[1] names a scenario; each checks its promises
// with CHECK, which prints the failed line and exits 1; a scenario that
// passes prints "PASS <scenario>" and exits 0. A hang is caught by the
// driver (each child is killed after a bound and the test fails).
//
// The child first checks that malloc really is the drop-in's (a block from
// it is owned by pmr_dropin_owns), so a preload that did not take fails
// instead of testing glibc.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "containers/pmr_vector.h"
#include "malloc/pmr_dropin.h"
#include "mem_resource/pmr_mem_resource.h"
#include "resources/pmr_synchronized_pool.h"
#include "resources/pmr_thread_cache.h"

#define CHECK(cond)                                                         \
  do {                                                                      \
    if (!(cond)) {                                                          \
      fprintf(stderr, "dropin_child: %s:%d: CHECK(%s) failed (errno %d)\n", \
              __FILE__, __LINE__, #cond, errno);                            \
      fflush(stderr);                                                       \
      _exit(1);                                                             \
    }                                                                       \
  } while (0)

namespace {

// ---- the drop-in's own functions, wherever they come from -----------------

using OwnsFn = bool (*)(const void*);
using StatsFn = pmr_dropin_stats (*)(void);
using ResourceFn = pmr_mem_resource* (*)(void);
using PrintFn = void (*)(int);

#ifdef DROPIN_STATIC
OwnsFn owns_fn() { return pmr_dropin_owns; }
StatsFn stats_fn() { return pmr_dropin_get_stats; }
ResourceFn resource_fn() { return pmr_dropin_resource; }
PrintFn print_fn() { return pmr_dropin_print_stats; }
#else
// Preloaded: found in the process's global scope (the child does not link
// the drop-in, so a preload that did not take leaves them NULL).
OwnsFn owns_fn() {
  return reinterpret_cast<OwnsFn>(dlsym(RTLD_DEFAULT, "pmr_dropin_owns"));
}
StatsFn stats_fn() {
  return reinterpret_cast<StatsFn>(dlsym(RTLD_DEFAULT, "pmr_dropin_get_stats"));
}
ResourceFn resource_fn() {
  return reinterpret_cast<ResourceFn>(
      dlsym(RTLD_DEFAULT, "pmr_dropin_resource"));
}
PrintFn print_fn() {
  return reinterpret_cast<PrintFn>(
      dlsym(RTLD_DEFAULT, "pmr_dropin_print_stats"));
}
#endif

// Whether the drop-in in use is the secure library: its statistics say so.
bool secure_library() {
  int fds[2];
  CHECK(print_fn() != nullptr && pipe(fds) == 0);
  print_fn()(fds[1]);
  close(fds[1]);
  std::string text;
  char buf[256];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;)
    text.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  return text.find("secure mode") != std::string::npos;
}

bool owns(const void* p) {
  OwnsFn f = owns_fn();
  return f != nullptr && f(p);
}

// ---- blocks made before main ----------------------------------------------

void* g_ctor_block;       // __attribute__((constructor))
std::string g_static_str  // C++ static initialisation, heap-allocated
    (1000, 's');
std::vector<std::string> g_static_vec(100, std::string(300, 'v'));

__attribute__((constructor)) void early_ctor() {
  g_ctor_block = malloc(333);
  if (g_ctor_block != nullptr) memset(g_ctor_block, 0xab, 333);
}

// ---- helpers ---------------------------------------------------------------

void fill(void* p, size_t n, unsigned seed) {
  unsigned char* b = static_cast<unsigned char*>(p);
  for (size_t i = 0; i < n; ++i)
    b[i] = static_cast<unsigned char>(seed + i * 7);
}

bool filled(const void* p, size_t n, unsigned seed) {
  const unsigned char* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i)
    if (b[i] != static_cast<unsigned char>(seed + i * 7)) return false;
  return true;
}

// Every 61st byte and the last: for large blocks, where touching every
// byte would cost more than the allocation under test.
void fill_sparse(void* p, size_t n, unsigned seed) {
  unsigned char* b = static_cast<unsigned char*>(p);
  for (size_t i = 0; i < n; i += 61)
    b[i] = static_cast<unsigned char>(seed + i);
  if (n != 0) b[n - 1] = static_cast<unsigned char>(seed);
}

bool filled_sparse(const void* p, size_t n, unsigned seed) {
  if (n == 0) return true;
  const unsigned char* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n - 1; i += 61)
    if (b[i] != static_cast<unsigned char>(seed + i)) return false;
  return n == 0 || b[n - 1] == static_cast<unsigned char>(seed);
}

bool zeros(const void* p, size_t n) {
  const unsigned char* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i)
    if (b[i] != 0) return false;
  return true;
}

bool aligned_to(const void* p, size_t a) {
  return (reinterpret_cast<uintptr_t>(p) & (a - 1)) == 0;
}

// n, hidden from the compiler (it would warn of the sizes the test means).
__attribute__((noinline)) size_t opaque(size_t n) {
  asm volatile("" : "+r"(n));
  return n;
}

// p, hidden from the compiler (it would warn of a double free).
__attribute__((noinline)) void* opaque_ptr(void* p) {
  asm volatile("" : "+r"(p));
  return p;
}

// A value of errno no allocation function sets.
constexpr int kMarker = 12345;

// Sizes across the classes, the oversize blocks and the mappings.
const size_t kSizes[] = {0,      1,       7,       8,       9,      15,
                         16,     17,      24,      100,     255,    512,
                         1000,   1024,    1025,    4000,    8192,   8193,
                         20000,  65536,   100000,  131072,  200000, 262144,
                         300000, 1 << 20, 3 << 20, 17 << 20};

// ---- scenarios -------------------------------------------------------------

// Every C entry point: sizes, contents, alignment, errno, bad arguments.
void scenario_api() {
  // malloc / free / usable size, errno untouched on success.
  for (size_t n : kSizes) {
    errno = kMarker;
    void* p = malloc(n);
    CHECK(p != nullptr);
    CHECK(errno == kMarker);
    CHECK(owns(p));
    CHECK(aligned_to(p, n <= 8 ? 8 : 16));
    CHECK(malloc_usable_size(p) >= n);
    fill(p, malloc_usable_size(p), 3);
    free(p);
    CHECK(errno == kMarker);
  }
  // malloc(0): a unique block each time.
  void* z1 = malloc(0);
  void* z2 = malloc(0);
  CHECK(z1 != nullptr && z2 != nullptr && z1 != z2);
  free(z1);
  free(z2);
  free(nullptr);
  CHECK(malloc_usable_size(nullptr) == 0);

  // Live blocks never overlap.
  std::vector<std::pair<unsigned char*, size_t>> live;
  for (int round = 0; round < 4; ++round)
    for (size_t n : kSizes) {
      unsigned char* p = static_cast<unsigned char*>(malloc(n));
      CHECK(p != nullptr);
      fill(p, n, static_cast<unsigned>(live.size()));
      live.emplace_back(p, n);
    }
  for (size_t i = 0; i < live.size(); ++i) {
    CHECK(filled(live[i].first, live[i].second, static_cast<unsigned>(i)));
    free(live[i].first);
  }

  // calloc: zeros, also of reused memory; overflow and huge sizes fail.
  for (size_t n : kSizes) {
    void* d = malloc(n);
    CHECK(d != nullptr);
    memset(d, 0xff, n);
    free(d);
    errno = kMarker;
    void* c = calloc(1, n);
    CHECK(c != nullptr && errno == kMarker);
    CHECK(zeros(c, n));
    CHECK(owns(c));
    free(c);
    c = calloc(n, 1);
    CHECK(c != nullptr && zeros(c, n));
    free(c);
  }
  void* c0 = calloc(0, 0);
  CHECK(c0 != nullptr);
  free(c0);
  errno = 0;
  CHECK(calloc(opaque(SIZE_MAX / 2), 3) == nullptr && errno == ENOMEM);
  errno = 0;
  CHECK(calloc(opaque((size_t)1 << 33), (size_t)1 << 33) == nullptr &&
        errno == ENOMEM);
  errno = 0;
  CHECK(calloc(1, opaque(SIZE_MAX)) == nullptr && errno == ENOMEM);
  errno = 0;
  CHECK(calloc(1, opaque(PTRDIFF_MAX)) == nullptr && errno == ENOMEM);

  // Impossible sizes: NULL and ENOMEM, never a crash.
  const size_t huge[] = {SIZE_MAX,
                         SIZE_MAX - 1,
                         SIZE_MAX - 4096,
                         SIZE_MAX / 2,
                         (size_t)PTRDIFF_MAX + 1,
                         (size_t)1 << 50};
  for (size_t n : huge) {
    errno = 0;
    CHECK(malloc(n) == nullptr && errno == ENOMEM);
    void* q = nullptr;
    CHECK(posix_memalign(&q, 64, n) == ENOMEM && q == nullptr);
    errno = 0;
    CHECK(aligned_alloc(4096, n) == nullptr && errno == ENOMEM);
    errno = 0;
    CHECK(memalign(64, n) == nullptr && errno == ENOMEM);
    errno = 0;
    CHECK(valloc(n) == nullptr && errno == ENOMEM);
    errno = 0;
    CHECK(pvalloc(n) == nullptr && errno == ENOMEM);
    void* keep = malloc(100);
    fill(keep, 100, 9);
    errno = 0;
    CHECK(realloc(keep, n) == nullptr && errno == ENOMEM);
    CHECK(filled(keep, 100, 9));  // untouched, still ours
    free(keep);
  }

  // realloc: NULL, 0, growth and shrinking across every kind of block,
  // contents kept up to the smaller size.
  errno = kMarker;
  void* r = realloc(nullptr, 40);
  CHECK(r != nullptr && owns(r) && errno == kMarker);
  CHECK(realloc(r, 0) == nullptr);  // frees, as glibc
  CHECK(errno == kMarker);
  for (size_t from : kSizes)
    for (size_t to : kSizes) {
      if (from == 0 || to == 0) continue;
      void* p = malloc(from);
      CHECK(p != nullptr);
      fill(p, from, 5);
      errno = kMarker;
      void* q = realloc(p, to);
      CHECK(q != nullptr && errno == kMarker);
      CHECK(filled(q, from < to ? from : to, 5));
      CHECK(malloc_usable_size(q) >= to);
      fill(q, to, 6);
      free(q);
    }
  // A block grown many times keeps its contents (in place or moved).
  size_t len = 1;
  unsigned char* g = static_cast<unsigned char*>(malloc(len));
  g[0] = 0;
  while (len < (8u << 20)) {
    size_t next = len + len / 2 + 1;
    g = static_cast<unsigned char*>(realloc(g, next));
    CHECK(g != nullptr);
    CHECK(g[len - 1] == static_cast<unsigned char>(len - 1));
    for (size_t i = len; i < next; ++i) g[i] = static_cast<unsigned char>(i);
    len = next;
  }
  for (size_t i = 1; i < len; i += 4097) CHECK(g[i] == (unsigned char)i);
  free(g);

  // reallocarray: overflow fails and leaves the block.
  void* a = reallocarray(nullptr, 10, 10);
  CHECK(a != nullptr);
  fill(a, 100, 8);
  errno = 0;
  CHECK(reallocarray(a, opaque(SIZE_MAX / 2), 3) == nullptr && errno == ENOMEM);
  CHECK(filled(a, 100, 8));
  a = reallocarray(a, 1000, 8);
  CHECK(a != nullptr && filled(a, 100, 8));
  free(a);

  // Alignments up to the page size and beyond, every aligned entry point.
  for (size_t al = 1; al <= ((size_t)4 << 20); al <<= 1)
    for (size_t n : {(size_t)0, (size_t)1, (size_t)24, (size_t)100,
                     (size_t)3000, (size_t)70000, (size_t)300000}) {
      void* p = nullptr;
      int rc = posix_memalign(&p, al, n);
      if (al < sizeof(void*)) {
        CHECK(rc == EINVAL);
        continue;
      }
      errno = kMarker;
      CHECK(rc == 0 && p != nullptr && aligned_to(p, al));
      CHECK(errno == kMarker && owns(p));
      CHECK(malloc_usable_size(p) >= n);
      fill(p, n, 2);
      void* q = realloc(p, n + 5000);  // realloc of an aligned block
      CHECK(q != nullptr && filled(q, n, 2));
      free(q);
      void* b = aligned_alloc(al, n);
      CHECK(b != nullptr && aligned_to(b, al) && owns(b));
      fill(b, n, 4);
      free(b);
      void* m = memalign(al, n);
      CHECK(m != nullptr && aligned_to(m, al));
      free(m);
    }
  // Bad alignments.
  void* bad = reinterpret_cast<void*>(1);
  errno = kMarker;
  CHECK(posix_memalign(&bad, opaque(24), 10) == EINVAL);
  CHECK(posix_memalign(&bad, opaque(0), 10) == EINVAL);
  CHECK(posix_memalign(&bad, opaque(4), 10) == EINVAL);  // below sizeof(void *)
  CHECK(bad == reinterpret_cast<void*>(1) && errno == kMarker);
  errno = 0;
  CHECK(aligned_alloc(opaque(24), 10) == nullptr && errno == EINVAL);
  errno = 0;
  CHECK(aligned_alloc(opaque(0), 10) == nullptr && errno == EINVAL);
  void* m24 = memalign(opaque(24), 10);  // glibc: rounded up to 32
  CHECK(m24 != nullptr && aligned_to(m24, 32));
  free(m24);
  errno = 0;
  CHECK(memalign(opaque(SIZE_MAX / 2 + 2), 10) == nullptr && errno == EINVAL);

  // valloc / pvalloc: page aligned; pvalloc rounds the size up to pages.
  size_t ps = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* v = valloc(10);
  CHECK(v != nullptr && aligned_to(v, ps));
  free(v);
  void* pv = pvalloc(ps + 1);
  CHECK(pv != nullptr && aligned_to(pv, ps));
  CHECK(malloc_usable_size(pv) >= 2 * ps);
  memset(pv, 1, 2 * ps);
  free(pv);
  void* pv0 = pvalloc(0);
  CHECK(pv0 != nullptr && malloc_usable_size(pv0) >= ps);
  free(pv0);

  // malloc_trim: gives free memory back, allocation goes on after.
  std::vector<void*> many;
  for (int i = 0; i < 20000; ++i) many.push_back(malloc(200));
  for (void* p : many) free(p);
  malloc_trim(0);
  void* after = malloc(200);
  CHECK(after != nullptr && owns(after));
  free(after);

  // Blocks of 8 KiB to 128 KiB freed in numbers are kept for requests of
  // their size, not unmapped (4 MiB of them: beyond what the engine itself
  // keeps, within what its upstream keeps).
  malloc_trim(0);
  std::vector<void*> medium;
  for (int i = 0; i < 200; ++i) medium.push_back(malloc(20000));
  for (void* p : medium) free(p);
  StatsFn stats = stats_fn();
  CHECK(stats != nullptr);
  CHECK(stats().free_oversize_bytes >= 200 * 20000);
  medium.clear();
  for (int i = 0; i < 200; ++i) medium.push_back(malloc(20000));
  CHECK(stats().free_oversize_bytes < 20000);
  for (void* p : medium) free(p);
  malloc_trim(0);
  CHECK(stats().free_oversize_bytes == 0);

  // mallopt / mallinfo are glibc's and not taken over: they must not crash.
  (void)mallopt(M_TRIM_THRESHOLD, 1 << 20);
}

// C++'s operator new and delete, every standard form.
struct alignas(64) Line {
  char c[64];
};
struct alignas(8192) Big {
  char c[100];
};

int g_handler_calls;
void* g_reserve;
void release_reserve() {
  ++g_handler_calls;
  free(g_reserve);
  g_reserve = nullptr;
  std::set_new_handler(nullptr);
}

void scenario_cxx() {
  int* i = new int(5);
  CHECK(owns(i) && *i == 5);
  delete i;
  int* arr = new int[1000];
  CHECK(owns(arr));
  arr[999] = 1;
  delete[] arr;
  std::string* s = new std::string(5000, 'x');
  CHECK(owns(s) && owns(s->data()));
  delete s;
  Line* l = new Line;
  CHECK(aligned_to(l, 64) && owns(l));
  delete l;
  Line* ls = new Line[17];
  CHECK(aligned_to(ls, 64));
  delete[] ls;
  Big* b = new Big;
  CHECK(aligned_to(b, 8192) && owns(b));
  delete b;
  Big* bs = new Big[3];
  CHECK(aligned_to(bs, 8192));
  delete[] bs;
  // Explicit forms (sized, aligned, nothrow).
  void* p = ::operator new(100);
  ::operator delete(p, 100);
  p = ::operator new[](100);
  ::operator delete[](p, 100);
  p = ::operator new(100, std::align_val_t(256));
  CHECK(aligned_to(p, 256));
  ::operator delete(p, std::align_val_t(256));
  p = ::operator new[](100, std::align_val_t(4096));
  CHECK(aligned_to(p, 4096));
  ::operator delete[](p, 100, std::align_val_t(4096));
  p = ::operator new(100, std::align_val_t(128));
  ::operator delete(p, 100, std::align_val_t(128));
  p = ::operator new(100, std::nothrow);
  CHECK(p != nullptr);
  ::operator delete(p, std::nothrow);
  p = ::operator new[](100, std::nothrow);
  ::operator delete[](p, std::nothrow);
  p = ::operator new(100, std::align_val_t(64), std::nothrow);
  CHECK(p != nullptr && aligned_to(p, 64));
  ::operator delete(p, std::align_val_t(64), std::nothrow);
  p = ::operator new[](100, std::align_val_t(64), std::nothrow);
  ::operator delete[](p, std::align_val_t(64), std::nothrow);
  // Failure: nothrow forms return NULL, the others throw std::bad_alloc.
  size_t huge = SIZE_MAX / 2;
  CHECK(::operator new(huge, std::nothrow) == nullptr);
  CHECK(::operator new[](huge, std::nothrow) == nullptr);
  CHECK(::operator new(huge, std::align_val_t(64), std::nothrow) == nullptr);
  bool threw = false;
  try {
    p = ::operator new(huge);
  } catch (const std::bad_alloc&) {
    threw = true;
  }
  CHECK(threw);
  threw = false;
  try {
    p = ::operator new[](huge, std::align_val_t(4096));
  } catch (const std::bad_alloc&) {
    threw = true;
  }
  CHECK(threw);
  // The new-handler is called until it gives up.
  std::set_new_handler(release_reserve);
  g_reserve = malloc(10);
  threw = false;
  try {
    p = ::operator new(huge);
  } catch (const std::bad_alloc&) {
    threw = true;
  }
  CHECK(threw && g_handler_calls == 1);
  // Containers of the standard library.
  std::vector<std::string> v;
  for (int k = 0; k < 10000; ++k)
    v.emplace_back(static_cast<size_t>(k % 300), 'q');
  for (int k = 0; k < 10000; ++k)
    CHECK(v[k].size() == static_cast<size_t>(k % 300));
}

// Threads: blocks freed and reallocated by other threads, threads that exit
// holding blocks, allocation in threads' exit paths.
pthread_key_t g_key;
thread_local std::string tl_str;

void key_destructor(void* p) {
  // Runs at thread exit, possibly after the drop-in's own exit handler:
  // allocation and free must still work.
  free(p);
  void* q = malloc(77);
  CHECK(q != nullptr);
  free(q);
}

void scenario_threads() {
  CHECK(pthread_key_create(&g_key, key_destructor) == 0);
  // 1. Producer threads hand blocks to the main thread, then exit.
  for (int round = 0; round < 20; ++round) {
    std::vector<void*> handed(4 * 2000);
    std::vector<std::thread> ts;
    for (int t = 0; t < 4; ++t)
      ts.emplace_back([t, &handed] {
        tl_str.assign(500, 't');  // freed by its thread_local destructor
        pthread_setspecific(g_key, malloc(123));
        for (int i = 0; i < 2000; ++i) {
          size_t n = 16 + static_cast<size_t>((i * 37) % 3000);
          void* p = malloc(n);
          CHECK(p != nullptr);
          fill(p, n, static_cast<unsigned>(i));
          handed[t * 2000 + i] = p;
        }
      });
    for (auto& th : ts) th.join();
    for (size_t k = 0; k < handed.size(); ++k) {
      size_t n = 16 + static_cast<size_t>(((k % 2000) * 37) % 3000);
      CHECK(filled(handed[k], n, static_cast<unsigned>(k % 2000)));
      // Every other block grown by realloc on this thread, then freed.
      if (k % 2 == 0) {
        handed[k] = realloc(handed[k], n * 3);
        CHECK(handed[k] != nullptr &&
              filled(handed[k], n, (unsigned)(k % 2000)));
      }
      free(handed[k]);
    }
  }
  // 2. Many short threads: each takes a heap and gives it back at exit;
  // the heaps are reused, not piled up.
  for (int i = 0; i < 500; ++i) {
    std::thread t([] {
      void* p = malloc(64);
      CHECK(p != nullptr);
      free(p);
    });
    t.join();
  }
  StatsFn stats = stats_fn();
  CHECK(stats != nullptr);
  pmr_dropin_stats st = stats();
  CHECK(st.threads <= 8);  // the main thread, and heaps being handed over
  // 3. Threads freeing one another's blocks at once.
  constexpr int kThreads = 4;
  constexpr int kBlocks = 20000;
  std::vector<std::atomic<void*>> slots(kBlocks);
  for (auto& s : slots) s.store(nullptr);
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([t, &slots] {
      unsigned x = 1234567u * static_cast<unsigned>(t + 1);
      for (int i = 0; i < 200000; ++i) {
        x = x * 1103515245u + 12345u;
        size_t k = (x >> 8) % kBlocks;
        void* mine = malloc(8 + (x >> 20) % 600);
        CHECK(mine != nullptr);
        void* old = slots[k].exchange(mine);
        if (old != nullptr) {
          if ((x & 3) == 0) {
            old = realloc(old, 1000);
            CHECK(old != nullptr);
          }
          free(old);
        }
      }
    });
  for (auto& th : ts) th.join();
  for (auto& s : slots) free(s.load());
  pthread_key_delete(g_key);
}

// fork while other threads allocate: the child keeps working.
void scenario_fork() {
  std::atomic<bool> stop{false};
  std::vector<std::thread> ts;
  for (int t = 0; t < 2; ++t)
    ts.emplace_back([&stop, t] {
      std::vector<void*> keep(512, nullptr);
      unsigned x = static_cast<unsigned>(t + 7);
      while (!stop.load(std::memory_order_relaxed)) {
        x = x * 1103515245u + 12345u;
        size_t k = (x >> 8) % keep.size();
        free(keep[k]);
        // Pooled, oversize and mapped sizes: every lock the drop-in takes.
        size_t n = (x & 63) == 0 ? 300000 : (x & 15) == 0 ? 20000 : 64;
        keep[k] = malloc(n);
        CHECK(keep[k] != nullptr);
      }
      for (void* p : keep) free(p);
    });
  for (int f = 0; f < 30; ++f) {
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
      alarm(20);  // a hang fails as a signal instead of blocking the test
      std::vector<void*> mine;
      for (int i = 0; i < 2000; ++i) {
        size_t n = static_cast<size_t>(i % 5000) + 1;
        void* p = malloc(n);
        if (p == nullptr) _exit(2);
        memset(p, 1, n);
        mine.push_back(p);
      }
      void* big = calloc(1, 1 << 20);
      std::thread t([&mine] {
        for (void* p : mine) free(p);
        void* q = malloc(100000);
        free(q);
      });
      t.join();
      free(big);
      if (!owns(malloc(10))) _exit(3);
      _exit(0);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      fprintf(stderr, "dropin_child: forked child %d ended with status %#x\n",
              f, status);
      _exit(1);
    }
  }
  stop.store(true);
  for (auto& th : ts) th.join();
}

// dlopen / dlclose of a library that allocates in its constructor and
// destructor, with blocks crossing between it and the program.
void scenario_dlopen(const char* plugin) {
  for (int round = 0; round < 3; ++round) {
    void* h = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      fprintf(stderr, "dropin_child: dlopen(%s): %s\n", plugin, dlerror());
      _exit(1);
    }
    using Make = void* (*)(size_t);
    using Take = int (*)(void*);
    Make make = reinterpret_cast<Make>(dlsym(h, "dropin_plugin_make"));
    Take take = reinterpret_cast<Take>(dlsym(h, "dropin_plugin_take"));
    CHECK(make != nullptr && take != nullptr);
    void* from_plugin = make(5000);
    CHECK(owns(from_plugin));
    void* to_plugin = malloc(3000);
    CHECK(take(to_plugin) == 1);
    CHECK(dlclose(h) == 0);
    free(from_plugin);  // after the library is gone
  }
}

// Blocks from before main are ours and usable.
void scenario_early() {
  CHECK(g_ctor_block != nullptr && owns(g_ctor_block));
  const unsigned char* c = static_cast<const unsigned char*>(g_ctor_block);
  for (int i = 0; i < 333; ++i) CHECK(c[i] == 0xab);
  g_ctor_block = realloc(g_ctor_block, 100000);
  CHECK(g_ctor_block != nullptr);
  free(g_ctor_block);
  CHECK(g_static_str == std::string(1000, 's') && owns(g_static_str.data()));
  for (auto& s : g_static_vec) CHECK(s == std::string(300, 'v'));
  g_static_vec.clear();
  g_static_vec.shrink_to_fit();
  // Allocation after main returns, in an atexit handler.
  atexit([] {
    void* p = malloc(4000);
    if (p == nullptr || !owns(p)) _exit(1);
    free(p);
  });
}

// pmr-c's own resources in a process whose malloc is the drop-in: the
// malloc resource calls this malloc, pools over it map their segments.
void scenario_resources() {
  pmr_mem_resource* def = pmr_get_default_resource();
  pmr_mem_resource* mal = pmr_malloc_resource();
  CHECK(def != nullptr && mal != nullptr);
  void* p = pmr_allocate(mal, 1000, 64);
  CHECK(p != nullptr && aligned_to(p, 64));
  pmr_deallocate(mal, p, 1000, 64);
  p = pmr_allocate(def, 50, 8);
  CHECK(p != nullptr);
  pmr_deallocate(def, p, 50, 8);
  pmr_thread_cache tc;
  CHECK(pmr_thread_cache_init(&tc, nullptr, mal));
  pmr_synchronized_pool pool;
  CHECK(pmr_synchronized_pool_init(&pool, nullptr, mal));
  std::vector<std::pair<void*, size_t>> blocks;
  for (size_t i = 0; i < 20000; ++i) {
    size_t n = 8 + (i * 13) % 5000;
    void* a = pmr_allocate(&tc.base, n, 8);
    void* b = pmr_allocate(&pool.base, n, 8);
    CHECK(a != nullptr && b != nullptr);
    fill(a, n, 1);
    fill(b, n, 2);
    blocks.emplace_back(a, n);
    blocks.emplace_back(b, n);
  }
  for (size_t i = 0; i < blocks.size(); i += 2) {
    CHECK(filled(blocks[i].first, blocks[i].second, 1));
    CHECK(filled(blocks[i + 1].first, blocks[i + 1].second, 2));
    pmr_deallocate(&tc.base, blocks[i].first, blocks[i].second, 8);
    pmr_deallocate(&pool.base, blocks[i + 1].first, blocks[i + 1].second, 8);
  }
  pmr_thread_cache_destroy(&tc);
  pmr_synchronized_pool_destroy(&pool);
  // The drop-in's own resource, sized calls.
  ResourceFn rf = resource_fn();
  CHECK(rf != nullptr);
  pmr_mem_resource* r = rf();
  CHECK(r != nullptr);
  void* d = pmr_allocate(r, 200, 16);
  CHECK(d != nullptr);
  pmr_deallocate(r, d, 200, 16);
  // A container over the default resource.
  pmr_vector v;
  CHECK(pmr_vector_init(&v, sizeof(uint64_t), alignof(uint64_t), nullptr));
  for (uint64_t k = 0; k < 100000; ++k) CHECK(pmr_vector_push_back(&v, &k));
  CHECK(pmr_vector_size(&v) == 100000);
  CHECK(PMR_VECTOR_GET_T(&v, uint64_t, 99999) == 99999);
  pmr_vector_destroy(&v);
}

// A pointer the drop-in did not hand out (glibc's own malloc, reached past
// the drop-in; a pointer into a page of ours that holds no block): free
// ignores it, malloc_usable_size says 0, realloc refuses it. Nothing is
// written to it.
void scenario_foreign() {
  using MallocFn = void* (*)(size_t);
  MallocFn libc_malloc = reinterpret_cast<MallocFn>(dlsym(RTLD_NEXT, "malloc"));
  CHECK(libc_malloc != nullptr);
  for (size_t n : {(size_t)16, (size_t)100, (size_t)5000, (size_t)200000}) {
    unsigned char* f = static_cast<unsigned char*>(libc_malloc(n));
    if (f == nullptr || owns(f)) continue;  // libc's malloc may be ours too
    fill(f, n, 11);
    CHECK(malloc_usable_size(f) == 0);
    errno = kMarker;
    free(f);
    CHECK(errno == kMarker);
    errno = 0;
    CHECK(realloc(f, 2 * n) == nullptr && errno == ENOMEM);
    CHECK(filled(f, n, 11));
  }
  // Pointers into the middle of our blocks are not blocks.
  void* p = malloc(300000);
  CHECK(!owns(static_cast<char*>(p) + 4096));
  free(p);
  // Nor is a pointer into a page that serves no class: here a block freed
  // already, whose page emptied and went back to the engine's free pages
  // (the pages filled first are no longer the class's current one). Freeing
  // it is misuse: scenario_misuse.
  constexpr int kBlocks = 5000;  // about five 64 KiB pages of 64 B blocks
  std::vector<void*> v(kBlocks);
  for (void*& b : v) CHECK((b = malloc(64)) != nullptr);
  for (void* b : v) free(b);
  CHECK(malloc_usable_size(v[0]) == 0);
  CHECK(!owns(v[0]));
  void* q = malloc(64);  // the engine still works
  CHECK(q != nullptr && malloc_usable_size(q) >= 64);
  free(q);
}

// A block of n bytes right after its page's table of descriptors: among
// enough blocks of n to fill a segment (whose first page holds the table),
// in a segment's first 64 KiB page, the first block at an offset of more
// than the blocks' spacing in that page, or one further from the block
// before it than the spacing (the table lies between). Its byte before the
// start written, then freed: the secure library reports it at that free, where
// the bytes around the table are checked (resources/internal/page_heap.h,
// PMR_IMPL_TABLE_GAP).
void misuse_underflow_table(size_t n) {
  std::vector<uintptr_t> got;
  for (int i = 0; i < 3000; ++i)
    got.push_back(reinterpret_cast<uintptr_t>(malloc(n)));
  std::sort(got.begin(), got.end());
  const uintptr_t kPage = 64 << 10;
  unsigned char* q = nullptr;
  for (size_t i = 0; i < got.size() && q == nullptr;) {
    size_t j = i;  // [i, j): the blocks of one page
    while (j < got.size() && got[j] / kPage == got[i] / kPage) ++j;
    uintptr_t spacing = UINTPTR_MAX;
    for (size_t k = i + 1; k < j; ++k)
      spacing = std::min(spacing, got[k] - got[k - 1]);
    // Only a segment's first page (segments: 1 MiB, aligned) holds a table.
    const bool first = got[i] / kPage * kPage % (1u << 20) == 0;
    for (size_t k = i; first && k < j && j - i >= 3 && q == nullptr; ++k) {
      uintptr_t below = k == i ? got[k] % kPage : got[k] - got[k - 1];
      if (below > spacing) q = reinterpret_cast<unsigned char*>(got[k]);
    }
    i = j;
  }
  CHECK(q != nullptr);
  static_cast<unsigned char*>(opaque_ptr(q))[-1] = 0x41;
  free(q);  // report mode: q stays allocated
  for (uintptr_t b : got)
    if (reinterpret_cast<unsigned char*>(b) != q)
      free(reinterpret_cast<void*>(b));
}

// One misuse of a block of `n` bytes (argv: KIND N), then a check that the
// heap is intact: run by the test in the default mode, where the misuse
// must stop the process (SIGABRT, one line on stderr), and with
// PMR_MALLOC_MISUSE=report, where the bad call must do nothing: every other
// block keeps its contents and no block is handed out twice.
//   double      free(p); free(p)
//   delayed     free(p); free(q); blocks of other sizes come and go; free(p)
//   remote      free(p) here, free(p) again on another thread
//   interior    free(p + 16) (p + 8 in a block of 16)
//   unaligned   free(p + 1)
//   emptied     free of a block whose page emptied and went back (n small)
//   realloc     realloc(p, ...) of a freed block (the free inside it
//               reports)
//   overflow    p[n] written, then free(p) (the secure library reports it)
//   realloc_overflow  p[n] written, then realloc(p, 2 n)
//   overflow_far  p[n .. n + n / 4 + 8191] written (the secure library's
//               guard page after a large block's pages stops it: SIGSEGV)
//   overflow_far_kept  the same after free(p) and p = malloc(n) (a freed
//               guarded block is kept with its guard, and taken again)
//   write_freed free(p), then its first 16 bytes written
//   underflow_table  q[-1] written, q a block right after its page's table
//               of descriptors (found among blocks of n), then free(q)
void scenario_misuse(const std::string& kind, size_t n) {
  if (kind == "underflow_table") {
    misuse_underflow_table(n);
    return;
  }
  const int kLive = n > ((size_t)1 << 20) ? 4 : 64;  // a few of the largest
  std::vector<unsigned char*> live;
  for (int i = 0; i < kLive; ++i) {
    auto* b = static_cast<unsigned char*>(malloc(n));
    CHECK(b != nullptr);
    fill_sparse(b, n, static_cast<unsigned>(i));
    live.push_back(b);
  }
  auto* p = static_cast<unsigned char*>(malloc(n));
  auto* q = static_cast<unsigned char*>(malloc(n));
  CHECK(p != nullptr && q != nullptr);
  std::vector<void*> gone;  // blocks whose page may empty
  if (kind == "double") {
    free(p);
    free(opaque_ptr(p));
  } else if (kind == "delayed") {
    free(p);
    free(q);
    q = nullptr;
    for (size_t m : {(size_t)24, (size_t)700, (size_t)5000})
      for (int i = 0; i < 50; ++i) free(malloc(m));
    free(opaque_ptr(p));
  } else if (kind == "remote") {
    free(p);
    std::thread t([p] { free(opaque_ptr(p)); });
    t.join();
  } else if (kind == "interior") {
    free(opaque_ptr(p + (n >= 32 ? 16 : 8)));
  } else if (kind == "unaligned") {
    free(opaque_ptr(p + 1));
  } else if (kind == "emptied") {
    constexpr int kBlocks = 5000;  // several pages of n-byte blocks
    for (int i = 0; i < kBlocks; ++i) gone.push_back(malloc(n));
    for (void* b : gone) free(b);
    free(opaque_ptr(gone[gone.size() / 2]));  // a page of its own, emptied
  } else if (kind == "realloc") {
    free(p);
    void* r = realloc(opaque_ptr(p), n / 2 + 1);
    if (r != nullptr) free(r);  // report mode: a new block
  } else if (kind == "overflow") {
    static_cast<unsigned char*>(opaque_ptr(p))[n] = 0x41;
    free(p);  // report mode: p stays allocated
  } else if (kind == "overflow_far" || kind == "overflow_far_kept") {
    if (kind == "overflow_far_kept") {  // a block freed and taken again
      free(p);
      p = static_cast<unsigned char*>(malloc(n));
      CHECK(p != nullptr);
    }
    // Through the rest of the block's pages (the secure library rounds a
    // large block up by at most a quarter) into what follows them.
    memset(static_cast<unsigned char*>(opaque_ptr(p)) + n, 0x41, n / 4 + 8192);
    free(p);
  } else if (kind == "write_freed") {
    free(p);
    memset(opaque_ptr(p), 0x41, 16);
  } else if (kind == "realloc_overflow") {
    static_cast<unsigned char*>(opaque_ptr(p))[n] = 0x41;
    void* r = realloc(p, 2 * n);
    CHECK(r == nullptr);  // report mode: refused, p stays allocated
  } else {
    CHECK(!"unknown misuse");
  }
  // The program goes on: the next blocks are distinct from each other and
  // from every live one (a double free that the free does not catch is
  // caught when a list would hand the block out again: enough blocks to
  // take the class's list and then its page's), and nothing else changed
  // (report mode).
  for (int i = 0; i < kLive; ++i)
    CHECK(filled_sparse(live[static_cast<size_t>(i)], n,
                        static_cast<unsigned>(i)));
  std::vector<unsigned char*> fresh;
  const int kFresh = n < 4096 ? static_cast<int>(4096 / n) + 16 : 8;
  for (int i = 0; i < kFresh; ++i) {
    auto* b = static_cast<unsigned char*>(malloc(n));
    CHECK(b != nullptr);
    for (unsigned char* o : fresh) CHECK(o != b);
    for (unsigned char* o : live) CHECK(o != b);
    fill_sparse(b, n, 200u + static_cast<unsigned>(i));
    fresh.push_back(b);
  }
  for (int i = 0; i < kLive; ++i)
    CHECK(filled_sparse(live[static_cast<size_t>(i)], n,
                        static_cast<unsigned>(i)));
  for (size_t i = 0; i < fresh.size(); ++i)
    CHECK(filled_sparse(fresh[i], n, 200u + static_cast<unsigned>(i)));
  for (unsigned char* b : fresh) free(b);
  for (unsigned char* b : live) free(b);
  if (kind == "interior" || kind == "unaligned") free(p);
  free(q);
}

// When a freed pooled block is handed out again. The secure library
// (resources/internal/page_heap.h, "delayed reuse"): not while the thread
// frees nothing more, however many blocks it takes; after malloc_trim, which
// sends the waiting blocks to their pages, it is, so no memory is lost. The
// default library: the next blocks of its size include it.
void scenario_reuse() {
  const bool delayed = secure_library();
  for (size_t n : {(size_t)16, (size_t)100, (size_t)4096, (size_t)16000}) {
    const size_t count = 2 * 65536 / n + 64;  // past a page's blocks
    std::vector<void*> held;
    held.reserve(2 * count);  // no free between p's and the check
    void* p = malloc(n);
    CHECK(p != nullptr);
    free(p);
    bool back = false;
    for (size_t i = 0; i < count; ++i) {
      held.push_back(malloc(n));
      CHECK(held.back() != nullptr);
      back |= held.back() == p;
    }
    CHECK(back != delayed);
    if (delayed) {
      malloc_trim(0);
      for (size_t i = 0; i < count && !back; ++i) {
        held.push_back(malloc(n));
        CHECK(held.back() != nullptr);
        back |= held.back() == p;
      }
      CHECK(back);
    }
    for (void* b : held) free(b);
  }
}

// Pooled blocks as a program uses them under the secure library's padding
// (malloc/internal/pad.h): every byte malloc_usable_size tells is the
// program's to write, with no report, through realloc in place, calloc and
// aligned allocations. exact: the secure library, whose usable size is the
// request; else at least the request.
void scenario_padding(bool exact) {
  auto usable_ok = [exact](void* p, size_t n) {
    size_t u = malloc_usable_size(p);
    return exact ? u == n : u >= n;
  };
  for (size_t n = 0; n <= 17000; n += (n < 512 ? 1 : 61)) {
    auto* p = static_cast<unsigned char*>(malloc(n));
    CHECK(p != nullptr);
    if (n <= 16000) CHECK(usable_ok(p, n));
    memset(p, 0x5a, malloc_usable_size(p));
    free(p);
  }
  auto* p = static_cast<unsigned char*>(malloc(100));
  CHECK(p != nullptr && usable_ok(p, 100));
  memset(p, 7, 100);
  // In place within the block (a class of 112 bytes): grown and shrunk.
  auto* q = static_cast<unsigned char*>(realloc(p, 103));
  CHECK(q != nullptr && usable_ok(q, 103));
  for (int i = 0; i < 100; ++i) CHECK(q[i] == 7);
  memset(q, 8, malloc_usable_size(q));
  auto* r = static_cast<unsigned char*>(realloc(q, 60));
  CHECK(r != nullptr && usable_ok(r, 60));
  for (int i = 0; i < 60; ++i) CHECK(r[i] == 8);
  memset(r, 9, malloc_usable_size(r));
  free(r);
  auto* z = static_cast<unsigned char*>(calloc(10, 30));
  CHECK(z != nullptr && usable_ok(z, 300));
  for (int i = 0; i < 300; ++i) CHECK(z[i] == 0);
  free(z);
  for (size_t a = 16; a <= 4096; a *= 4) {
    auto* b = static_cast<unsigned char*>(aligned_alloc(a, 3 * a));
    CHECK(b != nullptr && reinterpret_cast<uintptr_t>(b) % a == 0);
    memset(b, 1, malloc_usable_size(b));
    free(b);
  }
  // malloc(0): a block with nothing to write in the secure library.
  void* e = malloc(0);
  CHECK(e != nullptr && usable_ok(e, 0));
  free(e);
}

// Threads allocating, freeing and reallocating across threads with contents
// checked, while the main thread forks.
void scenario_stress() {
  constexpr int kThreads = 4;
  constexpr int kSlots = 4096;
  struct Slot {
    std::atomic<unsigned char*> p{nullptr};
  };
  std::vector<Slot> slots(kSlots);
  std::atomic<bool> stop{false};
  std::atomic<long> ops{0};
  auto worker = [&](int t) {
    unsigned x = 99u + static_cast<unsigned>(t) * 7919u;
    while (!stop.load(std::memory_order_relaxed)) {
      x = x * 1103515245u + 12345u;
      unsigned kind = (x >> 4) & 15;
      size_t n = kind < 10   ? 1 + (x >> 12) % 256
                 : kind < 15 ? 1 + (x >> 12) % 16384
                             : 1 + (x >> 12) % 400000;
      // A block starts with its length and a seed; its body follows them.
      unsigned char* b = static_cast<unsigned char*>(malloc(n + 16));
      CHECK(b != nullptr);
      memcpy(b, &n, sizeof n);
      memcpy(b + 8, &x, sizeof x);
      fill_sparse(b + 16, n, x);
      unsigned char* old = slots[(x >> 16) % kSlots].p.exchange(b);
      if (old != nullptr) {
        size_t on;
        unsigned ox;
        memcpy(&on, old, sizeof on);
        memcpy(&ox, old + 8, sizeof ox);
        CHECK(filled_sparse(old + 16, on, ox));
        if ((x & 1) == 0) {
          size_t nn = 1 + (x >> 9) % 30000;
          old = static_cast<unsigned char*>(realloc(old, nn + 16));
          CHECK(old != nullptr);
          // The bytes kept, checked where the smaller length's pattern and
          // the old one agree: up to the last multiple of 61 below it.
          size_t kept = on < nn ? on : nn;
          for (size_t i = 0; i + 1 < kept; i += 61)
            CHECK(old[16 + i] == static_cast<unsigned char>(ox + i));
        }
        free(old);
      }
      ops.fetch_add(1, std::memory_order_relaxed);
    }
  };
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t) ts.emplace_back(worker, t);
  // Bounded by work done, not by time.
  for (int f = 0; f < 10; ++f) {
    long target = ops.load() + 20000;
    while (ops.load() < target) std::this_thread::yield();
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
      alarm(20);
      // The child's slots hold the parent's blocks at the fork: free them.
      for (auto& s : slots) {
        unsigned char* b = s.p.load();
        if (b == nullptr) continue;
        size_t on;
        unsigned ox;
        memcpy(&on, b, sizeof on);
        memcpy(&ox, b + 8, sizeof ox);
        if (!filled_sparse(b + 16, on, ox)) _exit(4);
      }
      _exit(0);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  stop.store(true);
  for (auto& th : ts) th.join();
  for (auto& s : slots) free(s.p.load());
}

// The engine the environment chose, and the statistics.
void scenario_stats(const char* want_engine) {
  StatsFn stats = stats_fn();
  CHECK(stats != nullptr);
  std::vector<void*> v;
  for (int i = 0; i < 1000; ++i) v.push_back(malloc(100));
  pmr_dropin_stats st = stats();
  CHECK(strcmp(st.engine, want_engine) == 0);
  CHECK(st.held_bytes >= 1000 * 100);
  CHECK(st.peak_rss_bytes > 0);
  for (void* p : v) free(p);
}

}  // namespace

// Freed large blocks stay kept in the reservoir (malloc/README.md "Large
// blocks"): a later smaller one is carved from the same memory, realloc
// grows into the kept range after a block, malloc_trim gives all back.
// mode "off": PMR_MALLOC_KEEP_BYTES=0, nothing kept.
void scenario_reservoir(const std::string& mode) {
  StatsFn stats = stats_fn();
  CHECK(stats != nullptr);
  malloc_trim(0);
  const size_t n = size_t{20} << 20, m = size_t{15} << 20;
  char* a = static_cast<char*>(malloc(n));
  CHECK(a != nullptr);
  memset(a, 1, n);
  free(a);
  pmr_dropin_stats s1 = stats();
  char* b = static_cast<char*>(malloc(m));
  CHECK(b != nullptr);
  memset(b, 2, m);
  pmr_dropin_stats s2 = stats();
  if (mode == "off") {
    CHECK(s1.reservoir_bytes == 0);
    CHECK(s2.reservoir_hits == s1.reservoir_hits);
    free(b);
    printf("PASS reservoir off\n");
    return;
  }
  CHECK(s1.reservoir_bytes >= n);
  CHECK(s1.reservoir_resident_bytes >= n);
  CHECK(s1.free_oversize_bytes >= n);
  CHECK(b == a);
  CHECK(s2.reservoir_hits == s1.reservoir_hits + 1);
  CHECK(s2.reservoir_misses == s1.reservoir_misses);
  if (secure_library()) {
    // The secure library moves a guarded block on realloc, and takes kept
    // guarded blocks before the reservoir (malloc/internal/guard.h).
    free(b);
    CHECK(malloc_trim(0) == 1);
    CHECK(stats().reservoir_bytes == 0);
    printf("PASS reservoir\n");
    return;
  }
  // The rest of a's range lies right after b: realloc grows into it.
  char* c = static_cast<char*>(realloc(b, size_t{30} << 20));
  CHECK(c == b);
  CHECK(c[m - 1] == 2);
  CHECK(stats().reservoir_grown == s2.reservoir_grown + 1);
  // And shrinks in place.
  c = static_cast<char*>(realloc(c, size_t{2} << 20));
  CHECK(c == b);
  CHECK(c[(size_t{2} << 20) - 1] == 2);
  free(c);
  // calloc's own mappings are kept too.
  void* z = calloc(1, size_t{1} << 20);
  CHECK(z != nullptr);
  free(z);
  CHECK(stats().reservoir_bytes >= (size_t{1} << 20));
  // And calloc takes kept memory: a dirty block's range, zeroed.
  char* d = static_cast<char*>(malloc(size_t{4} << 20));
  CHECK(d != nullptr);
  memset(d, 3, size_t{4} << 20);
  free(d);
  pmr_dropin_stats s3 = stats();
  char* e = static_cast<char*>(calloc(1, size_t{3} << 20));
  CHECK(e != nullptr);
  CHECK(stats().reservoir_hits == s3.reservoir_hits + 1);
  for (size_t i = 0; i < (size_t{3} << 20); i += 512) CHECK(e[i] == 0);
  CHECK(e[(size_t{3} << 20) - 1] == 0);
  free(e);
  CHECK(malloc_trim(0) == 1);
  CHECK(stats().reservoir_bytes == 0);
  printf("PASS reservoir\n");
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: dropin_child SCENARIO [ARG]\n");
    return 2;
  }
  // The drop-in is the process's malloc.
  void* probe = malloc(24);
  CHECK(owns(probe));
  free(probe);
  std::string s = argv[1];
  if (s == "api") {
    scenario_api();
  } else if (s == "reservoir") {
    scenario_reservoir(argc > 2 ? argv[2] : "on");
  } else if (s == "cxx") {
    scenario_cxx();
  } else if (s == "threads") {
    scenario_threads();
  } else if (s == "fork") {
    scenario_fork();
  } else if (s == "dlopen" && argc > 2) {
    scenario_dlopen(argv[2]);
  } else if (s == "early") {
    scenario_early();
  } else if (s == "resources") {
    scenario_resources();
  } else if (s == "foreign") {
    scenario_foreign();
  } else if (s == "stress") {
    scenario_stress();
  } else if (s == "misuse" && argc > 3) {
    scenario_misuse(argv[2], strtoul(argv[3], nullptr, 10));
  } else if (s == "reuse") {
    scenario_reuse();
  } else if (s == "padding" && argc > 2) {
    scenario_padding(strcmp(argv[2], "exact") == 0);
  } else if (s == "stats" && argc > 2) {
    scenario_stats(argv[2]);
  } else {
    fprintf(stderr, "dropin_child: unknown scenario %s\n", s.c_str());
    return 2;
  }
  printf("PASS %s\n", s.c_str());
  fflush(stdout);
  return 0;
}
