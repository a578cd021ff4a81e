// pmr_debug_resource: each kind of misuse named in one message, guards,
// quarantine, leaks, failure injection, counts, threads, and stacking with
// the other resources.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "resources/pmr_debug_resource.h"
#include "resources/pmr_monotonic_buffer.h"
#include "resources/pmr_statistics.h"
#include "resources/pmr_synchronized_pool.h"
#include "resources/pmr_unsynchronized_pool.h"
#include "tests/testkit/counting_resource.h"

namespace {

using pmrtest::Call;
using pmrtest::CountingResource;

std::string Ptr(const void* p) {
  char buf[32];
  snprintf(buf, sizeof buf, "%p", p);
  return buf;
}

bool Has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

void Capture(const char* message, void* context) {
  static_cast<std::vector<std::string>*>(context)->push_back(message);
}

// Captures messages; restores the default handler afterwards.
class Messages {
 public:
  Messages() { pmr_set_misuse_handler(Capture, &v_); }
  ~Messages() { pmr_set_misuse_handler(nullptr, nullptr); }
  std::vector<std::string> v_;
};

pmr_debug_resource_options Opts(const char* name, size_t q_blocks = 1024,
                                size_t q_bytes = 4 << 20) {
  pmr_debug_resource_options o{};
  o.name = name;
  o.quarantine_blocks = q_blocks;
  o.quarantine_bytes = q_bytes;
  o.no_quarantine = q_blocks == 0 && q_bytes == 0;
  o.continue_on_misuse = true;
  return o;
}

class DebugTest : public ::testing::Test {
 protected:
  void SetUp() override { Init(Opts("test")); }
  void Init(const pmr_debug_resource_options& o) {
    pmr_debug_resource_init(&d_, &o, up_.get());
  }
  void TearDown() override {
    if (!destroyed_) {
      EXPECT_EQ(pmr_debug_resource_destroy(&d_), 0u);
    }
    EXPECT_EQ(up_.outstanding_blocks(), 0u);
    EXPECT_EQ(up_.mismatches(), 0u) << up_.last_mismatch();
  }
  size_t Destroy() {
    destroyed_ = true;
    return pmr_debug_resource_destroy(&d_);
  }
  void Reinit(const pmr_debug_resource_options& o) {
    EXPECT_EQ(pmr_debug_resource_destroy(&d_), 0u);
    Init(o);
  }
  pmr_mem_resource* r() { return &d_.base; }
  pmr_debug_resource_stats C() const {
    return pmr_debug_resource_get_stats(&d_);
  }
  const std::string& Only() {
    EXPECT_EQ(m_.v_.size(), 1u);
    static const std::string none;
    return m_.v_.empty() ? none : m_.v_.back();
  }
  // Every message names the resource: its name and its address.
  std::string Self() { return "debug_resource \"test\" " + Ptr(&d_) + ": "; }

  Messages m_;
  CountingResource up_;
  pmr_debug_resource d_;
  bool destroyed_ = false;
};

// ---- correct use -----------------------------------------------------------

TEST_F(DebugTest, CorrectUseIsSilentAndCountedExactly) {
  struct B {
    unsigned char* p;
    size_t n, a;
  };
  std::vector<B> live;
  size_t bytes = 0;
  for (size_t a = 1; a <= 4096; a *= 2)
    for (size_t n : {0, 1, 7, 16, 17, 100, 4095, 5000}) {
      auto* p = static_cast<unsigned char*>(pmr_allocate(r(), n, a));
      ASSERT_NE(p, nullptr);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % a, 0u) << n << " " << a;
      std::memset(p, 0x5a, n);  // every byte of the block is the user's
      live.push_back({p, n, a});
      bytes += n;
    }
  pmr_debug_resource_stats c = C();
  EXPECT_EQ(c.allocations, live.size());
  EXPECT_EQ(c.blocks_in_use, live.size());
  EXPECT_EQ(c.bytes_in_use, bytes);
  EXPECT_EQ(c.peak_bytes_in_use, bytes);
  EXPECT_EQ(pmr_debug_resource_check(&d_), 0u);
  for (const B& b : live) pmr_deallocate(r(), b.p, b.n, b.a);
  c = C();
  EXPECT_EQ(c.deallocations, live.size());
  EXPECT_EQ(c.blocks_in_use, 0u);
  EXPECT_EQ(c.bytes_in_use, 0u);
  EXPECT_EQ(c.peak_bytes_in_use, bytes);
  EXPECT_EQ(c.misuse, 0u);
  EXPECT_EQ(c.failed_allocations, 0u);
  EXPECT_TRUE(m_.v_.empty());
}

TEST_F(DebugTest, UpstreamGetsOneBlockPerBlockWithGuardsAndAlignment) {
  void* p = pmr_allocate(r(), 100, 8);
  void* q = pmr_allocate(r(), 10, 256);
  std::vector<Call> calls = up_.calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].alignment, 16u);  // at least 16
  EXPECT_GE(calls[0].bytes, 100u + 2 * PMR_DEBUG_GUARD_BYTES);
  EXPECT_EQ(calls[1].alignment, 256u);
  EXPECT_GE(calls[1].bytes, 10u + 2 * PMR_DEBUG_GUARD_BYTES);
  // The user block sits inside the upstream block, guards on both sides.
  auto in = [](const Call& c, void* u, size_t n) {
    auto b = reinterpret_cast<uintptr_t>(c.p),
         x = reinterpret_cast<uintptr_t>(u);
    return x >= b + PMR_DEBUG_GUARD_BYTES &&
           x + n + PMR_DEBUG_GUARD_BYTES <= b + c.bytes;
  };
  EXPECT_TRUE(in(calls[0], p, 100));
  EXPECT_TRUE(in(calls[1], q, 10));
  pmr_deallocate(r(), p, 100, 8);
  pmr_deallocate(r(), q, 10, 256);
}

