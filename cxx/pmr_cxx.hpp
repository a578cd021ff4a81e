// pmr-c from C++17: a pmr-c resource as a std::pmr::memory_resource, and a
// std::pmr::memory_resource as a pmr-c resource. Header-only; includes all of
// pmr.h. The C library itself has no C++ in it (link //:pmr, or -lpmr_c, as a
// C program does).
//
//     pmrc::synchronized_pool pool;            // owns a pmr_synchronized_pool
//     std::pmr::vector<int> v{&pool};          // std containers over it
//     pmr_vector_init(&cv, pool.c_resource(), sizeof(int), alignof(int));
//
// Two adapters, each a small object the caller keeps alive while anything
// uses it (a container keeps a pointer to its resource, never a copy):
//   - pmrc::std_resource: a std::pmr::memory_resource over a
//     pmr_mem_resource *. Failure (NULL) becomes std::bad_alloc.
//   - pmrc::c_resource: a pmr_mem_resource (its first member, as for every
//     pmr-c resource) over a std::pmr::memory_resource *. Exceptions never
//     cross into C: a throwing allocation becomes NULL with errno ENOMEM.
// as_std / from_std make them; their get() gives the pointer to hand out.
// No adapter over an adapter: an adapter over an adapter of the other kind
// hands out the original resource (get(), unwrap), so a round trip returns
// the pointer one started with. Nothing here allocates behind the caller's
// back except the default bridges (one small adapter per bridged resource,
// kept until the program ends).
//
// RAII owners, each a std::pmr::memory_resource that owns a pmr-c resource:
// pmrc::monotonic_buffer, unsynchronized_pool, synchronized_pool,
// thread_cache, statistics. Their allocation is std's virtual call plus
// pmr_allocate's call through the ops table, nothing more.
//
// Equality (is_equal) follows the C resources: two adapters over pmr-c
// resources are equal when pmr_is_equal says so (identity unless the
// resource's hook says more), and an adapter over a c_resource is equal to
// what the original std resource is equal to. A plain std resource compares
// by its own rule (std's own resources: identity), so equality between a std
// resource and an adapter over it holds from the adapter's side only.
//
// Thread safety is the adapted resource's: the adapters add no state.
#ifndef PMR_CXX_PMR_CXX_HPP
#define PMR_CXX_PMR_CXX_HPP

#if !defined(__cplusplus) || __cplusplus < 201703L
#error "cxx/pmr_cxx.hpp needs C++17 (-std=c++17) for std::pmr"
#endif

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <new>

// All of pmr-c, as pmr.h gives it to C.
#include "../pmr.h"

namespace pmrc {

struct c_resource;

namespace impl {
void *c_allocate(pmr_mem_resource *self, std::size_t bytes,
                 std::size_t alignment) noexcept;
void c_deallocate(pmr_mem_resource *self, void *p, std::size_t bytes,
                  std::size_t alignment) noexcept;
bool c_is_equal(const pmr_mem_resource *self,
                const pmr_mem_resource *other) noexcept;

// The one ops table of every pmrc::c_resource: how a pmr_mem_resource is
// recognised as one (an inline variable: one object per program; a shared
// library built with hidden visibility has its own, which only loses the
// round trip through it, never correctness).
inline constexpr pmr_mem_resource_ops c_ops = {
    c_allocate, c_deallocate, c_is_equal, nullptr, nullptr, nullptr, nullptr};
}  // namespace impl

// ---- C resource -> std::pmr::memory_resource ------------------------------

// A std::pmr::memory_resource over a pmr-c resource r: allocate is
// pmr_allocate(r) and throws std::bad_alloc when it returns NULL (bad
// alignment or size included), deallocate is pmr_deallocate(r). Borrows r:
// r must outlive the adapter and everything allocated through it. r == NULL
// means pmr-c's default resource at construction, kept. Copies are equal
// adapters over the same r. Thread safety is r's.
class std_resource : public std::pmr::memory_resource {
 public:
  explicit std_resource(pmr_mem_resource *r) noexcept
      : r_(pmr_resource_or_default(r)) {}
  std_resource(const std_resource &) noexcept = default;
  std_resource &operator=(const std_resource &) noexcept = default;
  ~std_resource() override = default;

