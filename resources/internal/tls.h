/* PRIVATE: thread-local storage, the library's one platform layer.
 *
 * The allocation fast paths of the thread cache and the synchronized pool
 * read one thread-local: the calling thread's heap in a per-thread table
 * (thread_slots.h); their deallocation reads none, and tells the calling
 * thread's own pages by comparing the thread pointer (pmr_impl_thread_ptr)
 * with the id the page's heap keeps of its owner (thread_heap.h). They use:
 *   - PMR_IMPL_TLS_MODEL on their _Thread_local objects: the initial-exec
 *     model, so that a read is one load at a fixed offset from the thread
 *     pointer rather than a call to __tls_get_addr (what a shared library's
 *     thread-locals cost by default);
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
#ifndef PMR_IMPL_TLS_H
#define PMR_IMPL_TLS_H

#include <stdint.h>

#if (defined(__GNUC__) || defined(__clang__)) && !defined(PMR_PORTABLE_TLS)
#define PMR_IMPL_TLS_MODEL __attribute__((tls_model("initial-exec")))
#else
#define PMR_IMPL_TLS_MODEL
#endif

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

#endif /* PMR_IMPL_TLS_H */