TEST_F(DebugTest, HugeAlignmentsAndSmallSizes) {
  for (size_t a = 4096; a <= (size_t{1} << 20); a *= 4) {
    void* p = pmr_allocate(r(), 1, a);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % a, 0u);
    static_cast<char*>(p)[0] = 1;
    pmr_deallocate(r(), p, 1, a);
  }
  EXPECT_EQ(pmr_debug_resource_check(&d_), 0u);
  EXPECT_TRUE(m_.v_.empty());
}

TEST_F(DebugTest, ZeroBytesGivesDistinctPointers) {
  std::set<void*> seen;
  std::vector<void*> ps;
  for (int i = 0; i < 100; ++i) {
    void* p = pmr_allocate(r(), 0, 8);
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(seen.insert(p).second);
    ps.push_back(p);
  }
  for (void* p : ps) pmr_deallocate(r(), p, 0, 8);
  EXPECT_TRUE(m_.v_.empty());
}

TEST_F(DebugTest, SuccessLeavesErrnoAlone) {
  errno = 4242;
  void* p = pmr_allocate(r(), 5000, 32);  // also grows the tables
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(errno, 4242);
  pmr_deallocate(r(), p, 5000, 32);
  EXPECT_EQ(errno, 4242);
}

TEST_F(DebugTest, NewBlocksAreFilledSoUninitialisedReadsShow) {
  auto* p = static_cast<unsigned char*>(pmr_allocate(r(), 64, 8));
  for (int i = 0; i < 64; ++i) ASSERT_EQ(p[i], 0xCD) << i;
  pmr_deallocate(r(), p, 64, 8);
}

