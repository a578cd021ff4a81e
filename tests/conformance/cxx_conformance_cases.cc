// The resources //tests:cxx_conformance_test runs the contract against: std's
// resources seen from C through pmrc::from_std (cxx/pmr_cxx.hpp), each over
// the suite's counting upstream seen from C++ through pmrc::as_std.
#include "cxx/pmr_cxx.hpp"

#include <memory_resource>

#include "tests/testkit/conformance.h"

namespace pmrtest {
namespace {

// A std resource S over `upstream` (as_std), seen from C (from_std).
template <class S>
class FromStd : public ResourceUnderTest {
 public:
  explicit FromStd(pmr_mem_resource* upstream)
      : up_(pmrc::as_std(upstream)), s_(&up_), c_(pmrc::from_std(&s_)) {}
  pmr_mem_resource* get() override { return c_.get(); }

 private:
  pmrc::std_resource up_;
  S s_;
  pmrc::c_resource c_;
};

// A std resource with no upstream (new_delete, null), seen from C.
class FromStdBorrowed : public ResourceUnderTest {
 public:
  explicit FromStdBorrowed(std::pmr::memory_resource* s)
      : c_(pmrc::from_std(s)) {}
  pmr_mem_resource* get() override { return c_.get(); }

 private:
  pmrc::c_resource c_;
};

template <class S>
std::unique_ptr<ResourceUnderTest> Make(pmr_mem_resource* up) {
  return std::unique_ptr<ResourceUnderTest>(new FromStd<S>(up));
}

std::unique_ptr<ResourceUnderTest> Borrow(std::pmr::memory_resource* s) {
  return std::unique_ptr<ResourceUnderTest>(new FromStdBorrowed(s));
}

}  // namespace

std::vector<ConformanceCase> AllConformanceCases() {
  // name, factory, uses_upstream, can_allocate, thread_safe,
  // calls_upstream_at_init. ASan's and TSan's operator new abort on a huge
  // request they cannot serve (whatever allocator_may_return_null says)
  // instead of throwing std::bad_alloc, so new_delete_resource joins only
  // outside the sanitizers.
  return {
#if !defined(PMR_ASAN) && !defined(PMR_TSAN)
    {"std_new_delete",
     [](pmr_mem_resource*) { return Borrow(std::pmr::new_delete_resource()); },
     false, true, true},
#endif
        {"std_null",
         [](pmr_mem_resource*) {
           return Borrow(std::pmr::null_memory_resource());
         },
         false, false, true},
        {"std_monotonic", Make<std::pmr::monotonic_buffer_resource>, true, true,
         false},
        // std's pools run with uses_upstream = false: libstdc++ 12's pools
        // crash (SIGSEGV in unsynchronized_pool_resource::do_allocate) on the
        // allocation after their upstream threw, in a plain C++ program too,
        // so the upstream-failure checks would test libstdc++, not the
        // adapter. They still run over the counting upstream, and TearDown
        // checks that every block went back to it.
        {"std_unsynchronized_pool",
         Make<std::pmr::unsynchronized_pool_resource>,
         false,
         true,
         false,
         true},
        {"std_synchronized_pool",
         Make<std::pmr::synchronized_pool_resource>,
         false,
         true,
         true,
         true},
  };
}

}  // namespace pmrtest
