// Test kit: a counting upstream resource.
//
// Wraps another resource (the malloc resource by default), records every call
// with its size and alignment, tracks outstanding blocks and bytes, notices
// deallocations that do not match their allocation, and can be told to fail.
// Thread-safe (one mutex), so thread-safe resources can sit on top of it.
#ifndef PMR_TESTS_TESTKIT_COUNTING_RESOURCE_H
#define PMR_TESTS_TESTKIT_COUNTING_RESOURCE_H

#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "mem_resource/pmr_mem_resource.h"

namespace pmrtest {

struct Call {
  enum Kind { kAllocate, kDeallocate } kind;
  void* p;  // result of allocate (may be NULL) or pointer deallocated
  size_t bytes;
  size_t alignment;
};

class CountingResource {
 public:
  explicit CountingResource(pmr_mem_resource* upstream = pmr_malloc_resource());
  CountingResource(const CountingResource&) = delete;
  CountingResource& operator=(const CountingResource&) = delete;
  // Gives back to upstream whatever is still outstanding (tests assert on
  // outstanding_blocks() before that if they care).
  ~CountingResource();

  // The abstract resource to hand to the code under test.
  pmr_mem_resource* get() { return &hook_.base; }

  size_t allocations() const;         // successful allocate calls
  size_t failed_allocations() const;  // allocate calls that returned NULL
  size_t deallocations() const;       // deallocate calls
  size_t outstanding_blocks() const;  // allocated and not yet deallocated
  size_t outstanding_bytes() const;
  size_t max_outstanding_bytes() const;
  // Deallocations of an unknown pointer, or with a size or alignment other
  // than the allocation's. Always 0 for correct code.
  size_t mismatches() const;
  std::string last_mismatch() const;
  std::vector<Call> calls() const;  // every call, in order
  void clear_calls();

  // Failure injection. The next n allocations succeed, then all fail.
  void fail_after(size_t n);
  void fail_always() { fail_after(0); }
  void never_fail();

 private:
  struct Hook {
    pmr_mem_resource base;
    CountingResource* owner;
  };
  struct Block {
    size_t bytes;
    size_t alignment;
  };
  static void* Allocate(pmr_mem_resource* self, size_t bytes, size_t alignment);
  static void Deallocate(pmr_mem_resource* self, void* p, size_t bytes,
                         size_t alignment);
  static const pmr_mem_resource_ops kOps;

  Hook hook_;
  pmr_mem_resource* upstream_;
  mutable std::mutex mu_;
  std::map<void*, Block> live_;
  std::vector<Call> calls_;
  size_t allocations_ = 0, failed_ = 0, deallocations_ = 0;
  size_t bytes_ = 0, max_bytes_ = 0, mismatches_ = 0;
  std::string last_mismatch_;
  bool failing_armed_ = false;
  size_t successes_left_ = 0;
};

}  // namespace pmrtest

#endif  // PMR_TESTS_TESTKIT_COUNTING_RESOURCE_H