TEST_F(DebugTest, HugeRequestFailsWithEnomemWithoutUpstream) {
  errno = 0;
  EXPECT_EQ(pmr_allocate(r(), SIZE_MAX - 16, 16), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(pmr_allocate(r(), 16, size_t{1} << 63), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_TRUE(up_.calls().empty());
  EXPECT_EQ(C().failed_allocations, 2u);
  EXPECT_EQ(C().injected_failures, 0u);
}

TEST_F(DebugTest, EqualOnlyToItselfAndKnowsItsUpstream) {
  EXPECT_TRUE(pmr_is_equal(r(), r()));
  EXPECT_FALSE(pmr_is_equal(r(), up_.get()));
  EXPECT_EQ(pmr_debug_resource_upstream(&d_), up_.get());
}

// ---- misuse: one message each, naming resource, pointer and sizes -----------

TEST_F(DebugTest, DoubleFreeWhileInQuarantine) {
  void* p = pmr_allocate(r(), 64, 8);
  pmr_deallocate(r(), p, 64, 8);
  pmr_deallocate(r(), p, 64, 8);
  const std::string& m = Only();
  EXPECT_EQ(m.rfind(Self(), 0), 0u) << m;
  EXPECT_TRUE(Has(m, "double free of " + Ptr(p))) << m;
  EXPECT_TRUE(Has(m, "deallocate(64 bytes, alignment 8)")) << m;
  EXPECT_TRUE(Has(m, "block #1 of 64 bytes, alignment 8")) << m;
  EXPECT_TRUE(Has(m, "in quarantine")) << m;
  pmr_debug_resource_stats c = C();
  EXPECT_EQ(c.misuse, 1u);
  EXPECT_EQ(c.deallocations, 1u);  // the second one was ignored
  EXPECT_EQ(c.quarantined_blocks, 1u);
}

TEST_F(DebugTest, DoubleFreeAfterTheBlockWentBackUpstream) {
  Reinit(Opts("test", 0, 0));  // no quarantine
  void* p = pmr_allocate(r(), 32, 16);
  pmr_deallocate(r(), p, 32, 16);
  EXPECT_EQ(up_.outstanding_blocks(), 0u);
  pmr_deallocate(r(), p, 32, 16);
  const std::string& m = Only();
  EXPECT_TRUE(Has(m, "double free of " + Ptr(p))) << m;
  EXPECT_TRUE(Has(m, "returned to upstream")) << m;
  EXPECT_EQ(up_.deallocations(), 1u);  // never forwarded twice
}

TEST_F(DebugTest, PointerItNeverGaveOut) {
  alignas(16) char local[64];
  pmr_deallocate(r(), local, 64, 16);
  const std::string& m = Only();
  EXPECT_EQ(m.rfind(Self(), 0), 0u) << m;
  EXPECT_TRUE(Has(m, "deallocate(" + Ptr(local) + ", 64 bytes, alignment 16)"))
      << m;
  EXPECT_TRUE(Has(m, "never gave out")) << m;
  EXPECT_TRUE(
      up_.calls().empty());  // the foreign pointer was not read or forwarded

  auto* p = static_cast<char*>(pmr_allocate(r(), 100, 8));
  pmr_deallocate(r(), p + 8, 92, 8);
  ASSERT_EQ(m_.v_.size(), 2u);
  EXPECT_TRUE(Has(m_.v_[1], "never gave out; it points 8 bytes into block " +
                                Ptr(p) + " (#1, 100 bytes, alignment 8)"))
      << m_.v_[1];
  pmr_deallocate(r(), p, 100, 8);
  EXPECT_EQ(C().misuse, 2u);
}

TEST_F(DebugTest, WrongSizeOrAlignmentNamesBoth) {
  void* p = pmr_allocate(r(), 100, 16);
  pmr_deallocate(r(), p, 200, 16);
  pmr_deallocate(r(), p, 100, 32);
  ASSERT_EQ(m_.v_.size(), 2u);
  EXPECT_EQ(m_.v_[0].rfind(Self(), 0), 0u) << m_.v_[0];
  EXPECT_TRUE(Has(m_.v_[0],
                  Ptr(p) + " (#1) was allocated with 100 bytes, alignment 16, "
                           "but deallocated with 200 bytes, alignment 16"))
      << m_.v_[0];
  EXPECT_TRUE(Has(m_.v_[1], "but deallocated with 100 bytes, alignment 32"))
      << m_.v_[1];
  EXPECT_EQ(C().blocks_in_use, 1u);  // ignored: still live
  pmr_deallocate(r(), p, 100, 16);
  EXPECT_EQ(m_.v_.size(), 2u);
  EXPECT_EQ(C().blocks_in_use, 0u);
}

TEST_F(DebugTest, WriteAfterTheEndIsFoundOnFree) {
  auto* p = static_cast<unsigned char*>(pmr_allocate(r(), 64, 8));
  p[64] = 0;  // one past the end
  p[70] = 0;
  pmr_deallocate(r(), p, 64, 8);
  const std::string& m = Only();
  EXPECT_EQ(m.rfind(Self(), 0), 0u) << m;
  EXPECT_TRUE(Has(m, "buffer overrun after block " + Ptr(p) +
                         " (#1, 64 bytes, alignment 8)"))
      << m;
  EXPECT_TRUE(Has(
      m,
      "2 of the 16 guard bytes after it overwritten, the first at offset 64"))
      << m;
  EXPECT_TRUE(Has(m, "found by deallocate")) << m;
  EXPECT_EQ(C().deallocations, 1u);  // the block itself was freed
}

TEST_F(DebugTest, LastGuardByteAfterTheEndIsChecked) {
  auto* p = static_cast<unsigned char*>(pmr_allocate(r(), 5, 1));
  p[5 + PMR_DEBUG_GUARD_BYTES - 1] ^= 1;
  pmr_deallocate(r(), p, 5, 1);
  EXPECT_TRUE(Has(Only(), "the first at offset 20")) << Only();
}

TEST_F(DebugTest, WriteBeforeTheStartIsFoundOnFree) {
  auto* p = static_cast<unsigned char*>(pmr_allocate(r(), 32, 8));
  p[-1] = 0;
  p[-3] = 0;
  pmr_deallocate(r(), p, 32, 8);
  const std::string& m = Only();
  EXPECT_TRUE(Has(m, "buffer underrun before block " + Ptr(p) +
                         " (#1, 32 bytes, alignment 8)"))
      << m;
  EXPECT_TRUE(Has(
      m, "2 of the 48 bytes before it overwritten, the nearest at offset -1"))
      << m;
}

TEST_F(DebugTest, OverwrittenHeaderCountsAsUnderrun) {
  auto* p = static_cast<unsigned char*>(pmr_allocate(r(), 32, 8));
  std::memset(p - 48, 0, 8);  // the header's first field (48 = header + guard)
  pmr_deallocate(r(), p, 32, 8);
  EXPECT_TRUE(
      Has(Only(),
          "8 of the 48 bytes before it overwritten, the nearest at offset -41"))
      << Only();
}

TEST_F(DebugTest, CheckFindsGuardDamageOnLiveBlocksOnce) {
  auto* a = static_cast<unsigned char*>(pmr_allocate(r(), 10, 8));
  auto* b = static_cast<unsigned char*>(pmr_allocate(r(), 20, 64));
  EXPECT_EQ(pmr_debug_resource_check(&d_), 0u);
  a[10] = 1;
  b[-64] = 1;  // alignment 64: 64 bytes in front
  EXPECT_EQ(pmr_debug_resource_check(&d_), 2u);
  ASSERT_EQ(m_.v_.size(), 2u);
  std::string all = m_.v_[0] + "\n" + m_.v_[1];
  EXPECT_TRUE(Has(all, "buffer overrun after block " + Ptr(a))) << all;
  EXPECT_TRUE(Has(all, "buffer underrun before block " + Ptr(b) +
                           " (#2, 20 bytes, alignment 64)"))
      << all;
  EXPECT_TRUE(Has(all, "nearest at offset -64")) << all;
  EXPECT_TRUE(Has(all, "found by pmr_debug_resource_check")) << all;
  // Reported once: the guards were restored.
  EXPECT_EQ(pmr_debug_resource_check(&d_), 0u);
  pmr_deallocate(r(), a, 10, 8);
  pmr_deallocate(r(), b, 20, 64);
  EXPECT_EQ(m_.v_.size(), 2u);
  EXPECT_EQ(C().misuse, 2u);
}

TEST_F(DebugTest, UseAfterFreeIsFoundWhenTheBlockLeavesQuarantine) {
  Reinit(Opts("test", 2));
  auto* p = static_cast<unsigned char*>(pmr_allocate(r(), 40, 8));
  pmr_deallocate(r(), p, 40, 8);
  for (int i = 0; i < 40; ++i) ASSERT_EQ(p[i], 0xDD);  // freed memory is filled
  p[3] = 7;                                            // use after free
  p[30] = 7;
  void* x = pmr_allocate(r(), 8, 8);
  void* y = pmr_allocate(r(), 8, 8);
  pmr_deallocate(r(), x, 8, 8);
  EXPECT_TRUE(m_.v_.empty());    // p still in quarantine
  pmr_deallocate(r(), y, 8, 8);  // pushes p out
  const std::string& m = Only();
  EXPECT_EQ(m.rfind(Self(), 0), 0u) << m;
  EXPECT_TRUE(Has(
      m, "use after free: block " + Ptr(p) + " (#1, 40 bytes, alignment 8)"))
      << m;
  EXPECT_TRUE(Has(m, "2 bytes changed, the first at offset 3")) << m;
  EXPECT_TRUE(Has(m, "found when it left quarantine")) << m;
}

TEST_F(DebugTest, UseAfterFreeIsFoundByCheck) {
  auto* p = static_cast<unsigned char*>(pmr_allocate(r(), 16, 8));
  pmr_deallocate(r(), p, 16, 8);
  p[15] = 0;
  EXPECT_EQ(pmr_debug_resource_check(&d_), 1u);
  EXPECT_TRUE(Has(Only(), "use after free: block " + Ptr(p))) << Only();
  EXPECT_TRUE(
      Has(Only(), "the first at offset 15; found by pmr_debug_resource_check"))
      << Only();
  EXPECT_EQ(pmr_debug_resource_check(&d_), 0u);  // restored: reported once
  EXPECT_EQ(pmr_debug_resource_flush_quarantine(&d_), 0u);
  EXPECT_EQ(m_.v_.size(), 1u);
}

TEST_F(DebugTest, UseAfterFreeIsFoundAtFlushAndDestroy) {
  auto* p = static_cast<unsigned char*>(pmr_allocate(r(), 16, 8));
  auto* q = static_cast<unsigned char*>(pmr_allocate(r(), 16, 8));
  pmr_deallocate(r(), p, 16, 8);
  pmr_deallocate(r(), q, 16, 8);
  p[0] = 0;
  EXPECT_EQ(pmr_debug_resource_flush_quarantine(&d_), 1u);
  EXPECT_EQ(C().quarantined_blocks, 0u);
  EXPECT_EQ(up_.outstanding_blocks(), 0u);
  auto* s = static_cast<unsigned char*>(pmr_allocate(r(), 16, 8));
  pmr_deallocate(r(), s, 16, 8);
  s[1] = 0;
  EXPECT_EQ(Destroy(), 0u);  // no leak, but the damage is reported
  ASSERT_EQ(m_.v_.size(), 2u);
  EXPECT_TRUE(Has(m_.v_[1], "use after free: block " + Ptr(s))) << m_.v_[1];
}

TEST_F(DebugTest, QuarantineIsBoundedByBlocksAndBytes) {
  Reinit(Opts("test", 3, 1000));
  std::vector<void*> v;
  for (int i = 0; i < 5; ++i) v.push_back(pmr_allocate(r(), 100, 8));
  for (void* p : v) pmr_deallocate(r(), p, 100, 8);
  EXPECT_EQ(C().quarantined_blocks, 3u);
  EXPECT_EQ(C().quarantined_bytes, 300u);
  EXPECT_EQ(up_.outstanding_blocks(), 3u);
  // FIFO: the first two left, the last three are kept.
  pmr_deallocate(r(), v[4], 100, 8);
  EXPECT_TRUE(Has(Only(), "in quarantine")) << Only();
  pmr_deallocate(r(), v[0], 100, 8);
  EXPECT_TRUE(Has(m_.v_.back(), "returned to upstream")) << m_.v_.back();
  m_.v_.clear();

  v.clear();
  for (int i = 0; i < 3; ++i) v.push_back(pmr_allocate(r(), 400, 8));
  for (void* p : v) pmr_deallocate(r(), p, 400, 8);
  EXPECT_EQ(C().quarantined_blocks, 2u);  // 800 bytes: a third would pass 1000
  EXPECT_EQ(C().quarantined_bytes, 800u);
  void* big = pmr_allocate(r(), 5000, 8);  // larger than the whole quarantine
  pmr_deallocate(r(), big, 5000, 8);
  EXPECT_EQ(C().quarantined_blocks, 2u);
  EXPECT_EQ(up_.outstanding_blocks(), 2u);
  EXPECT_EQ(pmr_debug_resource_flush_quarantine(&d_), 0u);
  EXPECT_EQ(up_.outstanding_blocks(), 0u);
  EXPECT_TRUE(m_.v_.empty());
}

TEST_F(DebugTest, LeaksAreListedAtDestroyAndFreed) {
  void* a = pmr_allocate(r(), 10, 8);
  void* b = pmr_allocate(r(), 200, 64);
  void* c = pmr_allocate(r(), 0, 1);
  pmr_deallocate(r(), b, 200, 64);
  EXPECT_EQ(Destroy(), 2u);
  ASSERT_EQ(m_.v_.size(), 2u);
  EXPECT_EQ(m_.v_[0].rfind(Self(), 0), 0u) << m_.v_[0];
  EXPECT_TRUE(
      Has(m_.v_[0], "leak 1 of 2: block " + Ptr(a) +
                        " (#1, 10 bytes, alignment 8) was never deallocated"))
      << m_.v_[0];
  EXPECT_TRUE(Has(
      m_.v_[1], "leak 2 of 2: block " + Ptr(c) + " (#3, 0 bytes, alignment 1)"))
      << m_.v_[1];
  // TearDown: nothing left upstream, every block freed with its own sizes.
}

TEST_F(DebugTest, ManyLeaksAreListedInAllocationOrder) {
  std::vector<void*> v;
  for (int i = 0; i < 300; ++i) v.push_back(pmr_allocate(r(), i, 8));
  EXPECT_EQ(Destroy(), 300u);
  ASSERT_EQ(m_.v_.size(), 300u);
  for (int i = 0; i < 300; ++i) {
    std::string want = "leak " + std::to_string(i + 1) + " of 300: block " +
                       Ptr(v[i]) + " (#" + std::to_string(i + 1) + ", " +
                       std::to_string(i) + " bytes";
    ASSERT_TRUE(Has(m_.v_[i], want)) << m_.v_[i];
  }
}

TEST_F(DebugTest, NamelessResourceIsNamedByAddress) {
  Reinit(Opts(nullptr));
  void* p = pmr_allocate(r(), 8, 8);
  pmr_deallocate(r(), p, 16, 8);
  EXPECT_EQ(Only().rfind("debug_resource " + Ptr(&d_) + ": ", 0), 0u) << Only();
  pmr_deallocate(r(), p, 8, 8);
}

TEST_F(DebugTest, LongNamesAreCut) {
  std::string name(200, 'x');
  Reinit(Opts(name.c_str()));
  void* p = pmr_allocate(r(), 8, 8);
  pmr_deallocate(r(), p, 16, 8);
  EXPECT_TRUE(Has(Only(), "\"" + std::string(63, 'x') + "\" ")) << Only();
  pmr_deallocate(r(), p, 8, 8);
}

// ---- try_resize ------------------------------------------------------------

TEST(DebugResize, ForwardsToUpstreamAndMovesTheGuard) {
  Messages m;
  pmr_monotonic_buffer mono;
  pmr_monotonic_buffer_init(&mono, nullptr);
  pmr_debug_resource_options o = Opts("arena");
  pmr_debug_resource d;
  pmr_debug_resource_init(&d, &o, &mono.base);
  auto* p = static_cast<unsigned char*>(pmr_allocate(&d.base, 100, 8));
  std::memset(p, 1, 100);
  ASSERT_TRUE(pmr_try_resize(&d.base, p, 100, 300, 8));
  EXPECT_EQ(p[99], 1);
  EXPECT_EQ(p[100], 0xCD);  // the new part is "fresh"
  std::memset(p, 2, 300);
  EXPECT_EQ(pmr_debug_resource_get_stats(&d).bytes_in_use, 300u);
  EXPECT_EQ(pmr_debug_resource_check(&d), 0u);
  p[300] = 0;  // the guard moved to the new end
  EXPECT_EQ(pmr_debug_resource_check(&d), 1u);
  ASSERT_TRUE(pmr_try_resize(&d.base, p, 300, 50, 8));
  EXPECT_EQ(pmr_debug_resource_get_stats(&d).bytes_in_use, 50u);
  EXPECT_EQ(pmr_debug_resource_get_stats(&d).peak_bytes_in_use, 300u);
  // The old size no longer matches.
  EXPECT_FALSE(pmr_try_resize(&d.base, p, 300, 400, 8));
  ASSERT_EQ(m.v_.size(), 2u);
  EXPECT_TRUE(
      Has(m.v_[1],
          "was allocated with 50 bytes, alignment 8, but resized from 300 "
          "bytes, alignment 8"))
      << m.v_[1];
  pmr_debug_resource_fail_always(&d);
  EXPECT_FALSE(
      pmr_try_resize(&d.base, p, 50, 60, 8));          // growth obeys injection
  EXPECT_TRUE(pmr_try_resize(&d.base, p, 50, 40, 8));  // shrinking does not
  pmr_debug_resource_stop_failing(&d);
  pmr_deallocate(&d.base, p, 40, 8);
  EXPECT_FALSE(pmr_try_resize(&d.base, p, 40, 50, 8));  // freed
  EXPECT_TRUE(Has(m.v_.back(), "try_resize of freed block " + Ptr(p)))
      << m.v_.back();
  EXPECT_EQ(pmr_debug_resource_destroy(&d), 0u);
  pmr_monotonic_buffer_destroy(&mono);

  pmr_debug_resource h;
  pmr_debug_resource_init(&h, &o, pmr_malloc_resource());
  void* x = pmr_allocate(&h.base, 10, 8);
  EXPECT_FALSE(pmr_try_resize(&h.base, x, 10, 20, 8));  // malloc cannot
  pmr_deallocate(&h.base, x, 10, 8);
  EXPECT_EQ(pmr_debug_resource_destroy(&h), 0u);
  EXPECT_EQ(m.v_.size(), 3u);
}

// ---- failure injection ------------------------------------------------------

TEST_F(DebugTest, FailTheNthAllocation) {
  pmr_debug_resource_fail_nth(&d_, 3);
  void* a = pmr_allocate(r(), 8, 8);
  void* b = pmr_allocate(r(), 8, 8);
  errno = 0;
  EXPECT_EQ(pmr_allocate(r(), 8, 8), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  void* c = pmr_allocate(r(), 8, 8);  // only that one
  EXPECT_NE(a, nullptr);
  EXPECT_NE(b, nullptr);
  EXPECT_NE(c, nullptr);
  pmr_debug_resource_stats k = C();
  EXPECT_EQ(k.allocations, 3u);
  EXPECT_EQ(k.failed_allocations, 1u);
  EXPECT_EQ(k.injected_failures, 1u);
  EXPECT_EQ(k.misuse, 0u);
  EXPECT_EQ(up_.allocations(), 3u);  // the failure never reached upstream
  pmr_debug_resource_fail_nth(&d_, 1);
  pmr_debug_resource_fail_nth(&d_, 0);  // cancelled
  void* e = pmr_allocate(r(), 8, 8);
  EXPECT_NE(e, nullptr);
  for (void* p : {a, b, c, e}) pmr_deallocate(r(), p, 8, 8);
  EXPECT_TRUE(m_.v_.empty());
}

TEST_F(DebugTest, FailOverAByteLimit) {
  pmr_debug_resource_fail_over_bytes(&d_, 100);
  void* a = pmr_allocate(r(), 60, 8);
  ASSERT_NE(a, nullptr);
  errno = 0;
  EXPECT_EQ(pmr_allocate(r(), 41, 8), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  void* b = pmr_allocate(r(), 40, 8);  // exactly 100 in use
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(pmr_allocate(r(), 0, 8) != nullptr, true);  // 0 bytes still fit
  pmr_deallocate(r(), a, 60, 8);
  void* c = pmr_allocate(r(), 60, 8);  // room again
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(C().injected_failures, 1u);
  pmr_debug_resource_stop_failing(&d_);
  void* big = pmr_allocate(r(), 1000, 8);
  ASSERT_NE(big, nullptr);
  pmr_deallocate(r(), big, 1000, 8);
  pmr_deallocate(r(), b, 40, 8);
  pmr_deallocate(r(), c, 60, 8);
  EXPECT_EQ(Destroy(), 1u);  // the 0-byte block
  EXPECT_EQ(m_.v_.size(), 1u);
}

TEST_F(DebugTest, FailAlwaysThenStop) {
  pmr_debug_resource_fail_always(&d_);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(pmr_allocate(r(), 8, 8), nullptr);
  EXPECT_TRUE(up_.calls().empty());
  pmr_debug_resource_stop_failing(&d_);
  void* p = pmr_allocate(r(), 8, 8);
  EXPECT_NE(p, nullptr);
  pmr_deallocate(r(), p, 8, 8);
  EXPECT_EQ(C().injected_failures, 5u);
  EXPECT_EQ(C().failed_allocations, 5u);
}

TEST_F(DebugTest, UpstreamFailureIsCountedNotInjected) {
  up_.fail_always();
  errno = 0;
  EXPECT_EQ(pmr_allocate(r(), 8, 8), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  up_.never_fail();
  EXPECT_EQ(C().failed_allocations, 1u);
  EXPECT_EQ(C().injected_failures, 0u);
}

// A caller's out-of-memory path: a pool over the debug resource gets NULL
// while upstream fails (after falling back to smaller segments), and works
// again once upstream does.
TEST_F(DebugTest, APoolOverAFailingUpstreamFailsCleanlyAndRecovers) {
  pmr_unsynchronized_pool pool;
  pmr_unsynchronized_pool_init(&pool, nullptr, r());
  pmr_debug_resource_fail_always(&d_);
  errno = 0;
  EXPECT_EQ(pmr_allocate(&pool.base, 32, 8), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_GE(C().injected_failures, 1u);
  pmr_debug_resource_stop_failing(&d_);
  // One failure is absorbed: the pool asks for a smaller segment instead.
  pmr_debug_resource_fail_nth(&d_, 1);
  errno = 0;
  std::vector<void*> v;
  for (int i = 0; i < 20; ++i) {
    void* p = pmr_allocate(&pool.base, 32, 8);
    ASSERT_NE(p, nullptr) << i;
    v.push_back(p);
  }
  EXPECT_EQ(errno, 0);  // success leaves errno as it was
  for (void* p : v) pmr_deallocate(&pool.base, p, 32, 8);
  pmr_unsynchronized_pool_destroy(&pool);
  EXPECT_EQ(C().blocks_in_use, 0u);
  EXPECT_TRUE(m_.v_.empty());
}

// ---- abort ----------------------------------------------------------------

TEST(DebugAbort, DefaultOptionsAbortAfterTheMessage) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  {
    pmr_debug_resource d;
    pmr_debug_resource_init(&d, nullptr, nullptr);
    pmr_debug_resource_options o = pmr_debug_resource_get_options(&d);
    EXPECT_FALSE(o.continue_on_misuse);
    EXPECT_FALSE(o.no_quarantine);
    EXPECT_EQ(o.quarantine_blocks, 1024u);
    EXPECT_EQ(o.quarantine_bytes, size_t{4} << 20);
    pmr_debug_resource_options zero{};
    pmr_debug_resource_init(&d, &zero, nullptr);
    o = pmr_debug_resource_get_options(&d);
    EXPECT_FALSE(o.continue_on_misuse);
    EXPECT_EQ(o.quarantine_blocks, 1024u);
    EXPECT_EQ(o.quarantine_bytes, size_t{4} << 20);
    pmr_debug_resource_destroy(&d);
  }
  EXPECT_DEATH(
      {
        pmr_debug_resource d;
        pmr_debug_resource_init(&d, nullptr, nullptr);
        void* p = pmr_allocate(&d.base, 24, 8);
        pmr_deallocate(&d.base, p, 24, 8);
        pmr_deallocate(&d.base, p, 24, 8);
      },
      "pmr: debug_resource 0x[0-9a-f]+: double free of 0x[0-9a-f]+");
  EXPECT_DEATH(
      {
        pmr_debug_resource d;
        pmr_debug_resource_init(&d, nullptr, nullptr);
        pmr_allocate(&d.base, 24, 8);
        pmr_debug_resource_destroy(&d);
      },
      "leak 1 of 1: block 0x[0-9a-f]+ \\(#1, 24 bytes, alignment 8\\)");
}

TEST(DebugAbort, TheFlagCanBeTurnedOff) {
  Messages m;
  pmr_debug_resource d;
  pmr_debug_resource_init(&d, nullptr, nullptr);
  pmr_debug_resource_set_abort_on_misuse(&d, false);
  void* p = pmr_allocate(&d.base, 24, 8);
  pmr_deallocate(&d.base, p, 24, 8);
  pmr_deallocate(&d.base, p, 24, 8);  // still alive
  EXPECT_EQ(m.v_.size(), 1u);
  EXPECT_EQ(pmr_debug_resource_destroy(&d), 0u);
}

// ---- threads ---------------------------------------------------------------

// Eight threads: every count exact. Also over a single-threaded pool, which
// is safe because upstream is only called under the debug resource's lock.
class DebugThreads : public ::testing::TestWithParam<bool> {};

TEST_P(DebugThreads, EightThreadsGiveExactCounts) {
  Messages m;
  CountingResource up;
  pmr_unsynchronized_pool pool;
  pmr_unsynchronized_pool_init(&pool, nullptr, up.get());
  pmr_debug_resource_options o = Opts("threads", 64);
  pmr_debug_resource d;
  pmr_debug_resource_init(&d, &o, GetParam() ? &pool.base : up.get());
  constexpr int kThreads = 8, kRounds = 5000, kKeep = 16;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&d, t] {
      std::vector<std::pair<unsigned char*, size_t>> live;
      for (int i = 0; i < kRounds; ++i) {
        size_t n = (i * 5 + t) % 300;
        auto* p = static_cast<unsigned char*>(pmr_allocate(&d.base, n, 8));
        ASSERT_NE(p, nullptr);
        std::memset(p, t, n);
        live.emplace_back(p, n);
        if (live.size() > kKeep) {
          auto b = live.front();
          live.erase(live.begin());
          for (size_t k = 0; k < b.second; ++k) ASSERT_EQ(b.first[k], t);
          pmr_deallocate(&d.base, b.first, b.second, 8);
        }
        if (i % 1000 == 0) pmr_debug_resource_check(&d);
      }
      for (auto& b : live) pmr_deallocate(&d.base, b.first, b.second, 8);
    });
  }
  for (auto& th : threads) th.join();
  pmr_debug_resource_stats c = pmr_debug_resource_get_stats(&d);
  EXPECT_EQ(c.allocations, uint64_t{kThreads} * kRounds);
  EXPECT_EQ(c.deallocations, uint64_t{kThreads} * kRounds);
  EXPECT_EQ(c.blocks_in_use, 0u);
  EXPECT_EQ(c.bytes_in_use, 0u);
  EXPECT_EQ(c.misuse, 0u);
  EXPECT_EQ(c.quarantined_blocks, 64u);
  EXPECT_EQ(pmr_debug_resource_destroy(&d), 0u);
  pmr_unsynchronized_pool_destroy(&pool);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  EXPECT_EQ(up.mismatches(), 0u) << up.last_mismatch();
  EXPECT_TRUE(m.v_.empty());
}

INSTANTIATE_TEST_SUITE_P(Upstreams, DebugThreads, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "over_unsynchronized_pool"
                                             : "over_counting";
                         });

// ---- stacking --------------------------------------------------------------

TEST_F(DebugTest, APoolOverItLeavesNoLeaks) {
  for (int sync = 0; sync < 2; ++sync) {
    pmr_unsynchronized_pool u;
    pmr_synchronized_pool s;
    pmr_mem_resource* pool;
    if (sync) {
      pmr_synchronized_pool_init(&s, nullptr, r());
      pool = &s.base;
    } else {
      pmr_unsynchronized_pool_init(&u, nullptr, r());
      pool = &u.base;
    }
    std::vector<void*> v;
    for (int i = 0; i < 2000; ++i)
      v.push_back(pmr_allocate(pool, 1 + i % 700, 8));
    v.push_back(pmr_allocate(pool, 100000, 64));  // oversize
    EXPECT_GT(C().blocks_in_use, 0u);
    for (size_t i = 0; i < v.size(); i += 2)
      pmr_deallocate(pool, v[i], i + 1 == v.size() ? 100000 : 1 + i % 700,
                     i + 1 == v.size() ? 64 : 8);
    // The rest is dropped by destroying the pool.
    if (sync)
      pmr_synchronized_pool_destroy(&s);
    else
      pmr_unsynchronized_pool_destroy(&u);
    EXPECT_EQ(C().blocks_in_use, 0u);
    EXPECT_EQ(pmr_debug_resource_check(&d_), 0u);
  }
  EXPECT_TRUE(m_.v_.empty());
}

TEST_F(DebugTest, AnArenaOverItLeavesNoLeaks) {
  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init_with_size(&m, 256, r());
  for (int i = 0; i < 1000; ++i)
    ASSERT_NE(pmr_allocate(&m.base, 1 + i % 100, 16), nullptr);
  EXPECT_GT(C().blocks_in_use, 1u);
  pmr_monotonic_buffer_destroy(&m);
  EXPECT_EQ(C().blocks_in_use, 0u);
  EXPECT_TRUE(m_.v_.empty());
}

TEST(DebugStacking, InFrontOfAPoolAndAnArena) {
  Messages msgs;
  CountingResource up;
  pmr_unsynchronized_pool pool;
  pmr_unsynchronized_pool_init(&pool, nullptr, up.get());
  pmr_debug_resource_options o = Opts("front");
  pmr_debug_resource d;
  pmr_debug_resource_init(&d, &o, &pool.base);
  auto* p = static_cast<unsigned char*>(pmr_allocate(&d.base, 24, 8));
  p[24] = 0;  // overrun into what would be the pool's next block
  pmr_deallocate(&d.base, p, 24, 8);
  ASSERT_EQ(msgs.v_.size(), 1u);
  EXPECT_TRUE(Has(msgs.v_[0], "buffer overrun after block " + Ptr(p)))
      << msgs.v_[0];
  void* q = pmr_allocate(&d.base, 24, 8);
  (void)q;  // leaked on purpose
  EXPECT_EQ(pmr_debug_resource_destroy(&d), 1u);
  pmr_unsynchronized_pool_destroy(&pool);
  EXPECT_EQ(up.outstanding_blocks(), 0u);

  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init(&m, up.get());
  pmr_debug_resource_init(&d, &o, &m.base);
  for (int i = 0; i < 100; ++i) {
    void* x = pmr_allocate(&d.base, 40, 16);
    pmr_deallocate(&d.base, x, 40, 16);
  }
  EXPECT_EQ(pmr_debug_resource_destroy(&d), 0u);
  pmr_monotonic_buffer_destroy(&m);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  EXPECT_EQ(msgs.v_.size(), 2u);  // overrun + leak; nothing from the arena run
}

TEST(DebugStacking, WithStatisticsOnEitherSide) {
  Messages msgs;
  CountingResource up;
  pmr_statistics below, above;
  pmr_statistics_init(&below, up.get());
  pmr_debug_resource_options o = Opts("mid", 0, 0);
  pmr_debug_resource d;
  pmr_debug_resource_init(&d, &o, &below.base);
  pmr_statistics_init(&above, &d.base);
  void* p = pmr_allocate(&above.base, 100, 8);
  void* q = pmr_allocate(&above.base, 7, 64);
  pmr_statistics_stats a = pmr_statistics_get_stats(&above);
  pmr_statistics_stats b = pmr_statistics_get_stats(&below);
  EXPECT_EQ(a.bytes_in_use, 107u);
  EXPECT_EQ(b.allocations, 2u);
  EXPECT_GE(b.bytes_in_use, 107u + 4 * PMR_DEBUG_GUARD_BYTES);  // guards cost
  pmr_deallocate(&above.base, p, 100, 8);
  pmr_deallocate(&above.base, q, 7, 64);
  EXPECT_EQ(pmr_statistics_get_stats(&below).bytes_in_use, 0u);
  EXPECT_EQ(pmr_statistics_get_stats(&above).deallocations, 2u);
  pmr_statistics_destroy(&above);
  EXPECT_EQ(pmr_debug_resource_destroy(&d), 0u);
  pmr_statistics_destroy(&below);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  EXPECT_TRUE(msgs.v_.empty());
}

}  // namespace

namespace {

// Aborting (the default) happens only with the default handler: a
// handler of the user's takes over, and the program goes on.
TEST(DebugResourceHandler, AUsersHandlerTakesOverFromAbort) {
  pmrtest::CountingResource up;
  pmr_debug_resource d;
  pmr_debug_resource_options o{};
  o.name = "handled";
  pmr_debug_resource_init(&d, &o, up.get());
  Messages m;
  void* p = pmr_allocate(&d.base, 16, 8);
  pmr_deallocate(&d.base, p, 16, 8);
  pmr_deallocate(&d.base, p, 16, 8);  // double free: reported, not fatal
  ASSERT_EQ(m.v_.size(), 1u);
  EXPECT_TRUE(Has(m.v_[0], "handled")) << m.v_[0];
  EXPECT_TRUE(Has(m.v_[0], "double free")) << m.v_[0];
  EXPECT_EQ(pmr_debug_resource_destroy(&d), 0u);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
}

}  // namespace
