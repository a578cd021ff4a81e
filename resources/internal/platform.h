/* PRIVATE: the platform layer: every call the library makes to the OS, and
 * the thread-local storage its fast paths read, behind this one header (the
 * calls in platform.c, what must inline here). Nothing else in resources/
 * or malloc/ names an OS interface, so a port or a change of mechanism
 * (mmap, madvise, mremap, sysconf, getrandom, clock_gettime, pthread_atfork,
 * getenv, getrusage, write, the TLS model) touches this file and platform.c
 * only. Unless a contract says otherwise, a call leaves errno untouched.
 * Sections: memory, the machine, the process, thread-local storage, the
 * clock. */
#ifndef PMR_IMPL_PLATFORM_H
#define PMR_IMPL_PLATFORM_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mem_resource/pmr_mem_resource.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- memory --------------------------------------------------------------
 *
 * Memory straight from the OS. A pool whose upstream hands out system
 * memory (PMR_TRAIT_SYSTEM_MEMORY: the malloc resource, or a third-party
 * resource that says it) maps its segments, and its oversize blocks of at
 * least PMR_IMPL_OS_LARGE_MIN bytes, itself, so that it can give the OS back
 * the memory of pages that stay free (decommit: the address range stays
 * mapped and reads as zeros when touched again). Such a pool says
 * PMR_TRAIT_MAPS_LARGE (pmr_mem_resource.h), and a pool over it
 * (pmr_impl_os_backed) decommits its free pages as well. Memory from any
 * other upstream is never decommitted: the pool cannot know what it is (a
 * buffer registered with a device, a locked region, a file). On a platform
 * without mmap pmr_impl_os_direct is false and decommit does nothing. */

/* Oversize blocks from this size on are mapped (malloc's classic mmap
 * threshold): malloc would keep the holes they leave in its heap. */
#define PMR_IMPL_OS_LARGE_MIN ((size_t)128 << 10)

/* Whether a pool over `upstream` maps its memory itself: upstream says
 * PMR_TRAIT_SYSTEM_MEMORY and the OS page size divides the pool's page
 * size. */
bool pmr_impl_os_direct(const pmr_mem_resource *upstream);

/* Whether what a pool over `upstream` gives for large requests is memory
 * of its own mapping that it never touches while lent out (its
 * PMR_TRAIT_MAPS_LARGE): upstream maps them itself (pmr_impl_os_direct) or
 * says so of its own blocks. */
bool pmr_impl_os_maps_large(const pmr_mem_resource *upstream);

/* Whether what r gives for a request of `bytes` bytes is memory mapped from
 * the OS that r does not touch while lent out: bytes >= PMR_IMPL_OS_LARGE_MIN
 * and r says PMR_TRAIT_MAPS_LARGE. */
bool pmr_impl_os_backed(const pmr_mem_resource *r, size_t bytes);

/* `bytes` of zeroed memory aligned to `alignment` (a power of two), for a
 * pool with pmr_impl_os_direct; NULL with errno ENOMEM when the OS refuses.
 * errno untouched on success. */
void *pmr_impl_os_map(size_t bytes, size_t alignment);

/* Like pmr_impl_os_map, for address space most of which may never be
 * touched (an oversize block's room to grow in place): no commit charge
 * for it until it is (MAP_NORESERVE, where the OS has it). */
void *pmr_impl_os_reserve(size_t bytes, size_t alignment);

/* Unmaps what pmr_impl_os_map or pmr_impl_os_reserve(bytes, ...) returned. */
void pmr_impl_os_unmap(void *p, size_t bytes);

/* Moves the pages of [from, from + len) to [to, to + len) (page-aligned,
 * len a multiple of the OS page, both mapped and apart), resident ones with
 * their contents and no page fault, replacing what was mapped at `to`.
 * [from, from + len) is unmapped after, moved or not; `to` stays mapped.
 * False when some pages could not be moved (not Linux, or the kernel
 * refused): those at `to` are then as they were, or zero pages. errno
 * untouched. */
bool pmr_impl_os_move(void *from, void *to, size_t len);

/* Gives the OS the physical memory of the whole OS pages inside
 * [p, p + bytes); they read as zeros when touched again. errno untouched. */
void pmr_impl_os_decommit(void *p, size_t bytes);

