// pmr_monotonic_buffer against a reference model: long random sequences of
// allocate, mark, rewind, reset, release and pmr_try_resize of the latest
// block, every operation checked (no overlap of live blocks, alignment,
// contents kept, bytes_used after each rewind, valid markers accepted, stale
// ones refused without harm), over the resource's three shapes: an initial
// buffer at an odd address, an initial size, and the null resource upstream.
//
// The model knows positions only as "how many blocks are live": a marker's
// position is the number of live blocks when it was taken, and a drop to
// position d (a rewind to a marker at d, a try_resize of block d) makes
// stale every marker positioned above d. Reset and release make every
// marker stale.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <vector>

#include "resources/pmr_monotonic_buffer.h"
#include "tests/testkit/counting_resource.h"

namespace {

using pmrtest::CountingResource;

uintptr_t U(const void* p) { return reinterpret_cast<uintptr_t>(p); }

enum class Shape { kBuffer, kSize, kNullUpstream };

struct Block {
  char* p;
  size_t n;  // bytes asked (0 allowed)
  size_t alignment;
  unsigned char fill;
};

struct Marker {
  pmr_monotonic_marker mk;
  size_t pos;   // live blocks when taken
  size_t used;  // bytes_used when taken
  bool valid;
  uint64_t drops;  // model drops (rewinds, resizes) before it was taken
};

// The header's one permitted refusal of a valid marker
// (pmr_monotonic_buffer_rewind), when upstream refuses the bookkeeping's
// array (here: the null resource upstream, `bounded`): once a fifth rising
// stop position would be remembered, until a drop stops at or below the
// third, a valid marker positioned above the third and taken before the
// newest drop may be refused. Stop positions are counted in half blocks: a
// rewind to a marker at position k stops at 2k, a try_resize of block j
// (the latest) at its start, 2j + 1, above the markers at j. The resource
// sees the two as one place when block j starts where marker j is (no
// padding, same buffer): then it remembers fewer stops than the model and
// refuses less than the model permits.
struct Model {
  bool bounded = false;
  std::vector<Block> live;    // in allocation order: a stack
  std::vector<Marker> marks;  // recent markers, stale ones too
  std::vector<size_t> stops;  // rising stop positions since reset, halves
  bool lossy = false;         // the bookkeeping forgot above stops[2]
  uint64_t drops = 0;

  // Everything above half position h is dropped.
  void Drop(size_t h) {
    ++drops;
    for (Marker& x : marks)
      if (2 * x.pos > h) x.valid = false;
    while (!stops.empty() && stops.back() >= h) stops.pop_back();
    if (lossy && stops.size() < 3) lossy = false;
    if (bounded && stops.size() == PMR_IMPL_MONO_RUNS) lossy = true;
    stops.push_back(h);
  }
  void Rewound(size_t k) {
    Drop(2 * k);
    live.resize(k);
  }
  void Resized(size_t j) { Drop(2 * j + 1); }
  void DropAll() {
    ++drops;
    for (Marker& x : marks) x.valid = false;
    stops.clear();
    lossy = false;
    live.clear();
  }
  bool MayRefuse(const Marker& x) const {
    return lossy && 2 * x.pos > stops[2] && x.drops < drops;
  }
};

// What a run exercised, so that a model that stopped reaching a case shows.
struct Counts {
  size_t accepted = 0, refused_stale = 0, refused_valid = 0, resized = 0,
         new_chunks = 0;
};

class Runner {
 public:
  Runner(Shape shape, uint32_t seed, size_t variant)
      : shape_(shape), rng_(seed), storage_(4096 + 64) {
    switch (shape) {
      case Shape::kBuffer: {
        size_t offset = 1 + 2 * (variant % 7);  // odd
        size_t size = 2000 + (seed * 131 + variant * 97) % 900;
        pmr_monotonic_buffer_init_with_buffer(&m_, storage_.data() + offset,
                                              size, up_.get());
        break;
      }
      case Shape::kSize: {
        static const size_t kSizes[] = {0, 700, 1400};
        pmr_monotonic_buffer_init_with_size(&m_, kSizes[variant % 3],
                                            up_.get());
        break;
      }
      case Shape::kNullUpstream: {
        model_.bounded = true;
        size_t offset = 1 + 2 * (variant % 5);
        size_t size = 2000 + (seed * 71 + variant * 53) % 900;
        pmr_monotonic_buffer_init_with_buffer(&m_, storage_.data() + offset,
                                              size, pmr_null_resource());
        break;
      }
    }
  }
  ~Runner() { pmr_monotonic_buffer_destroy(&m_); }

