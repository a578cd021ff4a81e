// The secure build (--config=secure, PMR_SECURE): what it adds to the
// release checks of pool_misuse_test (resources/README.md, "Misuse in
// release builds"), for each kind of pool over the malloc resource:
//   - a write into a free block is reported when the block is handed out;
//   - a free list's link overwritten with an address out of its page is
//     reported, and never followed;
//   - a page's blocks are handed out in a random order, not by address;
//   - a block freed twice is reported at its second free wherever it lies
//     on the lists (the default build: when it heads them).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "mem_resource/pmr_mem_resource.h"
#include "tests/testkit/pools.h"

namespace {

std::vector<std::string>* g_reports = nullptr;
void Capture(const char* message, void*) { g_reports->push_back(message); }

class PoolSecure : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    g_reports = &reports_;
    old_ = pmr_set_misuse_handler(Capture, nullptr);
    pool_.reset(new pmrtest::PoolOfKind(GetParam()));
  }
  void TearDown() override {
    pool_.reset();
    pmr_set_misuse_handler(old_, nullptr);
    g_reports = nullptr;
  }
  pmr_mem_resource* r() { return pool_->get(); }
  bool Reported(const char* what) {
    for (const std::string& s : reports_)
      if (s.find(what) != std::string::npos) return true;
    return false;
  }
  std::vector<std::string> reports_;
  pmr_misuse_handler old_ = nullptr;
  std::unique_ptr<pmrtest::PoolOfKind> pool_;
};

TEST_P(PoolSecure, AWriteAfterFreeIsReportedWhenTheBlockIsHandedOut) {
  for (size_t size : {(size_t)32, (size_t)256, (size_t)4096}) {
    reports_.clear();
    auto* p = static_cast<unsigned char*>(pmr_allocate(r(), size, 8));
    ASSERT_NE(p, nullptr);
    pmr_deallocate(r(), p, size, 8);
    p[size - 1] = 0x42;  // the bug: a write after free
    // The block comes back at the next allocation of its class (the
    // page's list is taken whole when the class's own runs out).
    std::vector<void*> got;
    for (int i = 0; i < 20000 && !Reported("written after"); ++i) {
      void* q = pmr_allocate(r(), size, 8);
      ASSERT_NE(q, nullptr);
      got.push_back(q);
    }
    EXPECT_TRUE(Reported("written after it was freed")) << size;
    for (void* q : got) pmr_deallocate(r(), q, size, 8);
  }
}

TEST_P(PoolSecure, ALinkOutOfItsPageIsReportedAndNeverFollowed) {
  const size_t size = 64;
  auto* a = static_cast<unsigned char*>(pmr_allocate(r(), size, 8));
  auto* b = static_cast<unsigned char*>(pmr_allocate(r(), size, 8));
  pmr_deallocate(r(), a, size, 8);
  pmr_deallocate(r(), b, size, 8);  // b's link: a (encoded)
  static unsigned char elsewhere[256];
  void* planted = elsewhere + 64;
  std::memcpy(b, &planted, sizeof planted);  // an overflow writes the link
  std::vector<void*> got;
  for (int i = 0; i < 20000 && !Reported("not a free block's"); ++i) {
    void* q = pmr_allocate(r(), size, 8);
    ASSERT_NE(q, nullptr);
    ASSERT_NE(q, planted);
    got.push_back(q);
  }
  EXPECT_TRUE(Reported("not a free block's"));
  for (int i = 0; i < 100; ++i) {  // the pool goes on, never at `planted`
    void* q = pmr_allocate(r(), size, 8);
    ASSERT_NE(q, planted);
    got.push_back(q);
  }
  for (void* q : got) pmr_deallocate(r(), q, size, 8);  // b, a: dropped
}

TEST_P(PoolSecure, ADoubleFreeIsReportedAtTheFreeWhereverTheBlockLies) {
  for (size_t size : {(size_t)8, (size_t)64, (size_t)4096}) {
    reports_.clear();
    std::vector<void*> v;
    for (int i = 0; i < 8; ++i) {
      void* q = pmr_allocate(r(), size, 8);
      ASSERT_NE(q, nullptr);
      std::memset(q, 0xdf, size);  // a block in use may hold the fill
      v.push_back(q);
    }
    // Blocks holding the free fill are not free: freed once, never reported.
    pmr_deallocate(r(), v[2], size, 8);
    pmr_deallocate(r(), v[3], size, 8);
    pmr_deallocate(r(), v[4], size, 8);
    EXPECT_TRUE(reports_.empty()) << reports_[0];
    // v[2] is neither the list's head nor the last block freed.
    pmr_deallocate(r(), v[2], size, 8);
    ASSERT_EQ(reports_.size(), 1u) << size;
    EXPECT_TRUE(Reported("a double free")) << reports_[0];
    // Ignored: the blocks come back once each.
    std::vector<void*> got;
    for (int i = 0; i < 3; ++i) got.push_back(pmr_allocate(r(), size, 8));
    std::sort(got.begin(), got.end());
    EXPECT_EQ(std::adjacent_find(got.begin(), got.end()), got.end()) << size;
    for (void* q : got) pmr_deallocate(r(), q, size, 8);
    for (int i : {0, 1, 5, 6, 7}) pmr_deallocate(r(), v[i], size, 8);
    EXPECT_EQ(reports_.size(), 1u) << size;
  }
}

TEST_P(PoolSecure, BlocksOfAFreshPageComeInARandomOrder) {
  std::vector<uintptr_t> v;
  for (int i = 0; i < 64; ++i)
    v.push_back(reinterpret_cast<uintptr_t>(pmr_allocate(r(), 48, 8)));
  EXPECT_FALSE(std::is_sorted(v.begin(), v.end()));
  std::vector<uintptr_t> s = v;
  std::sort(s.begin(), s.end());
  EXPECT_EQ(std::unique(s.begin(), s.end()), s.end());  // all distinct
  for (uintptr_t p : v) pmr_deallocate(r(), reinterpret_cast<void*>(p), 48, 8);
  EXPECT_TRUE(reports_.empty()) << reports_[0];
}

INSTANTIATE_TEST_SUITE_P(Kinds, PoolSecure, ::testing::Values(0, 1, 2));

}  // namespace