  // The pmr-c resource this adapts. Never NULL.
  pmr_mem_resource *c_resource() const noexcept { return r_; }

  // The pointer to give a std::pmr container: the original std resource
  // when r is a pmrc::c_resource (round trip), else this adapter. Lvalues
  // only: a temporary adapter would dangle.
  std::pmr::memory_resource *get() &noexcept;
  std::pmr::memory_resource *get() && = delete;

 protected:
  void *do_allocate(std::size_t bytes, std::size_t alignment) override {
    void *p = pmr_allocate(r_, bytes, alignment);
    if (PMR_UNLIKELY(p == nullptr)) throw std::bad_alloc();
    return p;
  }
  void do_deallocate(void *p, std::size_t bytes,
                     std::size_t alignment) override {
    pmr_deallocate(r_, p, bytes, alignment);
  }
  bool do_is_equal(
      const std::pmr::memory_resource &other) const noexcept override;

 private:
  pmr_mem_resource *r_;
};

// ---- std::pmr::memory_resource -> C resource ------------------------------

// A pmr-c resource over a std resource s: `base` is its pmr_mem_resource
// (first member, as in every pmr-c resource); pass get() (or &base) to C.
//   - allocate calls s->allocate; any exception becomes NULL with errno
//     ENOMEM (so does a size above PTRDIFF_MAX, without calling s); errno
//     is unchanged on success. s is asked for the size rounded up to a
//     multiple of the alignment, at least 1 byte (deallocate gives back the
//     same): 0-byte blocks are distinct and every block is aligned, as the
//     C contract wants, even over std pools that place a block by its size
//     class alone (libstdc++'s do).
//   - deallocate calls s->deallocate; noexcept (std's deallocate throws
//     nothing; if it did, std::terminate, never unwinding through C).
//   - is_equal: s->is_equal of the other's std resource (the other's target
//     when it is a c_resource too, else an adapter over it).
// Borrows s: s must outlive the adapter and everything allocated through
// it. s == nullptr means std's default resource at construction, kept.
// Standard layout, no destructor work; copies are equal adapters over s.
// Thread safety is s's (std's own: only synchronized_pool_resource and
// new_delete_resource are thread-safe).
struct c_resource {
  pmr_mem_resource base;
  std::pmr::memory_resource *target;

  explicit c_resource(std::pmr::memory_resource *s) noexcept
      : base{&impl::c_ops},
        target(s != nullptr ? s : std::pmr::get_default_resource()) {}