/* Makes the whole OS pages inside [p, p + bytes) inaccessible (access
 * false: any read or write faults) or readable and writable again. False
 * when the OS refused (too many mappings) or has no mmap. errno untouched. */
bool pmr_impl_os_protect(void *p, size_t bytes, bool access);

/* Tells LeakSanitizer (ASan builds) that [p, p + bytes), mapped here, is
 * (add) or is no longer a region to scan for pointers; nothing otherwise. */
void pmr_impl_os_lsan_root(void *p, size_t bytes, bool add);

/* Memory for the library's own records (meta_mem.c): `bytes` rounded up to
 * whole OS pages, zeroed, page-aligned, from the OS and never scanned by
 * LeakSanitizer; NULL when the OS refuses or has no mmap. */
void *pmr_impl_os_map_records(size_t bytes);
/* Unmaps what pmr_impl_os_map_records(bytes) returned. */
void pmr_impl_os_unmap_records(void *p, size_t bytes);

/* ---- the machine --------------------------------------------------------- */

/* The smallest OS page the library assumes: what pmr_impl_os_page_size
 * says where it cannot ask, and the unit of bounds counted in OS pages. */
#define PMR_IMPL_OS_PAGE_MIN ((size_t)4096)

/* The OS page size (PMR_IMPL_OS_PAGE_MIN where it cannot be asked). */
size_t pmr_impl_os_page_size(void);

/* The cache line size assumed for alignment: what threads write often is
 * kept on lines of its own (no false sharing). */
#define PMR_IMPL_CACHE_LINE 64

/* Fills buf with n random bytes from the OS (getrandom, where there is
 * one), without allocating; false when it cannot (errno untouched). */
bool pmr_impl_os_random(void *buf, size_t n);

/* ---- the process ------------------------------------------------------- */

/* Registers fork() handlers (pthread_atfork): prepare runs in the parent
 * before fork(), parent after it, child in the child. False when the OS
 * refuses (out of memory). fork_guard.h is the library's one caller. */
bool pmr_impl_os_atfork(void (*prepare)(void), void (*parent)(void),
                        void (*child)(void));

/* A thread-exit key: a thread that sets a value in it has at_exit(value)
 * run when it exits (pthread keys). */
typedef pthread_key_t pmr_impl_os_exit_key;
/* Creates *k with at_exit; false when the OS refuses (out of keys). */
bool pmr_impl_os_exit_key_create(pmr_impl_os_exit_key *k,
                                 void (*at_exit)(void *));
/* Sets the calling thread's value of k; false when the OS refuses (out of
 * memory). */
bool pmr_impl_os_exit_key_set(pmr_impl_os_exit_key k, void *value);

/* The environment variable `name`, or NULL when unset (getenv: the string
 * belongs to the environment; nothing is allocated). */
const char *pmr_impl_os_getenv(const char *name);

/* The process's peak resident set in bytes, 0 when the OS cannot say. */
size_t pmr_impl_os_peak_rss(void);

/* Writes [buf, buf + len) to file descriptor fd, all of it unless the OS
 * refuses; allocates nothing. */
void pmr_impl_os_write(int fd, const void *buf, size_t len);

