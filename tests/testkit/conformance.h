// Test kit: the conformance suite every resource joins.
//
// A resource joins by adding ONE line to AllConformanceCases() in
// tests/conformance/conformance_cases.cc: a name, flags, and a factory that
// builds the resource over a given (counting) upstream. The suite in
// tests/conformance/conformance_test.cc then checks the whole resource contract
// of mem_resource.h against it: alignment grid, zero-size, bad input, NULL
// deallocation, equality, upstream failure, and that destroying the resource
// gives every byte back to its upstream.
#ifndef PMR_TESTS_TESTKIT_CONFORMANCE_H
#define PMR_TESTS_TESTKIT_CONFORMANCE_H

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "mem_resource/pmr_mem_resource.h"

namespace pmrtest {

// A live resource under test. Destroying it destroys the resource.
class ResourceUnderTest {
 public:
  virtual ~ResourceUnderTest() = default;
  virtual pmr_mem_resource* get() = 0;
};

// Wraps an init/destroy pair of a C resource struct T.
template <typename T>
class OwnedResource : public ResourceUnderTest {
 public:
  template <typename Init>
  OwnedResource(Init init, void (*destroy)(T*)) : destroy_(destroy) {
    init(&r_);
  }
  ~OwnedResource() override { destroy_(&r_); }
  pmr_mem_resource* get() override {
    return reinterpret_cast<pmr_mem_resource*>(&r_);
  }

 private:
  T r_;
  void (*destroy_)(T*);
};

// A resource that is not owned (a process-wide singleton).
class BorrowedResource : public ResourceUnderTest {
 public:
  explicit BorrowedResource(pmr_mem_resource* r) : r_(r) {}
  pmr_mem_resource* get() override { return r_; }

 private:
  pmr_mem_resource* r_;
};

struct ConformanceCase {
  std::string name;
  // Builds the resource over `upstream` (resources without one ignore it).
  std::function<std::unique_ptr<ResourceUnderTest>(pmr_mem_resource* upstream)>
      make;
  bool uses_upstream = true;  // gets its memory from `upstream`
  bool can_allocate = true;   // false only for the null resource
  bool thread_safe = false;   // may be called from many threads at once
  // Asks upstream for memory when built (std's pools do; pmr-c's resources
  // never do): the checks of "no upstream call" count from after it.
  bool calls_upstream_at_init = false;
};

std::vector<ConformanceCase> AllConformanceCases();

inline std::ostream& operator<<(std::ostream& os, const ConformanceCase& c) {
  return os << c.name;
}

}  // namespace pmrtest

#endif  // PMR_TESTS_TESTKIT_CONFORMANCE_H