  // The pointer to give C code: the original pmr-c resource when s is a
  // pmrc::std_resource or an owner below (round trip), else &base. Lvalues
  // only: a temporary adapter would dangle.
  pmr_mem_resource *get() &noexcept;
  pmr_mem_resource *get() && = delete;
};

// The std resource that r adapts, when r is a pmrc::c_resource; else
// nullptr. r == NULL: nullptr.
inline std::pmr::memory_resource *unwrap(pmr_mem_resource *r) noexcept {
  if (r != nullptr && r->ops == &impl::c_ops)
    return reinterpret_cast<c_resource *>(r)->target;
  return nullptr;
}

// The pmr-c resource that s adapts, when s is a pmrc::std_resource (the
// owners below are); else NULL. s == nullptr: NULL.
inline pmr_mem_resource *unwrap(std::pmr::memory_resource *s) noexcept {
  if (auto *a = dynamic_cast<std_resource *>(s)) return a->c_resource();
  return nullptr;
}

// r as a std::pmr::memory_resource: an adapter the caller keeps alive while
// anything uses it; hand out its get(). Round trip: when r is a
// pmrc::c_resource, get() is the original std resource. Never fails.
//     auto mr = pmrc::as_std(r);
//     std::pmr::vector<int> v{mr.get()};
[[nodiscard]] inline std_resource as_std(pmr_mem_resource *r) noexcept {
  return std_resource(r);
}

// s as a pmr-c resource: an adapter the caller keeps alive while anything
// uses it; hand out its get(). Round trip: when s is a pmrc::std_resource
// (or an owner below), get() is the original pmr-c resource. Never fails.
[[nodiscard]] inline c_resource from_std(
    std::pmr::memory_resource *s) noexcept {
  return c_resource(s);
}

inline std::pmr::memory_resource *std_resource::get() &noexcept {
  std::pmr::memory_resource *s = unwrap(r_);
  return s != nullptr ? s : this;
}

inline pmr_mem_resource *c_resource::get() &noexcept {
  pmr_mem_resource *r = unwrap(target);
  return r != nullptr ? r : &base;
}

inline bool std_resource::do_is_equal(
    const std::pmr::memory_resource &other) const noexcept {
  if (this == &other) return true;
  if (auto *o = dynamic_cast<const std_resource *>(&other))
    return pmr_is_equal(r_, o->r_);
  // An adapter over a c_resource is the original std resource.
  if (std::pmr::memory_resource *s = unwrap(r_)) return s->is_equal(other);
  return false;
}

namespace impl {
// What a c_resource asks of its std resource for (bytes, alignment): at
// least 1 byte, rounded up to a multiple of the alignment. std's pools
// (libstdc++'s among them) place a block by its size class only, so a
// 24-byte request aligned to 16 could land 8 bytes off; a multiple of the
// alignment lands in a class the alignment divides. bytes <= SIZE_MAX -
// alignment (pmr_allocate checked it): no overflow.
inline std::size_t std_size(std::size_t bytes, std::size_t alignment) {
  return pmr_impl_round_up(bytes + (bytes == 0), alignment);
}

inline void *c_allocate(pmr_mem_resource *self, std::size_t bytes,
                        std::size_t alignment) noexcept {
  auto *a = reinterpret_cast<c_resource *>(self);
  const std::size_t n = std_size(bytes, alignment);
  // No object is larger than PTRDIFF_MAX: refused here, so that a std
  // resource's own rounding of such a size cannot wrap around.
  if (PMR_UNLIKELY(n > PTRDIFF_MAX)) {
    errno = ENOMEM;
    return nullptr;
  }
  const int saved = errno;
  try {
    void *p = a->target->allocate(n, alignment);
    errno = saved;
    return p;
  } catch (...) {
    errno = ENOMEM;
    return nullptr;
  }
}

inline void c_deallocate(pmr_mem_resource *self, void *p, std::size_t bytes,
                         std::size_t alignment) noexcept {
  auto *a = reinterpret_cast<c_resource *>(self);
  a->target->deallocate(p, impl::std_size(bytes, alignment), alignment);
}

inline bool c_is_equal(const pmr_mem_resource *self,
                       const pmr_mem_resource *other) noexcept {
  const auto *a = reinterpret_cast<const c_resource *>(self);
  if (other->ops == &c_ops) {
    const auto *b = reinterpret_cast<const c_resource *>(other);
    return a->target == b->target || a->target->is_equal(*b->target);
  }
  const std_resource view(const_cast<pmr_mem_resource *>(other));
  return a->target->is_equal(view);
}
}  // namespace impl

// ---- Default resources, bridged on request ---------------------------------

namespace impl {
// Adapters made by the bridges below: one per bridged resource, reused when
// the same resource is bridged again, never freed (memory allocated through
// a default resource may outlive any scope). Listed, so leak checkers see
// them reachable.
template <class Adapter, class Target>
Adapter *static_adapter(Target *t) {
  struct node {
    Adapter adapter;
    node *next;
  };
  static std::atomic<node *> head{nullptr};
  for (node *n = head.load(std::memory_order_acquire); n != nullptr;
       n = n->next) {
    if (n->adapter.c_resource_or_target() == t) return &n->adapter;
  }
  node *n = new node{Adapter(t), head.load(std::memory_order_relaxed)};
  while (!head.compare_exchange_weak(n->next, n, std::memory_order_acq_rel)) {
  }
  return &n->adapter;
}

struct std_node_adapter : std_resource {
  explicit std_node_adapter(pmr_mem_resource *r) noexcept : std_resource(r) {}
  pmr_mem_resource *c_resource_or_target() const noexcept {
    return c_resource();
  }
};
struct c_node_adapter : c_resource {
  explicit c_node_adapter(std::pmr::memory_resource *s) noexcept
      : c_resource(s) {}
  std::pmr::memory_resource *c_resource_or_target() const noexcept {
    return target;
  }
};
}  // namespace impl

// Makes std::pmr's default resource (std::pmr::get_default_resource) serve
// from pmr-c's default resource as it is now: an adapter over it, kept until
// the program ends (one per resource so bridged; bridging the same resource
// again reuses it), or, when pmr-c's default is a pmrc::c_resource, the std
// resource it adapts (no adapter over an adapter, no loop when both
// directions are bridged). Later changes of pmr-c's default are not
// followed. Returns std's previous default. Throws std::bad_alloc if the
// adapter cannot be allocated. Thread-safe as std::pmr::set_default_resource.
inline std::pmr::memory_resource *set_std_default_to_pmr_default() {
  pmr_mem_resource *r = pmr_get_default_resource();
  std::pmr::memory_resource *s = unwrap(r);
  if (s == nullptr) s = impl::static_adapter<impl::std_node_adapter>(r);
  return std::pmr::set_default_resource(s);
}

// The other way: makes pmr-c's default resource serve from std's default
// resource as it is now (an adapter kept until the program ends, or the
// pmr-c resource itself when std's default is a pmrc::std_resource). Later
// changes of std's default are not followed. Returns pmr-c's previous
// default. Throws std::bad_alloc if the adapter cannot be allocated.
// Thread-safe as pmr_set_default_resource.
inline pmr_mem_resource *set_pmr_default_to_std_default() {
  std::pmr::memory_resource *s = std::pmr::get_default_resource();
  pmr_mem_resource *r = unwrap(s);
  if (r == nullptr) r = &impl::static_adapter<impl::c_node_adapter>(s)->base;
  return pmr_set_default_resource(r);
}

// ---- RAII owners ------------------------------------------------------------

// The upstream of an owner: a pmr-c resource or a std resource (kept as an
// adapter inside the owner; a pmrc::std_resource is unwrapped). nullptr or
// nothing: pmr-c's default resource at the owner's construction.
class upstream {
 public:
  upstream() noexcept : c_(nullptr), s_(nullptr) {}
  upstream(std::nullptr_t) noexcept : upstream() {}
  upstream(pmr_mem_resource *r) noexcept : c_(r), s_(nullptr) {}
  upstream(std::pmr::memory_resource *s) noexcept
      : c_(unwrap(s)), s_(c_ == nullptr ? s : nullptr) {}

