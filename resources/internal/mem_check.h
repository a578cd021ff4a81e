/* PRIVATE: tells AddressSanitizer or Valgrind's memcheck which bytes a
 * resource has handed out. A block freed into a pool, or rewound memory of a
 * monotonic buffer, is still mapped memory that the resource owns, so neither
 * tool would see a use after free on its own. Here:
 *   - built with ASan (detected automatically): free blocks, unused chunk
 *     space and rewound memory are poisoned, and unpoisoned when handed out;
 *   - built with -DPMR_VALGRIND (`bazel build --config=valgrind`): the same
 *     ranges are marked no-access / undefined with memcheck client requests
 *     (cheap no-ops when the program does not run under valgrind);
 *   - otherwise every macro here is empty and costs nothing.
 * Free blocks hold the free-list link in their first word; resources read
 * and write it only through pmr_impl_link_peek / pmr_impl_link_set, which
 * open the word for that one access. */
#ifndef PMR_IMPL_MEM_CHECK_H
#define PMR_IMPL_MEM_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mem_resource/pmr_mem_resource.h"

#if defined(PMR_IMPL_ASAN)
#include <sanitizer/asan_interface.h>
#define PMR_IMPL_MEM_CHECKED 1
#define PMR_IMPL_NOACCESS(p, n) __asan_poison_memory_region((p), (n))
#define PMR_IMPL_UNDEFINED(p, n) __asan_unpoison_memory_region((p), (n))
#define PMR_IMPL_DEFINED(p, n) __asan_unpoison_memory_region((p), (n))
#elif defined(PMR_VALGRIND)
#include <valgrind/memcheck.h>
#define PMR_IMPL_MEM_CHECKED 1
#define PMR_IMPL_NOACCESS(p, n) ((void)VALGRIND_MAKE_MEM_NOACCESS((p), (n)))
#define PMR_IMPL_UNDEFINED(p, n) ((void)VALGRIND_MAKE_MEM_UNDEFINED((p), (n)))
#define PMR_IMPL_DEFINED(p, n) ((void)VALGRIND_MAKE_MEM_DEFINED((p), (n)))
#else
#define PMR_IMPL_MEM_CHECKED 0
#define PMR_IMPL_NOACCESS(p, n) ((void)(p), (void)(n))
#define PMR_IMPL_UNDEFINED(p, n) ((void)(p), (void)(n))
#define PMR_IMPL_DEFINED(p, n) ((void)(p), (void)(n))
#endif

/* Word w of free block p, opened for that one access. */
static inline void *pmr_impl_word_get(void *p, size_t w) {
  void **at = (void **)p + w;
  PMR_IMPL_DEFINED(at, sizeof *at);
  void *v = *at;
  PMR_IMPL_NOACCESS(at, sizeof *at);
  return v;
}

static inline void pmr_impl_word_set(void *p, size_t w, void *v) {
  void **at = (void **)p + w;
  PMR_IMPL_UNDEFINED(at, sizeof *at);
  *at = v;
  PMR_IMPL_NOACCESS(at, sizeof *at);
}

/* Word w of block p, free or in use, leaving its state to the checker as
 * it was (the misuse checks read a block's second word before they know
 * which it is). Under memcheck a read of a free block's word is reported:
 * that is a double free, which memcheck then reports as well. */
static inline void *pmr_impl_word_peek(void *p, size_t w) {
  void **at = (void **)p + w;
#if defined(PMR_IMPL_ASAN)
  bool closed = __asan_address_is_poisoned(at);
  PMR_IMPL_DEFINED(at, sizeof *at);
  void *v = *at;
  if (closed) PMR_IMPL_NOACCESS(at, sizeof *at);
  return v;
#elif defined(PMR_VALGRIND)
  void *v = *at; /* a word the program never wrote is no error here */
  (void)VALGRIND_MAKE_MEM_DEFINED(&v, sizeof v);
  return v;
#else
  return *at;
#endif
}

/* Every link is kept encoded with the per-process secret of page_heap.h
 * (random, odd), so that a word the program wrote into a free block, or
 * left in a block it was handed, decodes to an address out of the block's
 * page: the pool reports it and never follows it (page_heap.h, "misuse").
 * The secure build (PMR_SECURE, `--config=secure`) mixes in the block's
 * own address too, so that a write after free cannot plant a pointer even
 * knowing one encoded link. */
extern uintptr_t pmr_impl_free_mark_value;
#ifdef PMR_SECURE
#define PMR_IMPL_LINK_KEY(p) \
  (pmr_impl_free_mark_value ^ ((uintptr_t)(p) * (uintptr_t)0x9e3779b97f4a7c15u))
#else
#define PMR_IMPL_LINK_KEY(p) ((void)(p), pmr_impl_free_mark_value)
#endif

/* The free-list link in the first word of free block p, decoded. p may be
 * in use after all (a list that holds a block twice): under ASan its state
 * is left as it was. Memcheck has no silent query of a word's state: there
 * the word is opened and closed as a free block's (a block on a list twice
 * is misuse, which memcheck then reports as well). */
static inline void *pmr_impl_link_peek(void *p) {
#if defined(PMR_VALGRIND) && !defined(PMR_IMPL_ASAN)
  void **at = (void **)p;
  PMR_IMPL_DEFINED(at, sizeof *at);
  void *v = *at;
  PMR_IMPL_NOACCESS(at, sizeof *at);
#else
  void *v = pmr_impl_word_peek(p, 0);
#endif
  return (void *)((uintptr_t)v ^ PMR_IMPL_LINK_KEY(p));
}

static inline void pmr_impl_link_set(void *p, void *next) {
  pmr_impl_word_set(p, 0, (void *)((uintptr_t)next ^ PMR_IMPL_LINK_KEY(p)));
}

#endif /* PMR_IMPL_MEM_CHECK_H */
