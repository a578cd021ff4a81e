// Test kit: small hand-made resources for container tests.
#ifndef PMR_TESTS_TESTKIT_TEST_RESOURCES_H
#define PMR_TESTS_TESTKIT_TEST_RESOURCES_H

#include <cstddef>

#include "mem_resource/pmr_mem_resource.h"
#include "tests/testkit/counting_resource.h"

namespace pmrtest {

// A bump resource over a fixed buffer that can resize its most recent block
// in place (as a monotonic buffer does). Counts calls.
struct BumpResource {
  pmr_mem_resource base;
  alignas(64) unsigned char buf[1 << 16];
  size_t used = 0;
  unsigned char* last = nullptr;
  size_t last_bytes = 0;
  int allocates = 0, deallocates = 0, resizes = 0, resize_successes = 0;
  static void* Allocate(pmr_mem_resource* self, size_t bytes, size_t align) {
    BumpResource* b = reinterpret_cast<BumpResource*>(self);
    ++b->allocates;
    size_t start = (b->used + align - 1) & ~(align - 1);
    if (start + bytes > sizeof b->buf) return nullptr;
    b->used = start + bytes;
    b->last = b->buf + start;
    b->last_bytes = bytes;
    return b->last;
  }
  static void Deallocate(pmr_mem_resource* self, void*, size_t, size_t) {
    ++reinterpret_cast<BumpResource*>(self)->deallocates;
  }
  static bool TryResize(pmr_mem_resource* self, void* p, size_t old_bytes,
                        size_t new_bytes, size_t) {
    BumpResource* b = reinterpret_cast<BumpResource*>(self);
    ++b->resizes;
    if (p != b->last || old_bytes != b->last_bytes) return false;
    size_t start = static_cast<size_t>(b->last - b->buf);
    if (start + new_bytes > sizeof b->buf) return false;
    b->used = start + new_bytes;
    b->last_bytes = new_bytes;
    ++b->resize_successes;
    return true;
  }
  BumpResource() {
    static const pmr_mem_resource_ops ops = {
        Allocate, Deallocate, nullptr, TryResize, nullptr, nullptr, nullptr};
    base.ops = &ops;
  }
};

// A resource that answers "equal" to every other resource of its kind.
struct FriendlyResource {
  pmr_mem_resource base;
  CountingResource* up;
  static void* Allocate(pmr_mem_resource* self, size_t bytes, size_t align) {
    return pmr_allocate(reinterpret_cast<FriendlyResource*>(self)->up->get(),
                        bytes, align);
  }
  static void Deallocate(pmr_mem_resource* self, void* p, size_t bytes,
                         size_t align) {
    pmr_deallocate(reinterpret_cast<FriendlyResource*>(self)->up->get(), p,
                   bytes, align);
  }
  static bool IsEqual(const pmr_mem_resource* self,
                      const pmr_mem_resource* other) {
    return other->ops == self->ops;
  }
  explicit FriendlyResource(CountingResource* u) : up(u) {
    static const pmr_mem_resource_ops ops = {
        Allocate, Deallocate, IsEqual, nullptr, nullptr, nullptr, nullptr};
    base.ops = &ops;
  }
};

}  // namespace pmrtest

#endif  // PMR_TESTS_TESTKIT_TEST_RESOURCES_H