  // For the owner's init: the pmr-c resource (NULL: the default). Points
  // into this object when the upstream is a std resource.
  pmr_mem_resource *get() &noexcept {
    if (s_ == nullptr) return c_;
    adapter_ = c_resource(s_);
    return &adapter_.base;
  }

 private:
  pmr_mem_resource *c_;
  std::pmr::memory_resource *s_;
  c_resource adapter_{nullptr};
};

// What the owners share: a std_resource over their own C struct, neither
// copyable nor movable (an initialised C struct must stay where it is).
class owner_base : public std_resource {
 public:
  owner_base(const owner_base &) = delete;
  owner_base &operator=(const owner_base &) = delete;

 protected:
  explicit owner_base(pmr_mem_resource *self) noexcept : std_resource(self) {}
  ~owner_base() override = default;
  static void check(bool ok) {
    if (!ok) throw std::bad_alloc();
  }
};

// std::pmr::monotonic_buffer_resource's twin over pmr_monotonic_buffer
// (resources/pmr_monotonic_buffer.h), with reset and mark/rewind. Not
// thread-safe. The buffer form borrows buffer[0, size): it must outlive the
// owner. Constructors never fail. Destruction gives everything back to
// upstream, which must outlive the owner.
class monotonic_buffer final : public owner_base {
 public:
  using marker = pmr_monotonic_marker;