  size_t Used() const { return pmr_monotonic_buffer_bytes_used(&m_); }

  // A block's bytes are kPattern[fill + i]: copied and compared whole (fast
  // under the sanitizers too).
  static const unsigned char* Pattern() {
    static const std::vector<unsigned char> kPattern = [] {
      std::vector<unsigned char> v(8192 + 256);
      for (size_t i = 0; i < v.size(); ++i)
        v[i] = static_cast<unsigned char>(i);
      return v;
    }();
    return kPattern.data();
  }
  void CheckBlock(const Block& b, size_t n) {
    ASSERT_EQ(std::memcmp(b.p, Pattern() + b.fill, n), 0)
        << "the first " << n << " bytes of a live block of " << b.n;
  }
  // First, middle and last bytes of every live block.
  void CheckLive() {
    for (const Block& b : model_.live) {
      if (b.n == 0) continue;
      for (size_t i : {size_t{0}, b.n / 2, b.n - 1})
        ASSERT_EQ(static_cast<unsigned char>(b.p[i]),
                  static_cast<unsigned char>(b.fill + i));
    }
  }
  static void Fill(Block& b, size_t from) {
    if (b.n > from)
      std::memcpy(b.p + from, Pattern() + b.fill + from, b.n - from);
  }

  size_t Size() {
    switch (rng_() % 4) {
      case 0:
        return rng_() % 16;
      case 1:
        return rng_() % 300;
      default:
        return rng_() % 5001;
    }
  }
  size_t Alignment() {
    unsigned r = rng_() % 16;
    return size_t{1} << (r < 8 ? r % 4 : r - 4);  // 1..4096, small ones often
  }

  void Allocate() {
    size_t n = Size(), al = Alignment();
    size_t before = Used();
    char* p = static_cast<char*>(
        rng_() % 2 ? pmr_allocate(&m_.base, n, al)
                   : pmr_monotonic_buffer_allocate(&m_, n, al));
    if (p == nullptr) {
      ASSERT_EQ(shape_, Shape::kNullUpstream) << "allocate " << n << " " << al;
      ASSERT_EQ(Used(), before);
      return;
    }
    ASSERT_EQ(U(p) % al, 0u);
    ASSERT_GE(Used(), before + std::max<size_t>(n, 1));
    size_t end = U(p) + std::max<size_t>(n, 1);
    for (const Block& b : model_.live)
      ASSERT_TRUE(end <= U(b.p) || U(b.p) + std::max<size_t>(b.n, 1) <= U(p))
          << "overlaps a live block";
    Block b{p, n, al, static_cast<unsigned char>(rng_())};
    Fill(b, 0);
    model_.live.push_back(b);
  }

  void Mark() {
    model_.marks.push_back({pmr_monotonic_buffer_mark(&m_), model_.live.size(),
                            Used(), true, model_.drops});
    if (model_.marks.size() > 48)
      model_.marks.erase(model_.marks.begin() + rng_() % 48);
  }

  void Rewind() {
    if (model_.marks.empty()) return;
    // The newest markers more often: deep rising sequences.
    size_t k = model_.marks.size();
    size_t i =
        rng_() % 2 ? k - 1 - rng_() % std::min<size_t>(k, 4) : rng_() % k;
    Marker x = model_.marks[i];
    size_t before = Used();
    bool ok = pmr_monotonic_buffer_rewind(&m_, x.mk);

    if (!x.valid) {
      ASSERT_FALSE(ok) << "a stale marker was accepted";
      ++counts_.refused_stale;
    } else if (!ok) {
      ASSERT_TRUE(model_.MayRefuse(x)) << "a valid marker was refused";
      ++counts_.refused_valid;
      model_.marks[i].valid = false;  // the caller gives it up
    }
    if (!ok) {
      ASSERT_EQ(Used(), before);
      return;
    }
    ASSERT_EQ(Used(), x.used);
    ++counts_.accepted;
    model_.Rewound(x.pos);
    CheckLive();
  }

