// Fuzz target for the resources: the input is decoded into a sequence of
// allocate / deallocate / resize / mark-rewind-reset-release operations on one
// resource (chosen at build time by PMR_FUZZ_RESOURCE), checked against a
// model of the live blocks after every step:
//   - every block is aligned as asked and lies apart from every other live
//   block;
//   - every block keeps the bytes written into it until it is freed;
//   - after destroy, the counting upstream has every block back, each with the
//     size and alignment it was allocated with.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>

#include "resources/pmr_monotonic_buffer.h"
#include "resources/pmr_synchronized_pool.h"
#include "resources/pmr_thread_cache.h"
#include "resources/pmr_unsynchronized_pool.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/testkit/counting_resource.h"

namespace pmrfuzz {

void Fail(const char* what, size_t detail) {
  fprintf(stderr, "resource_fuzz: invariant broken: %s (%zu)\n", what, detail);
  abort();
}

namespace {

enum Kind { kMonotonic, kUnsyncPool, kSyncPool, kThreadCache };

struct Block {
  size_t bytes, alignment;
  uint8_t fill;
};

class Fuzz {
 public:
  explicit Fuzz(Kind kind) : kind_(kind) {
    pmr_pool_options small = {4, 512, 0};
    switch (kind_) {
      case kMonotonic:
        pmr_monotonic_buffer_init_with_buffer(&mono_, buffer_ + 1,
                                              sizeof buffer_ - 1, up_.get());
        r_ = &mono_.base;
        break;
      case kUnsyncPool:
        pmr_unsynchronized_pool_init(&unsync_, &small, up_.get());
        r_ = &unsync_.base;
        break;
      case kSyncPool:
        pmr_synchronized_pool_init(&sync_, &small, up_.get());
        r_ = &sync_.base;
        break;
      case kThreadCache: {
        pmr_thread_cache_options o = {};
        o.pool = small;
        pmr_thread_cache_init(&tc_, &o, up_.get());
        r_ = &tc_.base;
        break;
      }
    }
  }

  ~Fuzz() {
    switch (kind_) {
      case kMonotonic:
        pmr_monotonic_buffer_destroy(&mono_);
        break;
      case kUnsyncPool:
        pmr_unsynchronized_pool_destroy(&unsync_);
        break;
      case kSyncPool:
        pmr_synchronized_pool_destroy(&sync_);
        break;
      case kThreadCache:
        pmr_thread_cache_destroy(&tc_);
        break;
    }
    PMR_FUZZ_CHECK(up_.outstanding_blocks() == 0, up_.outstanding_blocks());
    PMR_FUZZ_CHECK(up_.mismatches() == 0, up_.mismatches());
  }

  void Run(Input& in) {
    while (!in.done()) {
      uint8_t op = in.byte();
      switch (op % 8) {
        case 0:
        case 1:
        case 2:
          Allocate(in);
          break;
        case 3:
        case 4:
          Free(in);
          break;
        case 5:
          Resize(in);
          break;
        case 6:
          DropAll(in);
          break;
        case 7:
          up_.fail_after(in.byte() % 4);
          Allocate(in);
          up_.never_fail();
          break;
      }
    }
    for (auto it = live_.begin(); it != live_.end();) it = FreeAt(it);
  }

 private:
  using Live = std::map<uintptr_t, Block>;

  void Allocate(Input& in) {
    size_t bytes = in.u16() >> (in.byte() % 8);  // mostly small, up to 64 KiB
    size_t alignment = size_t{1} << (in.byte() % 14);  // up to 8192
    auto* p = static_cast<uint8_t*>(pmr_allocate(r_, bytes, alignment));
    if (p == nullptr) return;  // allowed only when upstream failed
    uintptr_t a = reinterpret_cast<uintptr_t>(p);
    PMR_FUZZ_CHECK(a % alignment == 0, alignment);
    size_t extent = bytes ? bytes : 1;
    // Apart from every live block.
    auto next = live_.lower_bound(a);
    if (next != live_.end()) PMR_FUZZ_CHECK(a + extent <= next->first, bytes);
    if (next != live_.begin()) {
      auto prev = std::prev(next);
      size_t pe = prev->second.bytes ? prev->second.bytes : 1;
      PMR_FUZZ_CHECK(prev->first + pe <= a, prev->second.bytes);
    }
    uint8_t fill = static_cast<uint8_t>(counter_++);
    memset(p, fill, bytes);
    live_[a] = {bytes, alignment, fill};
  }

