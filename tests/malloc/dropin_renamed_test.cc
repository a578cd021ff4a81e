// The drop-in's own code (malloc/dropin.c, dropin_cxx.c) under the
// sanitizers. AddressSanitizer and ThreadSanitizer replace malloc
// themselves, so the drop-in cannot be the process's malloc under them;
// here it is built with its entry points renamed (PMR_DROPIN_RENAME:
// pmr_dropin_test_malloc, ...) and called directly, so ASan/UBSan check
// every byte it touches of its tags, static arena and engine, and TSan its
// set-up and cross-thread frees, while the process's malloc stays theirs.
// //tests:dropin_test runs the library as a program meets it.
#include <errno.h>
#include <gtest/gtest.h>
#include <stdint.h>
#include <string.h>

#include <atomic>
#include <thread>
#include <vector>

#include "malloc/pmr_dropin.h"

extern "C" {
void* pmr_dropin_test_malloc(size_t);
void pmr_dropin_test_free(void*);
void* pmr_dropin_test_calloc(size_t, size_t);
void* pmr_dropin_test_realloc(void*, size_t);
void* pmr_dropin_test_reallocarray(void*, size_t, size_t);
int pmr_dropin_test_posix_memalign(void**, size_t, size_t);
void* pmr_dropin_test_aligned_alloc(size_t, size_t);
size_t pmr_dropin_test_malloc_usable_size(void*);
int pmr_dropin_test_malloc_trim(size_t);
void* pmr_dropin_test_new(size_t);
void* pmr_dropin_test_new_aligned(size_t, size_t);
void pmr_dropin_test_delete(void*);
void pmr_dropin_test_delete_sized_aligned(void*, size_t, size_t);
}

namespace {

void Fill(void* p, size_t n, unsigned seed) {
  unsigned char* b = static_cast<unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<unsigned char>(seed + i);
}

bool Filled(const void* p, size_t n, unsigned seed) {
  const unsigned char* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i)
    if (b[i] != static_cast<unsigned char>(seed + i)) return false;
  return true;
}

// Every size kind (pooled, tagged from the engine, mapped), every entry
// point, contents across realloc; the block's whole usable size is written.
TEST(DropInRenamed, EntryPointsTouchOnlyTheirBlocks) {
  const size_t sizes[] = {0,    1,     8,      24,     1000,   1025,   8192,
                          8193, 65536, 131072, 200000, 300000, 1 << 20};
  for (size_t n : sizes) {
    void* p = pmr_dropin_test_malloc(n);
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(pmr_dropin_owns(p));
    size_t usable = pmr_dropin_test_malloc_usable_size(p);
    EXPECT_GE(usable, n);
    Fill(p, usable, 1);
    for (size_t m : sizes) {
      void* q = pmr_dropin_test_malloc(n == 0 ? 1 : n);
      ASSERT_NE(q, nullptr);
      Fill(q, n, 2);
      void* r = pmr_dropin_test_realloc(q, m == 0 ? 1 : m);
      ASSERT_NE(r, nullptr);
      size_t kept = n < m ? n : m;
      EXPECT_TRUE(Filled(r, kept, 2)) << n << " -> " << m;
      Fill(r, pmr_dropin_test_malloc_usable_size(r), 3);
      pmr_dropin_test_free(r);
    }
    void* c = pmr_dropin_test_calloc(1, n);
    ASSERT_NE(c, nullptr);
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(static_cast<char*>(c)[i], 0);
    pmr_dropin_test_free(c);
    pmr_dropin_test_free(p);
  }
  for (size_t al = 8; al <= (size_t(1) << 20); al <<= 1) {
    void* p = nullptr;
    ASSERT_EQ(pmr_dropin_test_posix_memalign(&p, al, 100), 0);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % al, 0u);
    Fill(p, pmr_dropin_test_malloc_usable_size(p), 4);
    pmr_dropin_test_free(p);
    void* a = pmr_dropin_test_aligned_alloc(al, al * 3);
    ASSERT_NE(a, nullptr);
    Fill(a, al * 3, 5);
    pmr_dropin_test_free(a);
  }
  errno = 0;
  EXPECT_EQ(pmr_dropin_test_malloc(SIZE_MAX), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  void* keep = pmr_dropin_test_malloc(10);
  errno = 0;
  EXPECT_EQ(pmr_dropin_test_reallocarray(keep, SIZE_MAX / 2, 3), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  pmr_dropin_test_free(keep);
  void* o = pmr_dropin_test_new(40);
  pmr_dropin_test_delete(o);
  o = pmr_dropin_test_new_aligned(40, 256);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(o) % 256, 0u);
  pmr_dropin_test_delete_sized_aligned(o, 40, 256);
  pmr_dropin_test_malloc_trim(0);
}

// A block another thread frees goes back to its page (one page look-up,
// then onto the page's list of other threads' frees): the owner's own
// allocations of that size reach it once its page collects that list.
TEST(DropInRenamed, AnotherThreadsFreeReturnsTheBlockToItsOwner) {
  void* p = pmr_dropin_test_malloc(48);
  ASSERT_NE(p, nullptr);
  std::thread([p] { pmr_dropin_test_free(p); }).join();
  std::vector<void*> held;
  bool back = false;
  for (int i = 0; i < 100000 && !back; ++i) {
    void* q = pmr_dropin_test_malloc(48);
    ASSERT_NE(q, nullptr);
    back = q == p;
    held.push_back(q);
  }
  for (void* q : held) pmr_dropin_test_free(q);
  EXPECT_TRUE(back);
}

// Threads hand blocks to each other and free them; realloc on the thread
// that did not allocate; threads exit holding blocks others free later.
TEST(DropInRenamed, BlocksCrossThreads) {
  constexpr int kThreads = 4;
  constexpr int kSlots = 1024;
  constexpr int kSteps = 20000;
  std::vector<std::atomic<unsigned char*>> slots(kSlots);
  for (auto& s : slots) s.store(nullptr);
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([t, &slots] {
      unsigned x = 17u + static_cast<unsigned>(t) * 7919u;
      for (int i = 0; i < kSteps; ++i) {
        x = x * 1103515245u + 12345u;
        size_t n =
            (x >> 4) % 8 == 0 ? 1 + (x >> 9) % 200000 : 1 + (x >> 9) % 600;
        unsigned char* b =
            static_cast<unsigned char*>(pmr_dropin_test_malloc(n + 8));
        ASSERT_NE(b, nullptr);
        uint32_t len = static_cast<uint32_t>(n);
        memcpy(b, &len, 4);
        b[4] = static_cast<unsigned char>(x);
        b[n + 7] = static_cast<unsigned char>(x);
        unsigned char* old = slots[(x >> 12) % kSlots].exchange(b);
        if (old == nullptr) continue;
        uint32_t olen;
        memcpy(&olen, old, 4);
        ASSERT_EQ(old[4], old[olen + 7]);
        if ((x & 3) == 0) {
          old = static_cast<unsigned char*>(
              pmr_dropin_test_realloc(old, olen + 8 + (x >> 20)));
          ASSERT_NE(old, nullptr);
        }
        pmr_dropin_test_free(old);
      }
    });
  for (auto& th : ts) th.join();
  for (auto& s : slots) pmr_dropin_test_free(s.load());
  pmr_dropin_stats st = pmr_dropin_get_stats();
  EXPECT_STREQ(st.engine, "thread_cache");
}

}  // namespace
