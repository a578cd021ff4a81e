// The resources the container fuzz targets put their containers on, and the
// failure injection around each operation: two counting resources, and a
// monotonic buffer whose buffer starts at an odd address, over a third
// counting resource. Destroying them checks that nothing is outstanding and
// no deallocation mismatched.
#ifndef PMR_TESTS_FUZZ_FUZZ_RESOURCES_H
#define PMR_TESTS_FUZZ_FUZZ_RESOURCES_H

#include <cstddef>

#include "mem_resource/pmr_mem_resource.h"
#include "resources/pmr_monotonic_buffer.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/testkit/counting_resource.h"

namespace pmrfuzz {

// Which resource a container lives on (a byte of input % kNumRes).
enum Res { kCountA, kCountB, kMono, kNumRes };

// kBufferBytes: the monotonic buffer's initial buffer (one byte of it is
// skipped, so allocations start unaligned).
template <size_t kBufferBytes>
class FuzzResources {
 public:
  FuzzResources() {
    pmr_monotonic_buffer_init_with_buffer(&mono_, buffer_ + 1,
                                          sizeof buffer_ - 1, up.get());
  }
  ~FuzzResources() {
    pmr_monotonic_buffer_destroy(&mono_);
    for (pmrtest::CountingResource* c : {&a, &b, &up}) {
      PMR_FUZZ_CHECK(c->outstanding_blocks() == 0, c->outstanding_blocks());
      PMR_FUZZ_CHECK(c->mismatches() == 0, c->mismatches());
    }
  }
  FuzzResources(const FuzzResources&) = delete;
  FuzzResources& operator=(const FuzzResources&) = delete;

  pmr_mem_resource* get(int res) {
    switch (res) {
      case kCountA:
        return a.get();
      case kCountB:
        return b.get();
      default:
        return &mono_.base;
    }
  }

  // Before an operation: when inject, a byte of input k (0..3) makes every
  // resource fail after k more allocations; remembers the counts.
  void Begin(bool inject, Input& in) {
    if (inject) {
      size_t k = in.byte() % 4;
      for (pmrtest::CountingResource* c : {&a, &b, &up}) c->fail_after(k);
    }
    failed_before_ = Failed();
    attempts_before_ = Attempts();
  }
  // After the operation: nothing fails any more.
  void End() {
    for (pmrtest::CountingResource* c : {&a, &b, &up}) c->never_fail();
  }

  size_t Failed() const {
    return a.failed_allocations() + b.failed_allocations() +
           up.failed_allocations();
  }
  size_t Attempts() const {
    return a.allocations() + b.allocations() + up.allocations() + Failed();
  }
  // Since Begin: an allocation failed / none was attempted.
  bool FailedSinceBegin() const { return Failed() > failed_before_; }
  bool NoAllocationSinceBegin() const { return Attempts() == attempts_before_; }

  // A result that must be false (invalid) or may be false only when an
  // allocation failed during the operation.
  bool Expect(bool ok, bool invalid) const {
    if (invalid) {
      PMR_FUZZ_CHECK(!ok, 0);
      return false;
    }
    if (!ok) PMR_FUZZ_CHECK(FailedSinceBegin(), 0);
    return ok;
  }

  pmrtest::CountingResource a, b, up;  // up is the monotonic buffer's upstream

 private:
  alignas(64) unsigned char buffer_[kBufferBytes];
  pmr_monotonic_buffer mono_;
  size_t failed_before_ = 0, attempts_before_ = 0;
};

}  // namespace pmrfuzz

#endif  // PMR_TESTS_FUZZ_FUZZ_RESOURCES_H
