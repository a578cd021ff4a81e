// One small adapter per way of getting memory, all with the same inline
// interface, so every workload is one template and every allocator runs the
// same code (an allocator of Allocators() is one factory of an adapter, at the
// end of this file):
//   void* alloc(size_t n);              // NULL on failure
//   void dealloc(void* p, size_t n);    // sized, like pmr_deallocate
//   void drop();                        // end of a "free all" phase or of a
//   request:
//                                       // bump resources reset/release here,
//                                       others do nothing
//   bool bump() const;                  // deallocate is a no-op, memory is
//   dropped in bulk
// Every request uses alignment kAlign (16, what malloc gives).
#ifndef PMR_BENCHMARKS_ADAPTERS_H_
#define PMR_BENCHMARKS_ADAPTERS_H_

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <memory_resource>
#include <variant>

#include "benchmarks/baselines.h"
#include "benchmarks/registry.h"
#include "cxx/pmr_cxx.hpp"
#include "mem_resource/pmr_mem_resource.h"
#include "resources/pmr_monotonic_buffer.h"
#include "resources/pmr_synchronized_pool.h"
#include "resources/pmr_thread_cache.h"
#include "resources/pmr_unsynchronized_pool.h"

namespace bench {

// Hides a pointer's value from the optimiser, so calls through it stay real
// indirect (virtual / ops-table) calls, as in a program that got the resource
// from elsewhere. Applied to std::pmr and pmr-c alike.
template <class T>
inline T* Opaque(T* p) {
  asm volatile("" : "+r"(p));
  return p;
}

// glibc malloc, or whichever malloc is preloaded in this process.
class MallocAdapter {
 public:
  void* alloc(size_t n) { return std::malloc(n); }
  void dealloc(void* p, size_t) { std::free(p); }
  void drop() {}
  bool bump() const { return false; }
};

// A std::pmr resource, called through std::pmr::memory_resource*.
class StdAdapter {
 public:
  // kPmrc*: pmr-c's resources through the C++ bridge's owners
  // (cxx/pmr_cxx.hpp), over the malloc resource, as std::pmr resources.
  enum Kind {
    kNewDelete,
    kMonotonic,
    kUnsyncPool,
    kSyncPool,
    kPmrcMonotonic,
    kPmrcUnsyncPool,
    kPmrcSyncPool,
    kPmrcThreadCache
  };
  StdAdapter(Kind kind, size_t mono_initial) {
    switch (kind) {
      case kNewDelete:
        r_ = std::pmr::new_delete_resource();
        break;
      case kMonotonic:
        mono_ = mono_initial
                    ? new std::pmr::monotonic_buffer_resource(mono_initial)
                    : new std::pmr::monotonic_buffer_resource();
        owned_.reset(mono_);
        r_ = mono_;
        break;
      case kUnsyncPool:
        owned_.reset(new std::pmr::unsynchronized_pool_resource());
        r_ = owned_.get();
        break;
      case kSyncPool:
        owned_.reset(new std::pmr::synchronized_pool_resource());
        r_ = owned_.get();
        break;
      case kPmrcMonotonic:
        pmrc_mono_ =
            new pmrc::monotonic_buffer(mono_initial, pmr_malloc_resource());
        owned_.reset(pmrc_mono_);
        r_ = pmrc_mono_;
        break;
      case kPmrcUnsyncPool:
        owned_.reset(new pmrc::unsynchronized_pool(pmr_malloc_resource()));
        r_ = owned_.get();
        break;
      case kPmrcSyncPool:
        owned_.reset(new pmrc::synchronized_pool(pmr_malloc_resource()));
        r_ = owned_.get();
        break;
      case kPmrcThreadCache:
        owned_.reset(new pmrc::thread_cache(pmr_malloc_resource()));
        r_ = owned_.get();
        break;
    }
    r_ = Opaque(r_);
  }
  void* alloc(size_t n) { return r_->allocate(n, kAlign); }
  void dealloc(void* p, size_t n) { r_->deallocate(p, n, kAlign); }
  void drop() {
    if (mono_ != nullptr) mono_->release();
    if (pmrc_mono_ != nullptr) pmrc_mono_->release();
  }
  bool bump() const { return mono_ != nullptr || pmrc_mono_ != nullptr; }
  // For the container workloads: the (opaque) resource the containers use.
  std::pmr::memory_resource* resource() const { return r_; }

