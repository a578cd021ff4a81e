// The resources the conformance suite runs against: one line each.
#include "mem_resource/mem_resource.h"
#include "tests/testkit/conformance.h"

namespace pmrtest {

static std::unique_ptr<ResourceUnderTest> Borrow(pmr_mem_resource* r) {
  return std::unique_ptr<ResourceUnderTest>(new BorrowedResource(r));
}

std::vector<ConformanceCase> AllConformanceCases() {
  return {
      // name, factory, uses_upstream, can_allocate, thread_safe
      {"malloc", [](pmr_mem_resource*) { return Borrow(pmr_malloc_resource()); }, false, true, true},
      {"null", [](pmr_mem_resource*) { return Borrow(pmr_null_resource()); }, false, false, true},
  };
}

}  // namespace pmrtest