  explicit monotonic_buffer(upstream up = {}) : owner_base(&m_.base), up_(up) {
    pmr_monotonic_buffer_init(&m_, up_.get());
  }
  explicit monotonic_buffer(std::size_t initial_size, upstream up = {})
      : owner_base(&m_.base), up_(up) {
    pmr_monotonic_buffer_init_with_size(&m_, initial_size, up_.get());
  }
  monotonic_buffer(void *buffer, std::size_t size, upstream up = {})
      : owner_base(&m_.base), up_(up) {
    pmr_monotonic_buffer_init_with_buffer(&m_, buffer, size, up_.get());
  }
  ~monotonic_buffer() override { pmr_monotonic_buffer_destroy(&m_); }

  // The C struct, for the C API (pmr_monotonic_buffer_*).
  pmr_monotonic_buffer *c_struct() noexcept { return &m_; }
  // Frees every chunk; every pointer from it becomes invalid.
  void release() noexcept { pmr_monotonic_buffer_release(&m_); }
  // Like release, but keeps the chunks for reuse.
  void reset() noexcept { pmr_monotonic_buffer_reset(&m_); }
  marker mark() const noexcept { return pmr_monotonic_buffer_mark(&m_); }
  // False (nothing done) for a stale marker (see pmr_monotonic_buffer.h).
  bool rewind(marker mk) noexcept {
    return pmr_monotonic_buffer_rewind(&m_, mk);
  }
  std::size_t bytes_used() const noexcept {
    return pmr_monotonic_buffer_bytes_used(&m_);
  }
  std::size_t bytes_left() const noexcept {
    return pmr_monotonic_buffer_bytes_left(&m_);
  }
  pmr_mem_resource *upstream_resource() const noexcept {
    return pmr_monotonic_buffer_upstream(&m_);
  }

 private:
  pmr_monotonic_buffer m_;
  upstream up_;
};

// std::pmr::unsynchronized_pool_resource's twin over pmr_unsynchronized_pool
// (zero options: the defaults). Not thread-safe. Throws std::bad_alloc if
// init fails. Destruction gives everything back to upstream.
class unsynchronized_pool final : public owner_base {
 public:
  explicit unsynchronized_pool(const pmr_pool_options &opts = {},
                               upstream up = {})
      : owner_base(&p_.base), up_(up) {
    check(pmr_unsynchronized_pool_init(&p_, &opts, up_.get()));
  }
  explicit unsynchronized_pool(upstream up) : unsynchronized_pool({}, up) {}
  ~unsynchronized_pool() override { pmr_unsynchronized_pool_destroy(&p_); }

  pmr_unsynchronized_pool *c_struct() noexcept { return &p_; }
  // Frees everything; every pointer from it becomes invalid.
  void release() noexcept { pmr_unsynchronized_pool_release(&p_); }
  // Gives free memory back to upstream; returns the bytes given back.
  std::size_t trim() noexcept { return pmr_unsynchronized_pool_trim(&p_); }
  pmr_pool_stats stats() const noexcept {
    return pmr_unsynchronized_pool_get_stats(&p_);
  }
  pmr_pool_options options() const noexcept {
    return pmr_unsynchronized_pool_get_options(&p_);
  }
  pmr_mem_resource *upstream_resource() const noexcept {
    return pmr_unsynchronized_pool_upstream(&p_);
  }