 private:
  std::unique_ptr<std::pmr::memory_resource> owned_;
  std::pmr::monotonic_buffer_resource* mono_ = nullptr;
  pmrc::monotonic_buffer* pmrc_mono_ = nullptr;
  std::pmr::memory_resource* r_ = nullptr;
};

// A pmr-c resource, called through the abstract interface on &x.base.
class PmrAdapter {
 public:
  enum Kind {
    kMalloc,
    kMonoReset,
    kMonoRelease,
    kUnsyncPool,
    kSyncPool,
    kThreadCache,
    kThreadCachePool
  };
  PmrAdapter(Kind kind, size_t mono_initial) : kind_(kind) {
    switch (kind) {
      case kMalloc:
        r_ = pmr_malloc_resource();
        break;
      case kMonoReset:
      case kMonoRelease:
        pmr_monotonic_buffer_init_with_size(&mono_, mono_initial,
                                            pmr_malloc_resource());
        r_ = &mono_.base;
        break;
      case kUnsyncPool:
        pmr_unsynchronized_pool_init(&unsync_, nullptr, pmr_malloc_resource());
        r_ = &unsync_.base;
        break;
      case kSyncPool:
        pmr_synchronized_pool_init(&sync_, nullptr, pmr_malloc_resource());
        r_ = &sync_.base;
        break;
      case kThreadCache:
        pmr_thread_cache_init(&tc_, nullptr, pmr_malloc_resource());
        r_ = &tc_.base;
        break;
      case kThreadCachePool:
        pmr_synchronized_pool_init(&sync_, nullptr, pmr_malloc_resource());
        pmr_thread_cache_init(&tc_, nullptr, &sync_.base);
        r_ = &tc_.base;
        break;
    }
    r_ = Opaque(r_);
  }
  PmrAdapter(const PmrAdapter&) = delete;
  PmrAdapter& operator=(const PmrAdapter&) = delete;
  ~PmrAdapter() {
    switch (kind_) {
      case kMalloc:
        break;
      case kMonoReset:
      case kMonoRelease:
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
      case kThreadCachePool:
        pmr_thread_cache_destroy(&tc_);
        pmr_synchronized_pool_destroy(&sync_);
        break;
    }
  }
  void* alloc(size_t n) { return pmr_allocate(r_, n, kAlign); }
  void dealloc(void* p, size_t n) { pmr_deallocate(r_, p, n, kAlign); }
  void drop() {
    if (kind_ == kMonoReset)
      pmr_monotonic_buffer_reset(&mono_);
    else if (kind_ == kMonoRelease)
      pmr_monotonic_buffer_release(&mono_);
  }
  bool bump() const { return kind_ == kMonoReset || kind_ == kMonoRelease; }
  // For the container workloads: the (opaque) resource the containers use.
  pmr_mem_resource* resource() const { return r_; }

