// The pools' clock for their delays (resources/internal/platform.h), moved by a
// test: a test of "after a second" advances it instead of sleeping, so nothing
// depends on how fast the machine runs. One FakeClock at a time; it gives the
// real clock back when it goes.
#ifndef PMR_TESTS_TESTKIT_CLOCK_H
#define PMR_TESTS_TESTKIT_CLOCK_H

#include <cstdint>

extern "C" void pmr_impl_clock_set_for_tests(uint64_t ns);

namespace pmrtest {

class FakeClock {
 public:
  FakeClock() { pmr_impl_clock_set_for_tests(now_); }
  ~FakeClock() { pmr_impl_clock_set_for_tests(0); }
  FakeClock(const FakeClock&) = delete;
  FakeClock& operator=(const FakeClock&) = delete;
  void AdvanceMs(uint64_t ms) {
    now_ += ms * 1000000u;
    pmr_impl_clock_set_for_tests(now_);
  }

 private:
  uint64_t now_ = uint64_t{1000} * 1000000000u;  // any time but 0
};

}  // namespace pmrtest

#endif  // PMR_TESTS_TESTKIT_CLOCK_H