  void TryResize() {
    if (model_.live.empty()) return;
    size_t j = model_.live.size() - 1;
    if (rng_() % 8 == 0 && j > 0) j = rng_() % j;  // not the latest: refused
    Block& b = model_.live[j];
    size_t n;
    switch (rng_() % 3) {
      case 0:
        n = b.n / 2;
        break;
      case 1:
        n = b.n + rng_() % 64;
        break;
      default:
        n = Size();
    }
    n = std::min<size_t>(n, 6000);  // within Pattern()
    size_t left = pmr_monotonic_buffer_bytes_left(&m_);
    size_t before = Used();
    bool latest = j + 1 == model_.live.size();
    bool fits = std::max<size_t>(n, 1) <= std::max<size_t>(b.n, 1) + left;
    // A wrong old size is refused too.
    size_t old = rng_() % 16 == 0 ? b.n + 2 : b.n;
    const Block& top = model_.live.back();
    if ((!latest || old != b.n) && U(b.p) + std::max<size_t>(old, 1) ==
                                       U(top.p) + std::max<size_t>(top.n, 1))
      return;  // would claim the blocks after it: a caller error
    bool ok = pmr_try_resize(&m_.base, b.p, old, n, b.alignment);
    ASSERT_EQ(ok, latest && fits && old == b.n)
        << "try_resize " << b.n << " -> " << n << " left " << left;
    if (!ok) {
      ASSERT_EQ(Used(), before);
      return;
    }
    ASSERT_EQ(Used() + std::max<size_t>(b.n, 1),
              before + std::max<size_t>(n, 1));
    CheckBlock(b, std::min(b.n, n));
    size_t was = b.n;
    b.n = n;
    Fill(b, std::min(was, n));
    ++counts_.resized;
    model_.Resized(j);  // markers taken after the block was allocated
  }

  void Run(int steps) {
    for (int step = 0; step < steps; ++step) {
      unsigned op = rng_() % 100;
      if (op < 38)
        Allocate();
      else if (op < 56)
        Mark();
      else if (op < 80)
        Rewind();
      else if (op < 96)
        TryResize();
      else if (op < 98 || model_.live.size() > 400) {
        pmr_monotonic_buffer_reset(&m_);
        model_.DropAll();
        ASSERT_EQ(Used(), 0u);
      } else {
        pmr_monotonic_buffer_release(&m_);
        model_.DropAll();
        ASSERT_EQ(Used(), 0u);
        ASSERT_EQ(up_.outstanding_blocks(), 0u);
      }
      if (::testing::Test::HasFatalFailure()) {
        ADD_FAILURE() << "at step " << step;
        return;
      }
    }
    counts_.new_chunks = up_.allocations();
    pmr_monotonic_buffer_release(&m_);
    EXPECT_EQ(up_.outstanding_blocks(), 0u);
    EXPECT_EQ(up_.mismatches(), 0u) << up_.last_mismatch();
  }

 private:
  Shape shape_;
  std::mt19937 rng_;
  std::vector<char> storage_;
  CountingResource up_;
  pmr_monotonic_buffer m_;
  Model model_;

 public:
  Counts counts_;
};

Counts RunSeeds(Shape shape) {
  Counts total;
  // More seeds on request (PMR_MODEL_SEEDS=1000), the same ones each run.
  const char* env = std::getenv("PMR_MODEL_SEEDS");
  uint32_t seeds = env != nullptr ? static_cast<uint32_t>(std::atoi(env)) : 8;
  for (uint32_t seed = 1; seed <= seeds; ++seed) {
    for (size_t variant = 0; variant < 3; ++variant) {
      SCOPED_TRACE(::testing::Message()
                   << "seed " << seed << " variant " << variant);
      Runner r(shape, seed * 1000 + static_cast<uint32_t>(variant), variant);
      r.Run(4000);
      if (::testing::Test::HasFailure()) return total;
      total.accepted += r.counts_.accepted;
      total.refused_stale += r.counts_.refused_stale;
      total.refused_valid += r.counts_.refused_valid;
      total.resized += r.counts_.resized;
      total.new_chunks += r.counts_.new_chunks;
    }
  }
  std::printf(
      "rewinds accepted %zu, stale refused %zu, valid refused %zu (allowed), "
      "resizes %zu, upstream allocations %zu\n",
      total.accepted, total.refused_stale, total.refused_valid, total.resized,
      total.new_chunks);
  EXPECT_GT(total.accepted, 1000u);
  EXPECT_GT(total.refused_stale, 1000u);
  EXPECT_GT(total.resized, 1000u);
  return total;
}

// Upstream never refuses here: every valid marker is accepted.
TEST(MonotonicModel, InitialBufferAtAnOddAddress) {
  Counts c = RunSeeds(Shape::kBuffer);
  EXPECT_EQ(c.refused_valid, 0u);
  EXPECT_GT(c.new_chunks, 100u);
}
TEST(MonotonicModel, InitialSize) {
  Counts c = RunSeeds(Shape::kSize);
  EXPECT_EQ(c.refused_valid, 0u);
  EXPECT_GT(c.new_chunks, 100u);
}
// Only the initial buffer: allocations past it fail, and so does the
// bookkeeping's array.
TEST(MonotonicModel, NullUpstream) { RunSeeds(Shape::kNullUpstream); }

}  // namespace