 private:
  Kind kind_;
  pmr_mem_resource* r_ = nullptr;
  pmr_monotonic_buffer mono_;
  pmr_unsynchronized_pool unsync_;
  pmr_synchronized_pool sync_;
  pmr_thread_cache tc_;
};

// The same resources, freeing through pmr_deallocate_unsized: the size the
// workload passes is not read, as by a caller that does not keep it (its
// load is not made).
class PmrUnsizedAdapter : public PmrAdapter {
 public:
  using PmrAdapter::PmrAdapter;
  void dealloc(void* p, size_t) {
    pmr_deallocate_unsized(resource(), p, kAlign);
  }
};

// pmr_monotonic_buffer through its inline fast path. Its deallocate is a
// no-op by contract, so a caller holding the concrete type does not call it.
class PmrMonoInlineAdapter {
 public:
  explicit PmrMonoInlineAdapter(size_t mono_initial) {
    pmr_monotonic_buffer_init_with_size(&mono_, mono_initial,
                                        pmr_malloc_resource());
  }
  PmrMonoInlineAdapter(const PmrMonoInlineAdapter&) = delete;
  PmrMonoInlineAdapter& operator=(const PmrMonoInlineAdapter&) = delete;
  ~PmrMonoInlineAdapter() { pmr_monotonic_buffer_destroy(&mono_); }
  void* alloc(size_t n) {
    return pmr_monotonic_buffer_allocate(&mono_, n, kAlign);
  }
  void dealloc(void*, size_t) {}
  void drop() { pmr_monotonic_buffer_reset(&mono_); }
  bool bump() const { return true; }

 private:
  pmr_monotonic_buffer mono_;
};

class SimplePoolAdapter {
 public:
  void* alloc(size_t n) { return pool_.allocate(n); }
  void dealloc(void* p, size_t n) { pool_.deallocate(p, n); }
  void drop() {}
  bool bump() const { return false; }

 private:
  SimplePool pool_;
};

class ArenaAdapter {
 public:
  ArenaAdapter() : arena_(kArenaBlock) {}
  void* alloc(size_t n) { return arena_.allocate(n); }
  void dealloc(void*, size_t) {}
  void drop() { arena_.reset(); }
  bool bump() const { return true; }

 private:
  Arena arena_;
};

// Not an allocator: the floor of workload F. Hands out kBlocks preallocated
// blocks of kBlock bytes in turn; deallocate does nothing. In F only the
// producer allocates and at most kFRing blocks are in flight, so a block
// comes round again long after the consumer is done with it.
class NoAllocatorAdapter {
 public:
  static constexpr size_t kBlocks = 4096;
  static_assert(kBlocks > kFRing + 2,
                "a block must not come round while in flight");
  NoAllocatorAdapter()
      : mem_(static_cast<char*>(
            std::aligned_alloc(kCacheLine, kBlocks * kBlock))) {}
  NoAllocatorAdapter(const NoAllocatorAdapter&) = delete;
  NoAllocatorAdapter& operator=(const NoAllocatorAdapter&) = delete;
  ~NoAllocatorAdapter() { std::free(mem_); }
  void* alloc(size_t n) {
    if (mem_ == nullptr || n > kBlock) return nullptr;
    return mem_ + (next_++ % kBlocks) * kBlock;
  }
  void dealloc(void*, size_t) {}
  void drop() {}
  bool bump() const { return false; }

 private:
  char* mem_;
  size_t next_ = 0;
};

// absl::flat_hash_map with std::allocator: malloc, but its own container row.
class AbslMapAdapter : public MallocAdapter {};
// glib's GHashTable (glib's allocator over malloc): its own row in W.
class GlibMapAdapter : public MallocAdapter {};

// What a factory may depend on: the workload's wishes.
struct MakeCtx {
  size_t mono_first_chunk;  // 0: the resource's default
};

template <class A>
using MakeFn = std::unique_ptr<A> (*)(const MakeCtx&);

// One factory per allocator: a plain function returning one of the adapter
// types above (a workload is instantiated for each of them, so calls stay
// inline). A new adapter class goes into this list.
struct AdapterFactory {
  std::variant<MakeFn<MallocAdapter>, MakeFn<AbslMapAdapter>,
               MakeFn<GlibMapAdapter>, MakeFn<StdAdapter>, MakeFn<PmrAdapter>,
               MakeFn<PmrUnsizedAdapter>, MakeFn<PmrMonoInlineAdapter>,
               MakeFn<SimplePoolAdapter>, MakeFn<ArenaAdapter>,
               MakeFn<NoAllocatorAdapter>>
      make;
};

}  // namespace bench

#endif  // PMR_BENCHMARKS_ADAPTERS_H_