 private:
  pmr_unsynchronized_pool p_;
  upstream up_;
};

// std::pmr::synchronized_pool_resource's twin over pmr_synchronized_pool.
// Thread-safe (the upstream must be too). Throws std::bad_alloc if init
// fails. Destruction gives everything back to upstream.
class synchronized_pool final : public owner_base {
 public:
  explicit synchronized_pool(const pmr_pool_options &opts = {},
                             upstream up = {})
      : owner_base(&p_.base), up_(up) {
    check(pmr_synchronized_pool_init(&p_, &opts, up_.get()));
  }
  explicit synchronized_pool(upstream up) : synchronized_pool({}, up) {}
  ~synchronized_pool() override { pmr_synchronized_pool_destroy(&p_); }

  pmr_synchronized_pool *c_struct() noexcept { return &p_; }
  // Frees everything; no other thread may use it meanwhile.
  void release() noexcept { pmr_synchronized_pool_release(&p_); }
  std::size_t trim() noexcept { return pmr_synchronized_pool_trim(&p_); }
  pmr_pool_stats stats() const noexcept {
    return pmr_synchronized_pool_get_stats(&p_);
  }
  pmr_pool_options options() const noexcept {
    return pmr_synchronized_pool_get_options(&p_);
  }
  pmr_mem_resource *upstream_resource() const noexcept {
    return pmr_synchronized_pool_upstream(&p_);
  }

 private:
  pmr_synchronized_pool p_;
  upstream up_;
};

// The per-thread pool (pmr_thread_cache): thread-safe, fastest from many
// threads; frees from any thread. Throws std::bad_alloc if init fails.
// Destruction takes back every thread's pages and gives everything back to
// upstream; no thread may use it meanwhile.
class thread_cache final : public owner_base {
 public:
  explicit thread_cache(const pmr_thread_cache_options &opts = {},
                        upstream up = {})
      : owner_base(&t_.base), up_(up) {
    check(pmr_thread_cache_init(&t_, &opts, up_.get()));
  }
  explicit thread_cache(upstream up) : thread_cache({}, up) {}
  ~thread_cache() override { pmr_thread_cache_destroy(&t_); }

  pmr_thread_cache *c_struct() noexcept { return &t_; }
  // Frees everything; no other thread may use it meanwhile.
  void release() noexcept { pmr_thread_cache_release(&t_); }
  std::size_t trim() noexcept { return pmr_thread_cache_trim(&t_); }
  pmr_thread_cache_stats stats() const noexcept {
    return pmr_thread_cache_get_stats(&t_);
  }
  pmr_thread_cache_options options() const noexcept {
    return pmr_thread_cache_get_options(&t_);
  }
  pmr_mem_resource *upstream_resource() const noexcept {
    return pmr_thread_cache_upstream(&t_);
  }

 private:
  pmr_thread_cache t_;
  upstream up_;
};

// Counts what passes through to upstream (pmr_statistics). Thread-safe
// (the upstream must be too). Throws std::bad_alloc if init fails.
class statistics final : public owner_base {
 public:
  explicit statistics(upstream up = {}) : owner_base(&s_.base), up_(up) {
    check(pmr_statistics_init(&s_, up_.get()));
  }
  ~statistics() override { pmr_statistics_destroy(&s_); }

  pmr_statistics *c_struct() noexcept { return &s_; }
  pmr_statistics_stats stats() const noexcept {
    return pmr_statistics_get_stats(&s_);
  }
  void reset_peak() noexcept { pmr_statistics_reset_peak(&s_); }
  pmr_mem_resource *upstream_resource() const noexcept {
    return pmr_statistics_upstream(&s_);
  }

 private:
  pmr_statistics s_;
  upstream up_;
};

}  // namespace pmrc

#endif  // PMR_CXX_PMR_CXX_HPP
