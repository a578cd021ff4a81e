// Test kit: the pool resources behind one interface, for tests that run
// the same checks on each.
#ifndef PMR_TESTS_TESTKIT_POOLS_H
#define PMR_TESTS_TESTKIT_POOLS_H

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "resources/pmr_synchronized_pool.h"
#include "resources/pmr_thread_cache.h"
#include "resources/pmr_unsynchronized_pool.h"

namespace pmrtest {

// The gaps (start, size) that blocks of `block` bytes at offsets `offs`
// (sorted here) leave in a page of `page` bytes, in address order: where a
// page's descriptors are, for tests of its layout.
inline std::vector<std::pair<size_t, size_t>> GapsIn(std::vector<size_t>& offs,
                                                     size_t block,
                                                     size_t page) {
  std::sort(offs.begin(), offs.end());
  std::vector<std::pair<size_t, size_t>> gaps;
  size_t pos = 0;
  for (size_t o : offs) {
    if (o != pos) gaps.emplace_back(pos, o - pos);
    pos = o + block;
  }
  if (pos != page) gaps.emplace_back(pos, page - pos);
  return gaps;
}

// Bytes kept between a page's table of descriptors and the blocks on
// either side: none by default, 16 in secure builds (PMR_IMPL_TABLE_GAP,
// resources/internal/page_heap.h).
#ifdef PMR_SECURE
constexpr size_t kTableGap = 16;
#else
constexpr size_t kTableGap = 0;
#endif

// The gap (start, size) that blocks of `block` bytes, at multiples of it
// from the page's start, leave around a table of `len` bytes at offset t.
inline std::pair<size_t, size_t> TableHole(size_t t, size_t len, size_t block) {
  size_t lo = t >= kTableGap ? (t - kTableGap) / block * block : 0;
  size_t hi = (t + len + kTableGap + block - 1) / block * block;
  return {lo, hi - lo};
}

class Pool {
 public:
  virtual ~Pool() = default;
  virtual pmr_mem_resource* get() = 0;
  virtual void release() = 0;
  virtual pmr_pool_options options() = 0;
  virtual pmr_mem_resource* upstream() = 0;
  virtual size_t trim() = 0;
  virtual pmr_pool_stats stats() = 0;
};

class UnsyncPool : public Pool {
 public:
  UnsyncPool(const pmr_pool_options* o, pmr_mem_resource* up) {
    pmr_unsynchronized_pool_init(&p_, o, up);
  }
  ~UnsyncPool() override { pmr_unsynchronized_pool_destroy(&p_); }
  pmr_mem_resource* get() override { return &p_.base; }
  void release() override { pmr_unsynchronized_pool_release(&p_); }
  pmr_pool_options options() override {
    return pmr_unsynchronized_pool_get_options(&p_);
  }
  pmr_mem_resource* upstream() override {
    return pmr_unsynchronized_pool_upstream(&p_);
  }
  size_t trim() override { return pmr_unsynchronized_pool_trim(&p_); }
  pmr_pool_stats stats() override {
    return pmr_unsynchronized_pool_get_stats(&p_);
  }

 private:
  pmr_unsynchronized_pool p_;
};

class SyncPool : public Pool {
 public:
  SyncPool(const pmr_pool_options* o, pmr_mem_resource* up) {
    pmr_synchronized_pool_init(&p_, o, up);
  }
  ~SyncPool() override { pmr_synchronized_pool_destroy(&p_); }
  pmr_mem_resource* get() override { return &p_.base; }
  void release() override { pmr_synchronized_pool_release(&p_); }
  pmr_pool_options options() override {
    return pmr_synchronized_pool_get_options(&p_);
  }
  pmr_mem_resource* upstream() override {
    return pmr_synchronized_pool_upstream(&p_);
  }
  size_t trim() override { return pmr_synchronized_pool_trim(&p_); }
  pmr_pool_stats stats() override {
    return pmr_synchronized_pool_get_stats(&p_);
  }

 private:
  pmr_synchronized_pool p_;
};

// One of the three resources with pages, by kind (0 unsynchronized pool,
// 1 synchronized pool, 2 thread cache), for tests parameterised on the kind
// that need only the resource.
class PoolOfKind {
 public:
  explicit PoolOfKind(int kind, const pmr_pool_options* opts = nullptr,
                      pmr_mem_resource* up = nullptr)
      : kind_(kind) {
    switch (kind) {
      case 0:
        EXPECT_TRUE(pmr_unsynchronized_pool_init(&unsync_, opts, up));
        break;
      case 1:
        EXPECT_TRUE(pmr_synchronized_pool_init(&sync_, opts, up));
        break;
      default: {
        pmr_thread_cache_options o = {};
        if (opts != nullptr) o.pool = *opts;
        EXPECT_TRUE(pmr_thread_cache_init(&tc_, &o, up));
      }
    }
  }
  PoolOfKind(const PoolOfKind&) = delete;
  PoolOfKind& operator=(const PoolOfKind&) = delete;
  ~PoolOfKind() {
    switch (kind_) {
      case 0:
        pmr_unsynchronized_pool_destroy(&unsync_);
        break;
      case 1:
        pmr_synchronized_pool_destroy(&sync_);
        break;
      default:
        pmr_thread_cache_destroy(&tc_);
    }
  }
  pmr_mem_resource* get() {
    return kind_ == 0 ? &unsync_.base : kind_ == 1 ? &sync_.base : &tc_.base;
  }
  size_t trim() {
    return kind_ == 0   ? pmr_unsynchronized_pool_trim(&unsync_)
           : kind_ == 1 ? pmr_synchronized_pool_trim(&sync_)
                        : pmr_thread_cache_trim(&tc_);
  }

 private:
  int kind_;
  pmr_unsynchronized_pool unsync_;
  pmr_synchronized_pool sync_;
  pmr_thread_cache tc_;
};

// The test-name suffix of a PoolOfKind kind.
inline std::string PoolKindName(const ::testing::TestParamInfo<int>& info) {
  static const char* const kNames[] = {"unsynchronized_pool",
                                       "synchronized_pool", "thread_cache"};
  return kNames[info.param];
}

}  // namespace pmrtest

#endif  // PMR_TESTS_TESTKIT_POOLS_H