  Live::iterator Pick(Input& in) {
    if (live_.empty()) return live_.end();
    size_t i = in.u16() % live_.size();
    auto it = live_.begin();
    std::advance(it, static_cast<long>(i));
    return it;
  }

  void Verify(const Live::value_type& kv) {
    const auto* p = reinterpret_cast<const uint8_t*>(kv.first);
    for (size_t i = 0; i < kv.second.bytes; ++i)
      PMR_FUZZ_CHECK(p[i] == kv.second.fill, i);
  }

  Live::iterator FreeAt(Live::iterator it) {
    Verify(*it);
    pmr_deallocate(r_, reinterpret_cast<void*>(it->first), it->second.bytes,
                   it->second.alignment);
    return live_.erase(it);
  }

  void Free(Input& in) {
    auto it = Pick(in);
    if (it != live_.end()) FreeAt(it);
  }

  void Resize(Input& in) {
    auto it = Pick(in);
    size_t to = in.u16() >> (in.byte() % 8);
    if (it == live_.end()) return;
    Verify(*it);
    void* p = reinterpret_cast<void*>(it->first);
    if (!pmr_try_resize(r_, p, it->second.bytes, to, it->second.alignment))
      return;
    // The arena resizes its latest block; the pools and the thread cache
    // within a size class (the next block's start still lies beyond).
    auto next = std::next(it);
    if (next != live_.end())
      PMR_FUZZ_CHECK(it->first + (to ? to : 1) <= next->first, to);
    size_t keep = to < it->second.bytes ? to : it->second.bytes;
    memset(static_cast<uint8_t*>(p) + keep, it->second.fill, to - keep);
    it->second.bytes = to;
  }

  void DropAll(Input& in) {
    uint8_t how = in.byte() % 3;
    switch (kind_) {
      case kMonotonic:
        if (how == 0) {
          pmr_monotonic_buffer_release(&mono_);
        } else if (how == 1) {
          pmr_monotonic_buffer_reset(&mono_);
        } else {
          // mark, allocate a few, rewind: the earlier blocks must survive.
          pmr_monotonic_marker mk = pmr_monotonic_buffer_mark(&mono_);
          Live before = live_;
          for (int i = 0; i < 1 + in.byte() % 8; ++i) Allocate(in);
          PMR_FUZZ_CHECK(pmr_monotonic_buffer_rewind(&mono_, mk), 0);
          live_ = before;
          for (const auto& kv : live_) Verify(kv);
          return;
        }
        break;
      case kUnsyncPool:
        pmr_unsynchronized_pool_release(&unsync_);
        break;
      case kSyncPool:
        pmr_synchronized_pool_release(&sync_);
        break;
      case kThreadCache:
        pmr_thread_cache_release(&tc_);
        break;
    }
    live_.clear();
    // Everything went back to upstream (reset is the one that keeps chunks).
    PMR_FUZZ_CHECK(
        up_.outstanding_blocks() == 0 || (kind_ == kMonotonic && how == 1),
        up_.outstanding_blocks());
  }

  Kind kind_;
  pmrtest::CountingResource up_;
  pmr_mem_resource* r_ = nullptr;
  alignas(16) unsigned char buffer_[4096];
  pmr_monotonic_buffer mono_;
  pmr_unsynchronized_pool unsync_;
  pmr_synchronized_pool sync_;
  pmr_thread_cache tc_;
  Live live_;
  unsigned counter_ = 0;
};

}  // namespace
}  // namespace pmrfuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  pmrfuzz::Input in(data, size);
  pmrfuzz::Fuzz f(static_cast<pmrfuzz::Kind>(PMR_FUZZ_RESOURCE));
  f.Run(in);
  return 0;
}