/* Lets other threads run (the thread is waiting for a lock). */
void pmr_impl_os_yield(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

/* ---- thread-local storage ---------------------------------------------- *
 *
 * The allocation fast paths of the thread cache and the synchronized pool
 * read one thread-local: the calling thread's heap in a per-thread table
 * (thread_slots.h); their deallocation reads none, and tells the calling
 * thread's own pages by comparing the thread pointer (pmr_impl_thread_ptr)
 * with the id the page's heap keeps of its owner (thread_heap.h). They use:
 *   - PMR_IMPL_THREAD_LOCAL for every thread-local object of the library:
 *     _Thread_local with the initial-exec model, so that a read is one load
 *     at a fixed offset from the thread pointer rather than a call to
 *     __tls_get_addr (what a shared library's thread-locals cost by
 *     default);
 *   - on x86-64 Linux (PMR_IMPL_TLS_FS), pmr_impl_tls_offset and
 *     pmr_impl_tls_load: an instance computes its entry's offset from
 *     the thread pointer once per instance (initial-exec objects sit at the
 *     same offset in every thread) and reads it with one %fs-relative load.
 *
 * What initial-exec costs: the objects (about 530 bytes) live in the static
 * TLS block that the C library sets up at program start. A shared library
 * that contains pmr-c and is linked at start-up is counted in; one loaded
 * later with dlopen must fit in glibc's reserve for such libraries (its size
 * is the glibc.rtld.optional_static_tls tunable, 512 bytes by default beyond
 * what the library's own needs leave): on glibc 2.36 with default tunables,
 * three separate copies of pmr-c dlopen'ed into one process load, a fourth
 * fails with "cannot allocate memory in static TLS block". Building with
 * PMR_PORTABLE_TLS defined (Bazel: --config=portable_tls) uses the default
 * TLS model and plain C reads instead: any number of dlopen'ed copies, a few
 * instructions more per operation. */
#if (defined(__GNUC__) || defined(__clang__)) && !defined(PMR_PORTABLE_TLS)
#define PMR_IMPL_TLS_MODEL __attribute__((tls_model("initial-exec")))
#else
#define PMR_IMPL_TLS_MODEL
#endif
/* A thread-local object of the library: `static PMR_IMPL_THREAD_LOCAL T x;`
 * (C only: C++ translation units declare none). */
#define PMR_IMPL_THREAD_LOCAL _Thread_local PMR_IMPL_TLS_MODEL

#if defined(__x86_64__) && defined(__LP64__) && defined(__linux__) && \
    (defined(__GNUC__) || defined(__clang__)) && !defined(PMR_PORTABLE_TLS)
#define PMR_IMPL_TLS_FS 1

/* The calling thread's thread pointer: a value no other live thread has,
 * and never 0. The x86-64 TLS ABI keeps it at %fs:0:
 * one load of a line the thread always has at hand. */
static inline uintptr_t pmr_impl_thread_ptr(void) {
  uintptr_t tp;
  __asm__("movq %%fs:0, %0" : "=r"(tp));
  return tp;
}

/* The offset of the calling thread's copy of an initial-exec thread-local
 * from the thread pointer: the same in every thread. */
static inline uintptr_t pmr_impl_tls_offset(const void *addr) {
  return (uintptr_t)addr - pmr_impl_thread_ptr();
}

/* The pointer stored at `offset` (from pmr_impl_tls_offset) in the calling
 * thread's TLS. The "memory" clobber: the object may change (another call
 * may store to it), so the compiler must neither reuse a result across code
 * that may store to it nor hoist the load; it costs no instruction. */
static inline void *pmr_impl_tls_load(uintptr_t offset) {
  void *v;
  __asm__("movq %%fs:(%1), %0" : "=r"(v) : "r"(offset) : "memory");
  return v;
}
#else
#define PMR_IMPL_TLS_FS 0
#endif

/* ---- the clock ---------------------------------------------------------- *
 *
 * The pools' clock for delays of milliseconds and more (purge, give-back,
 * the segment cache). C only (C11 atomics). pmr_impl_coarse_ns needs
 * POSIX's clock_gettime: it exists where the file defines _POSIX_C_SOURCE
 * before any include (the builds define it for every file). */
#ifndef __cplusplus
#include <stdatomic.h>
#include <time.h>

/* The time tests set (pmr_impl_clock_set_for_tests); 0: none. */
extern _Atomic uint64_t pmr_impl_clock_fixed;

/* A monotonic clock for delays of milliseconds and more, in ns: a coarse
 * clock (a few ms of resolution) where there is one, which reads in a few
 * ns where the precise one costs tens; slow paths read it often while a
 * give-back waits for its delay (inline: the one call is the OS's). */
#if defined(CLOCK_MONOTONIC)
static inline uint64_t pmr_impl_coarse_ns(void) {
  uint64_t fixed =
      atomic_load_explicit(&pmr_impl_clock_fixed, memory_order_relaxed);
  if (PMR_UNLIKELY(fixed != 0)) return fixed;
  struct timespec t;
#ifdef CLOCK_MONOTONIC_COARSE
  clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
#else
  clock_gettime(CLOCK_MONOTONIC, &t);
#endif
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}
#endif

/* For tests: from now on pmr_impl_coarse_ns returns ns (0: the clock
 * again), so that a test of the delays moves time itself instead of
 * sleeping and hoping the machine keeps up. Declared again in
 * tests/testkit/clock.h. */
void pmr_impl_clock_set_for_tests(uint64_t ns);
#endif /* !__cplusplus */

#endif /* PMR_IMPL_PLATFORM_H */
