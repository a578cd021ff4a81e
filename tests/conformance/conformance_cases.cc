// The resources the conformance suite runs against: one line each.
#include "mem_resource/pmr_mem_resource.h"
#include "resources/pmr_debug_resource.h"
#include "resources/pmr_monotonic_buffer.h"
#include "resources/pmr_statistics.h"
#include "resources/pmr_synchronized_pool.h"
#include "resources/pmr_thread_cache.h"
#include "resources/pmr_unsynchronized_pool.h"
#include "tests/testkit/conformance.h"

namespace pmrtest {

static std::unique_ptr<ResourceUnderTest> Borrow(pmr_mem_resource* r) {
  return std::unique_ptr<ResourceUnderTest>(new BorrowedResource(r));
}

// Builds a C resource T with init(T*, upstream) and destroy(T*).
template <typename T, typename Init>
static std::unique_ptr<ResourceUnderTest> Own(Init init, void (*destroy)(T*)) {
  return std::unique_ptr<ResourceUnderTest>(
      new OwnedResource<T>(init, destroy));
}

static pmr_pool_options SmallPool() {
  pmr_pool_options o = {16, 256, 0};  // tiny chunks, many oversize requests
  return o;
}

alignas(64) static unsigned char mono_buffer[3000];

std::vector<ConformanceCase> AllConformanceCases() {
  return {
      // name, factory, uses_upstream, can_allocate, thread_safe
      {"malloc",
       [](pmr_mem_resource*) { return Borrow(pmr_malloc_resource()); }, false,
       true, true},
      {"null", [](pmr_mem_resource*) { return Borrow(pmr_null_resource()); },
       false, false, true},
      {"monotonic",
       [](pmr_mem_resource* up) {
         return Own<pmr_monotonic_buffer>(
             [up](pmr_monotonic_buffer* m) {
               pmr_monotonic_buffer_init(m, up);
             },
             pmr_monotonic_buffer_destroy);
       },
       true, true, false},
      {"monotonic_with_buffer",
       [](pmr_mem_resource* up) {
         return Own<pmr_monotonic_buffer>(
             [up](pmr_monotonic_buffer* m) {
               pmr_monotonic_buffer_init_with_buffer(
                   m, mono_buffer + 3, sizeof mono_buffer - 3, up);
             },
             pmr_monotonic_buffer_destroy);
       },
       true, true, false},
      {"unsynchronized_pool",
       [](pmr_mem_resource* up) {
         return Own<pmr_unsynchronized_pool>(
             [up](pmr_unsynchronized_pool* p) {
               pmr_unsynchronized_pool_init(p, nullptr, up);
             },
             pmr_unsynchronized_pool_destroy);
       },
       true, true, false},
      {"unsynchronized_pool_small",
       [](pmr_mem_resource* up) {
         return Own<pmr_unsynchronized_pool>(
             [up](pmr_unsynchronized_pool* p) {
               pmr_pool_options o = SmallPool();
               pmr_unsynchronized_pool_init(p, &o, up);
             },
             pmr_unsynchronized_pool_destroy);
       },
       true, true, false},
      {"synchronized_pool",
       [](pmr_mem_resource* up) {
         return Own<pmr_synchronized_pool>(
             [up](pmr_synchronized_pool* p) {
               pmr_synchronized_pool_init(p, nullptr, up);
             },
             pmr_synchronized_pool_destroy);
       },
       true, true, true},
      {"synchronized_pool_small",
       [](pmr_mem_resource* up) {
         return Own<pmr_synchronized_pool>(
             [up](pmr_synchronized_pool* p) {
               pmr_pool_options o = SmallPool();
               pmr_synchronized_pool_init(p, &o, up);
             },
             pmr_synchronized_pool_destroy);
       },
       true, true, true},
      {"thread_cache",
       [](pmr_mem_resource* up) {
         return Own<pmr_thread_cache>(
             [up](pmr_thread_cache* t) {
               pmr_thread_cache_init(t, nullptr, up);
             },
             pmr_thread_cache_destroy);
       },
       true, true, true},
      {"statistics",
       [](pmr_mem_resource* up) {
         return Own<pmr_statistics>(
             [up](pmr_statistics* s) { pmr_statistics_init(s, up); },
             pmr_statistics_destroy);
       },
       true, true, true},
      {"debug_resource",
       [](pmr_mem_resource* up) {
         return Own<pmr_debug_resource>(
             [up](pmr_debug_resource* d) {
               pmr_debug_resource_init(d, nullptr, up);
             },
             +[](pmr_debug_resource* d) { pmr_debug_resource_destroy(d); });
       },
       true, true, true},
  };
}

}  // namespace pmrtest
