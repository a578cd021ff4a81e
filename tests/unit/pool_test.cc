// pmr_unsynchronized_pool and pmr_synchronized_pool: std::pmr's pool
// contract, size classes, chunks, oversize blocks, release. Both pools run
// every test here; thread tests are in synchronized_pool_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "resources/internal/pool_classes.h"
#include "resources/pmr_synchronized_pool.h"
#include "resources/pmr_thread_cache.h"
#include "resources/pmr_unsynchronized_pool.h"
#include "tests/testkit/clock.h"
#include "tests/testkit/counting_resource.h"
#include "tests/testkit/pools.h"

namespace {

using pmrtest::Call;
using pmrtest::CountingResource;

uintptr_t U(const void* p) { return reinterpret_cast<uintptr_t>(p); }

using pmrtest::Pool;

class PoolTest : public ::testing::TestWithParam<bool> {
 protected:
  std::unique_ptr<Pool> Make(const pmr_pool_options* o = nullptr) {
    if (GetParam())
      return std::unique_ptr<Pool>(new pmrtest::SyncPool(o, up_.get()));
    return std::unique_ptr<Pool>(new pmrtest::UnsyncPool(o, up_.get()));
  }
  void TearDown() override {
    EXPECT_EQ(up_.outstanding_blocks(), 0u);
    EXPECT_EQ(up_.mismatches(), 0u) << up_.last_mismatch();
  }
  std::vector<Call> UpAllocs() {
    std::vector<Call> out;
    for (const Call& c : up_.calls())
      if (c.kind == Call::kAllocate) out.push_back(c);
    return out;
  }
  CountingResource up_;
};

TEST_P(PoolTest, ZeroOptionsMeanTheDefaults) {
  pmr_pool_options zero = {0, 0, 0};
  for (const pmr_pool_options* o :
       {static_cast<const pmr_pool_options*>(nullptr),
        static_cast<const pmr_pool_options*>(&zero)}) {
    auto p = Make(o);
    EXPECT_EQ(p->options().max_blocks_per_chunk,
              PMR_POOL_DEFAULT_MAX_BLOCKS_PER_CHUNK);
    EXPECT_EQ(p->options().largest_required_pool_block,
              PMR_POOL_DEFAULT_LARGEST_BLOCK);
    EXPECT_EQ(p->upstream(), up_.get());
  }
}

TEST_P(PoolTest, TooLargeOptionsClampToTheMaximumIncludingSizeMax) {
  // libstdc++ 12 clamps largest_required_pool_block = SIZE_MAX to its minimum.
  pmr_pool_options o = {SIZE_MAX, SIZE_MAX, 0};
  auto p = Make(&o);
  EXPECT_EQ(p->options().max_blocks_per_chunk,
            PMR_POOL_MAX_MAX_BLOCKS_PER_CHUNK);
  // The pools serve blocks up to PMR_POOL_PAGE_LARGEST_BLOCK from pages.
  EXPECT_EQ(p->options().largest_required_pool_block,
            PMR_POOL_PAGE_LARGEST_BLOCK);
  pmr_pool_options o2 = {PMR_POOL_MAX_MAX_BLOCKS_PER_CHUNK + 1,
                         PMR_IMPL_POOL_MAX_CLASS_SIZE + 1, 0};
  auto q = Make(&o2);
  EXPECT_EQ(q->options().max_blocks_per_chunk,
            PMR_POOL_MAX_MAX_BLOCKS_PER_CHUNK);
  EXPECT_EQ(q->options().largest_required_pool_block,
            PMR_POOL_PAGE_LARGEST_BLOCK);
  EXPECT_EQ(q->options().max_free_bytes, PMR_POOL_DEFAULT_MAX_FREE_BYTES);
}

// pmr_pool_options.h: the thread cache clamps largest_required_pool_block
// to PMR_POOL_PAGE_LARGEST_BLOCK as the pools do.
TEST(PoolOptions, TheThreadCacheClampsLargestToThePageLimitToo) {
  pmr_thread_cache_options o = {};
  o.pool.largest_required_pool_block = PMR_IMPL_POOL_MAX_CLASS_SIZE;
  pmr_thread_cache tc;
  ASSERT_TRUE(pmr_thread_cache_init(&tc, &o, nullptr));
  EXPECT_EQ(pmr_thread_cache_get_options(&tc).pool.largest_required_pool_block,
            PMR_POOL_PAGE_LARGEST_BLOCK);
  pmr_thread_cache_destroy(&tc);
}

TEST_P(PoolTest, OptionsRoundTrip) {
  for (size_t largest : {size_t{1}, size_t{8}, size_t{100}, size_t{1000},
                         size_t{4096}, size_t{5000}, size_t{65536}}) {
    pmr_pool_options o = {7, largest, 0};
    auto p = Make(&o);
    pmr_pool_options eff = p->options();
    EXPECT_EQ(eff.max_blocks_per_chunk, 7u);
    EXPECT_GE(eff.largest_required_pool_block,
              std::min(largest, PMR_POOL_PAGE_LARGEST_BLOCK));
    auto q = Make(&eff);
    EXPECT_EQ(q->options().max_blocks_per_chunk, eff.max_blocks_per_chunk);
    EXPECT_EQ(q->options().largest_required_pool_block,
              eff.largest_required_pool_block);
  }
}

TEST_P(PoolTest, ReportedLargestBlockIsTheTrueThreshold) {
  for (size_t asked : {size_t{100}, size_t{4096}, size_t{3000}}) {
    pmr_pool_options o = {0, asked, 0};
    auto p = Make(&o);
    size_t largest = p->options().largest_required_pool_block;
    // Pooled: after the first chunk, alloc/free of `largest` never calls
    // upstream.
    pmr_deallocate(p->get(), pmr_allocate(p->get(), largest, 1), largest, 1);
    size_t calls = up_.calls().size();
    for (int i = 0; i < 3; ++i)
      pmr_deallocate(p->get(), pmr_allocate(p->get(), largest, 1), largest, 1);
    EXPECT_EQ(up_.calls().size(), calls) << largest;
    // One byte more goes straight to upstream and back, every time.
    for (int i = 0; i < 3; ++i)
      pmr_deallocate(p->get(), pmr_allocate(p->get(), largest + 1, 1),
                     largest + 1, 1);
    EXPECT_EQ(up_.calls().size(), calls + 6) << largest;
  }
}

TEST_P(PoolTest, InitNeverCallsUpstream) {
  pmr_pool_options o = {3, 100000, 0};
  auto p = Make(&o);
  auto q = Make();
  EXPECT_EQ(up_.calls().size(), 0u);
}

// resources/README.md, "Where the pools depart from std::pmr on purpose":
// a class's first block comes from a free page the pool holds, with no
// upstream call (std asks upstream for a first chunk per class).
TEST_P(PoolTest, TheFirstBlockOfAClassMakesNoUpstreamCall) {
  auto p = Make();
  void* first = pmr_allocate(p->get(), 64, 8);
  ASSERT_NE(first, nullptr);
  const size_t calls = up_.calls().size();
  std::vector<std::pair<void*, size_t>> v;
  // The first segment (256 KiB) holds four pages: three more classes.
  for (size_t n : {24, 1000, 8000}) {
    v.emplace_back(pmr_allocate(p->get(), n, 8), n);
    ASSERT_NE(v.back().first, nullptr);
  }
  EXPECT_EQ(up_.calls().size(), calls);
  for (auto& b : v) pmr_deallocate(p->get(), b.first, b.second, 8);
  pmr_deallocate(p->get(), first, 64, 8);
}

// ... and with max_free_bytes = 1 upstream sees every oversize request and
// every free of one, as under std's pools.
TEST_P(PoolTest, OversizeTrafficIsStdsWithMaxFreeBytesOne) {
  pmr_pool_options o = {0, 0, 1};
  auto p = Make(&o);
  for (int round = 0; round < 3; ++round) {
    const size_t allocs = up_.allocations(), frees = up_.deallocations();
    void* a = pmr_allocate(p->get(), 20000, 16);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(up_.allocations(), allocs + 1);
    pmr_deallocate(p->get(), a, 20000, 16);
    EXPECT_EQ(up_.deallocations(), frees + 1);
  }
  EXPECT_EQ(p->stats().held_bytes, 0u);
}

constexpr uintptr_t kPage = uintptr_t{1} << 16;

uintptr_t PageOf(void* p) {
  return reinterpret_cast<uintptr_t>(p) & ~(kPage - 1);
}

TEST_P(PoolTest, MaxBlocksPerChunkBoundsTheBlocksOfAPage) {
  pmr_pool_options o = {4, 0, 0};
  auto p = Make(&o);
  std::vector<void*> live;
  for (int i = 0; i < 12; ++i) live.push_back(pmr_allocate(p->get(), 64, 8));
  for (int i = 0; i < 12; ++i)
    EXPECT_EQ(PageOf(live[i]) == PageOf(live[i / 4 * 4]), true) << i;
  EXPECT_NE(PageOf(live[0]), PageOf(live[4]));
  EXPECT_NE(PageOf(live[4]), PageOf(live[8]));
  for (void* b : live) pmr_deallocate(p->get(), b, 64, 8);
}

TEST_P(PoolTest, SegmentsArePageAlignedAndGrowToOneMebibyte) {
  auto p = Make();
  std::vector<void*> live;
  for (int i = 0; i < 40000; ++i) live.push_back(pmr_allocate(p->get(), 64, 8));
  std::vector<Call> segs;
  for (const Call& c : UpAllocs())
    if (c.alignment == kPage) segs.push_back(c);
  ASSERT_GE(segs.size(), 3u);
  EXPECT_EQ(segs[0].bytes, 4 * kPage);  // small programs stay small
  for (const Call& c : segs) {
    EXPECT_EQ(c.bytes % kPage, 0u);  // no page tail for malloc to waste
    EXPECT_LE(c.bytes, 16 * kPage);
  }
  EXPECT_EQ(segs.back().bytes, 16 * kPage);
  // 40000 blocks of 64 bytes: overhead (page headers, segment rounding)
  // below 1%.
  size_t held = p->stats().held_bytes;
  EXPECT_LT(held, 40000 * 64 * 101 / 100 + 16 * kPage);
  for (void* b : live) pmr_deallocate(p->get(), b, 64, 8);
}

// A page's descriptor sits at one of 32 offsets below 4 KiB (by the page's
// address; PMR_IMPL_PAGE_COLORS), and blocks fill the page before and after it:
// 64-byte blocks leave exactly one 128-byte hole per page, and not at the same
// offset in every page (descriptors all at page starts would share cache sets).
TEST_P(PoolTest, BlocksFillEachPageAroundADescriptorThatMovesFromPageToPage) {
  auto p = Make();
  std::vector<void*> live;
  const size_t per_page = (kPage - 128) / 64;
  for (size_t i = 0; i < 16 * per_page; ++i) {
    void* b = pmr_allocate(p->get(), 64, 8);
    ASSERT_NE(b, nullptr);
    std::memset(b, 0xA5, 64);  // a block over the descriptor would break it
    live.push_back(b);
  }
  std::map<uintptr_t, std::vector<size_t>> by_page;
  for (void* b : live) by_page[PageOf(b)].push_back(U(b) - PageOf(b));
  std::set<size_t> holes;
  size_t full = 0;
  for (auto& [page, offs] : by_page) {
    // The descriptor's place follows from the page's address (its colour,
    // page_geometry.h), whatever addresses upstream gave; secure builds
    // keep a gap on either side of it (pmrtest::TableHole).
    const auto hole = pmrtest::TableHole(((page >> 16) % 32) * 128, 128, 64);
    if (offs.size() != (kPage - hole.second) / 64) continue;  // partly used
    ++full;
    auto gaps = pmrtest::GapsIn(offs, 64, kPage);
    ASSERT_EQ(gaps.size(), 1u) << "page " << page;
    EXPECT_EQ(gaps[0], hole) << "page " << page;
    EXPECT_LT(gaps[0].first, 4096u);
    holes.insert(gaps[0].first);
  }
  EXPECT_GE(full, 15u);
  EXPECT_GT(holes.size(), 1u);  // it moves from page to page
  const size_t peak = p->stats().held_bytes;
  for (void* b : live) pmr_deallocate(p->get(), b, 64, 8);
  p->trim();  // needs every descriptor intact
  EXPECT_LT(p->stats().held_bytes, peak / 100);
}

TEST_P(PoolTest, APageTakenBackHandsOutBlocksInAddressOrder) {
  // Pages freed in a shuffled order are carved again when taken back, so
  // the next allocations walk each page sequentially, not in free order.
  // (The class's current page keeps its free list: it is not given up.)
#ifdef PMR_SECURE
  GTEST_SKIP() << "secure builds carve in a random order on purpose";
#endif
  auto p = Make();
  const size_t per_page = (kPage - 128) / 64;
  std::vector<void*> live;
  for (size_t i = 0; i < 3 * per_page; ++i)
    live.push_back(pmr_allocate(p->get(), 64, 8));
  const uintptr_t current = PageOf(live.back());
  std::mt19937 rng(11);
  std::shuffle(live.begin(), live.end(), rng);
  for (void* b : live) pmr_deallocate(p->get(), b, 64, 8);
  std::map<uintptr_t, std::vector<uintptr_t>> order;  // page -> addresses
  std::vector<void*> again;
  for (size_t i = 0; i < 3 * per_page; ++i) {
    again.push_back(pmr_allocate(p->get(), 64, 8));
    order[PageOf(again.back())].push_back(U(again.back()));
  }
  size_t pages = 0;
  for (auto& [page, addrs] : order) {
    if (page == current || addrs.size() < per_page / 2) continue;
    ++pages;
    EXPECT_TRUE(std::is_sorted(addrs.begin(), addrs.end()))
        << "page " << page << " handed out in address order";
  }
  EXPECT_GE(pages, 2u);
  for (void* b : again) pmr_deallocate(p->get(), b, 64, 8);
}

TEST_P(PoolTest, AfterAShuffledFreeAllocationStaysInOnePage) {
  auto p = Make();
  std::vector<void*> live;
  for (int i = 0; i < 20000; ++i) live.push_back(pmr_allocate(p->get(), 64, 8));
  std::mt19937 rng(7);
  std::shuffle(live.begin(), live.end(), rng);
  for (size_t i = 0; i < live.size(); i += 2)
    pmr_deallocate(p->get(), live[i], 64, 8);  // half, scattered
  std::set<uintptr_t> pages;
  std::vector<void*> again;
  for (int i = 0; i < 400; ++i) {
    again.push_back(pmr_allocate(p->get(), 64, 8));
    pages.insert(PageOf(again.back()));
  }
  EXPECT_LE(pages.size(), 2u);  // a LIFO list per class would touch ~all 20
  for (size_t i = 1; i < live.size(); i += 2)
    pmr_deallocate(p->get(), live[i], 64, 8);
  for (void* b : again) pmr_deallocate(p->get(), b, 64, 8);
}

TEST_P(PoolTest, ABlockFreedInAFullPageServesBeforeANewPage) {
  // When the current page runs dry, a page of the class that had a block
  // freed since it filled serves the next request: no new page, no call.
  auto p = Make();
  const size_t per_page = (kPage - 128) / 64;
  std::vector<void*> live;
  for (size_t i = 0; i < 3 * per_page; ++i)
    live.push_back(pmr_allocate(p->get(), 64, 8));
  void* x = live[1];
  ASSERT_NE(PageOf(x), PageOf(live.back()));
  pmr_deallocate(p->get(), x, 64, 8);
  const size_t calls = UpAllocs().size(), held = p->stats().held_bytes;
  const uintptr_t current = PageOf(live.back());
  void* b = nullptr;
  for (size_t i = 0; i <= per_page && b != x; ++i) {
    b = pmr_allocate(p->get(), 64, 8);
    ASSERT_NE(b, nullptr);
    if (b != x) {
      EXPECT_EQ(PageOf(b), current) << "a new page at " << i;
    }
    live.push_back(b);
  }
  EXPECT_EQ(b, x);
  EXPECT_EQ(UpAllocs().size(), calls);
  EXPECT_EQ(p->stats().held_bytes, held);
  live.erase(live.begin() + 1);  // x: now the last one
  for (void* q : live) pmr_deallocate(p->get(), q, 64, 8);
}

TEST_P(PoolTest, FullPagesServeAgainInTheOrderTheyGotABlockBack) {
  // Of pages that were full, the one that got a block back first serves
  // first: it has had longest to gather frees (a churning program), where
  // the one freed into last may hold a single block.
  auto p = Make();
  std::vector<void*> live;
  std::vector<uintptr_t> order;  // pages in the order they were started
  while (order.size() < 4) {
    live.push_back(pmr_allocate(p->get(), 64, 8));
    ASSERT_NE(live.back(), nullptr);
    if (order.empty() || order.back() != PageOf(live.back()))
      order.push_back(PageOf(live.back()));
  }
  auto first_in = [&](uintptr_t page) {
    for (size_t i = 0; i < live.size(); ++i)
      if (PageOf(live[i]) == page) return i;
    return live.size();
  };
  const size_t a = first_in(order[0]);
  void* xa = live[a];
  pmr_deallocate(p->get(), xa, 64, 8);  // page 0 gets a block back first,
  live.erase(live.begin() + a);
  const size_t b = first_in(order[1]);
  void* xb = live[b];
  pmr_deallocate(p->get(), xb, 64, 8);  // then page 1
  live.erase(live.begin() + b);
  std::vector<void*> outside;  // blocks not from the current page
  for (int i = 0; i < 5000 && outside.size() < 2; ++i) {
    void* x = pmr_allocate(p->get(), 64, 8);
    ASSERT_NE(x, nullptr);
    live.push_back(x);
    if (PageOf(x) != order[3]) outside.push_back(x);
  }
  ASSERT_EQ(outside.size(), 2u);
  EXPECT_EQ(outside[0], xa);
  EXPECT_EQ(outside[1], xb);
  for (void* q : live) pmr_deallocate(p->get(), q, 64, 8);
}

TEST_P(PoolTest, FreePagesServeAnyClassAndTrimGivesEverythingBack) {
  pmr_pool_options o = {0, 0, size_t{64} << 20};  // keep every free page
  auto p = Make(&o);
  std::vector<void*> small;
  for (int i = 0; i < 30000; ++i)
    small.push_back(pmr_allocate(p->get(), 48, 8));
  size_t held = p->stats().held_bytes;
  EXPECT_GE(held, 30000u * 48);
  for (void* b : small) pmr_deallocate(p->get(), b, 48, 8);
  size_t calls = UpAllocs().size();
  // The same bytes in another class come from the freed pages.
  std::vector<void*> big;
  for (int i = 0; i < 2600; ++i) big.push_back(pmr_allocate(p->get(), 512, 8));
  EXPECT_EQ(UpAllocs().size(), calls);
  EXPECT_EQ(p->stats().held_bytes, held);
  for (void* b : big) pmr_deallocate(p->get(), b, 512, 8);
  EXPECT_GT(p->stats().free_page_bytes, held / 2);
  size_t given = p->trim();
  EXPECT_GT(given, held * 9 / 10);
  pmr_pool_stats st = p->stats();
  EXPECT_EQ(st.free_page_bytes, 0u);
  // What remains is bookkeeping (the synchronized pool's shards), not pages.
  EXPECT_LT(st.held_bytes, held / 100);
  EXPECT_EQ(up_.outstanding_bytes(), st.held_bytes);
  // Still usable.
  void* b = pmr_allocate(p->get(), 48, 8);
  ASSERT_NE(b, nullptr);
  pmr_deallocate(p->get(), b, 48, 8);
}

TEST_P(PoolTest, EmptyCurrentPagesServeANewClassBeforeUpstream) {
  auto p = Make();
  // One block in each of four classes: each class's page stays its current
  // page when the block comes back.
  const size_t sizes[] = {16, 64, 256, 1024};
  for (size_t s : sizes)
    pmr_deallocate(p->get(), pmr_allocate(p->get(), s, 8), s, 8);
  // The first segment holds four pages: all are taken.
  ASSERT_EQ(p->stats().free_page_bytes, 0u);
  size_t calls = UpAllocs().size(), held = p->stats().held_bytes;
  // A fifth class takes one of those empty pages, not a new segment.
  void* b = pmr_allocate(p->get(), 4096, 8);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(UpAllocs().size(), calls);
  EXPECT_EQ(p->stats().held_bytes, held);
  pmr_deallocate(p->get(), b, 4096, 8);
  // The class whose page it took gets another one.
  for (size_t s : sizes) {
    void* c = pmr_allocate(p->get(), s, 8);
    ASSERT_NE(c, nullptr);
    pmr_deallocate(p->get(), c, s, 8);
  }
}

TEST_P(PoolTest, FreePagesBeyondTheBoundGoBackWithoutTrim) {
  pmrtest::FakeClock clock;
  auto p = Make();  // max_free_bytes: 1 MiB
  std::vector<void*> live;
  for (int i = 0; i < 100000; ++i)
    live.push_back(pmr_allocate(p->get(), 64, 8));
  size_t peak = p->stats().held_bytes;
  for (void* b : live) pmr_deallocate(p->get(), b, 64, 8);
  // Segments go back once no new one was needed for a second, at the next
  // allocation slow path (here: a new class) or deallocation that frees one.
  clock.AdvanceMs(1100);
  pmr_deallocate(p->get(), pmr_allocate(p->get(), 3000, 8), 3000, 8);
  pmr_pool_stats st = p->stats();
  EXPECT_LE(st.free_page_bytes, (size_t{1} << 20) + 16 * kPage);
  EXPECT_LT(st.held_bytes, peak / 2);
}

TEST_P(PoolTest, TryResizeStaysInTheBlocksClass) {
  auto p = Make();
  void* b = pmr_allocate(p->get(), 100, 8);  // class 112
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(pmr_try_resize(p->get(), b, 100, 112, 8));
  EXPECT_TRUE(pmr_try_resize(p->get(), b, 112, 97, 8));
  EXPECT_FALSE(pmr_try_resize(p->get(), b, 97, 113, 8));  // class 128
  EXPECT_FALSE(pmr_try_resize(p->get(), b, 97, 96, 8));   // class 96
  memset(b, 1, 97);
  pmr_deallocate(p->get(), b, 97, 8);
  // Oversize, from an upstream that is not system memory: the block is
  // exactly what upstream was asked for, with no room to grow.
  void* big = pmr_allocate(p->get(), 100000, 8);
  EXPECT_FALSE(pmr_try_resize(p->get(), big, 100000, 100016, 8));
  pmr_deallocate(p->get(), big, 100000, 8);
}

TEST_P(PoolTest, EverySizeAndAlignmentPairIsAligned) {
  // Includes GCC bug 118681's misaligned pairs: (24,16), (40,32), (48,32).
  auto p = Make();
  struct B {
    void* p;
    size_t n, a;
  };
  std::vector<B> live;
  for (size_t a = 1; a <= 4096; a *= 2) {
    for (size_t n = 0; n <= 1100; n += (n < 128 ? 1 : 37)) {
      void* q = pmr_allocate(p->get(), n, a);
      ASSERT_NE(q, nullptr);
      ASSERT_EQ(U(q) % a, 0u) << "size " << n << " alignment " << a;
      std::memset(q, 0xee, n);
      live.push_back({q, n, a});
    }
  }
  for (auto pa : {std::make_pair(24, 16), std::make_pair(40, 32),
                  std::make_pair(48, 32)}) {
    for (int i = 0; i < 100; ++i) {
      void* q = pmr_allocate(p->get(), pa.first, pa.second);
      ASSERT_EQ(U(q) % pa.second, 0u);
      live.push_back({q, size_t(pa.first), size_t(pa.second)});
    }
  }
  for (const B& b : live) pmr_deallocate(p->get(), b.p, b.n, b.a);
}

// Above 4 KiB the classes are fitted to a page (multiples of 16 only): a
// larger alignment takes the next class that is a multiple of it, and over
// a small largest block, none (then the block is oversize, still aligned).
TEST_P(PoolTest, RequestsAboveFourKiBAreAlignedAtEveryAlignment) {
  for (size_t largest : {size_t{0}, size_t{5000}}) {
    pmr_pool_options o = {0, largest, 0};
    auto p = Make(&o);
    struct B {
      void* p;
      size_t n, a;
    };
    std::vector<B> live;
    for (size_t a = 1; a <= 8192; a *= 2) {
      for (size_t n = 4000; n <= 8300; n += 61) {
        void* q = pmr_allocate(p->get(), n, a);
        ASSERT_NE(q, nullptr);
        ASSERT_EQ(U(q) % a, 0u) << "size " << n << " alignment " << a;
        size_t usable = pmr_usable_size(p->get(), q, a);
        if (usable != 0) {
          EXPECT_GE(usable, n);
          EXPECT_EQ(usable % std::min(a, size_t{4096}), 0u) << n << " " << a;
        }
        std::memset(q, 0xee, n);
        live.push_back({q, n, a});
      }
    }
    for (const B& b : live) pmr_deallocate(p->get(), b.p, b.n, b.a);
  }
}

// Freed blocks go back to their page's list, most recently freed first;
// the class takes that list when the blocks it holds run out, before it
// carves a new one. No upstream call on the way.
TEST_P(PoolTest, PooledDeallocationNeverCallsUpstreamAndReusesMostRecentFirst) {
  auto p = Make();
  void* a = pmr_allocate(p->get(), 48, 8);
  void* b = pmr_allocate(p->get(), 48, 8);
  void* c = pmr_allocate(p->get(), 48, 8);
  size_t calls = up_.calls().size();
  pmr_deallocate(p->get(), a, 48, 8);
  pmr_deallocate(p->get(), b, 48, 8);
  pmr_deallocate(p->get(), c, 48, 8);
  EXPECT_EQ(up_.calls().size(), calls);
  // The blocks carved with a, b and c come first: at most a carve's worth.
  std::vector<void*> before;
  void* got;
  while ((got = pmr_allocate(p->get(), 48, 8)) != c) {
    ASSERT_NE(got, nullptr);
    ASSERT_TRUE(got != a && got != b);
    before.push_back(got);
    ASSERT_LT(before.size(), 4096u / 48);
  }
  EXPECT_EQ(pmr_allocate(p->get(), 48, 8), b);
  EXPECT_EQ(pmr_allocate(p->get(), 41, 8), a);  // same class (48)
  EXPECT_EQ(up_.calls().size(), calls);
  for (void* q : before) pmr_deallocate(p->get(), q, 48, 8);
  pmr_deallocate(p->get(), a, 41, 8);
  pmr_deallocate(p->get(), b, 48, 8);
  pmr_deallocate(p->get(), c, 48, 8);
  EXPECT_EQ(up_.calls().size(), calls);
  p->release();
}

TEST_P(PoolTest, OversizeBlocksGoToUpstreamAndBackInAnyOrder) {
  auto p = Make();
  std::vector<std::pair<void*, size_t>> big;
  for (int i = 0; i < 1000; ++i) {
    size_t n = PMR_POOL_DEFAULT_LARGEST_BLOCK + 1 + i * 13;
    void* q = pmr_allocate(p->get(), n, 16);
    ASSERT_NE(q, nullptr);
    std::memset(q, i & 0xff, n);
    big.emplace_back(q, n);
  }
  EXPECT_EQ(up_.outstanding_blocks(), 1000u);
  std::shuffle(big.begin(), big.end(), std::mt19937(1));
  for (auto& b : big) {
    EXPECT_EQ(*static_cast<unsigned char*>(b.first),
              *(static_cast<unsigned char*>(b.first) + b.second - 1));
    pmr_deallocate(p->get(), b.first, b.second, 16);
  }
  // Freed ones are kept for reuse up to max_free_bytes (1 MiB), the rest
  // went back; trim gives back the kept ones.
  pmr_pool_stats st = p->stats();
  EXPECT_EQ(st.oversize_bytes, 0u);
  EXPECT_GT(st.free_oversize_bytes, 0u);
  EXPECT_LE(st.free_oversize_bytes, size_t{1} << 20);
  EXPECT_EQ(up_.outstanding_bytes(), st.held_bytes);
  EXPECT_GE(p->trim(), st.free_oversize_bytes);
  EXPECT_EQ(p->stats().free_oversize_bytes, 0u);
  EXPECT_EQ(up_.outstanding_blocks(), 0u);
  // Over-aligned oversize blocks too: never kept.
  void* q = pmr_allocate(p->get(), 100, 8192);
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(U(q) % 8192, 0u);
  pmr_deallocate(p->get(), q, 100, 8192);
  EXPECT_EQ(up_.outstanding_blocks(), 0u);
}

// A program that builds and drops the same large buffers keeps them: the
// next request of the same size, or one that needs at least half of a kept
// block, takes it without calling upstream; a larger one calls upstream.
TEST_P(PoolTest, FreedOversizeBlocksServeLaterRequestsWithoutUpstream) {
  auto p = Make();
  const size_t n = 40000;
  auto* a = static_cast<unsigned char*>(pmr_allocate(p->get(), n, 16));
  ASSERT_NE(a, nullptr);
  std::memset(a, 1, n);
  pmr_deallocate(p->get(), a, n, 16);
  size_t calls = up_.calls().size();
  EXPECT_EQ(p->stats().oversize_bytes, 0u);
  EXPECT_GE(p->stats().free_oversize_bytes, n);

  // Same size: the same block, no upstream call.
  auto* b = static_cast<unsigned char*>(pmr_allocate(p->get(), n, 8));
  EXPECT_EQ(b, a);
  EXPECT_EQ(p->stats().free_oversize_bytes, 0u);
  EXPECT_GE(p->stats().oversize_bytes, n);
  std::memset(b, 2, n);
  pmr_deallocate(p->get(), b, n, 8);

  // Smaller, but more than half: the same block; all of it is usable, and
  // freed with its own size it is whole again for the first size.
  const size_t m = 33000;
  auto* c = static_cast<unsigned char*>(pmr_allocate(p->get(), m, 16));
  EXPECT_EQ(c, a);
  std::memset(c, 3, m);
  pmr_deallocate(p->get(), c, m, 16);
  auto* d = static_cast<unsigned char*>(pmr_allocate(p->get(), n, 16));
  EXPECT_EQ(d, a);
  std::memset(d, 4, n);
  EXPECT_EQ(up_.calls().size(), calls);

  // Less than half of it, or more than it: from upstream.
  void* e = pmr_allocate(p->get(), n / 2 - 100, 16);
  void* f = pmr_allocate(p->get(), n + 100, 16);
  ASSERT_NE(e, nullptr);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(up_.calls().size(), calls + 2);
  EXPECT_EQ(UpAllocs().size(), 3u);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(d[i], 4) << i;
  pmr_deallocate(p->get(), d, n, 16);
  pmr_deallocate(p->get(), e, n / 2 - 100, 16);
  pmr_deallocate(p->get(), f, n + 100, 16);
  EXPECT_EQ(p->stats().oversize_bytes, 0u);
  p->trim();
  EXPECT_EQ(up_.outstanding_blocks(), 0u);
}

// A pool that takes a new segment is not reusing its kept oversize blocks:
// they go back to upstream first, so they never add to its peak.
TEST_P(PoolTest, KeptOversizeBlocksGoBackBeforeTheFirstNewSegment) {
  auto p = Make();
  void* small = pmr_allocate(p->get(), 64, 8);  // the first segment
  ASSERT_NE(small, nullptr);
  void* big = pmr_allocate(p->get(), 50000, 16);
  ASSERT_NE(big, nullptr);
  pmr_deallocate(p->get(), big, 50000, 16);
  ASSERT_GE(p->stats().free_oversize_bytes, 50000u);
  const size_t allocs = UpAllocs().size();
  const size_t outstanding = up_.outstanding_blocks();
  std::vector<void*> live;
  while (UpAllocs().size() == allocs) {  // until a segment is taken
    ASSERT_GE(p->stats().free_oversize_bytes, 50000u);  // kept till then
    live.push_back(pmr_allocate(p->get(), 4096, 8));
    ASSERT_NE(live.back(), nullptr);
  }
  EXPECT_EQ(p->stats().free_oversize_bytes, 0u);
  // The kept block went back, the new segment came: as many blocks as before.
  EXPECT_EQ(up_.outstanding_blocks(), outstanding);
  for (void* b : live) pmr_deallocate(p->get(), b, 4096, 8);
  pmr_deallocate(p->get(), small, 64, 8);
}

// Kept oversize blocks never total more than max_free_bytes: the largest go
// back first, and a block larger than the bound is never kept.
TEST_P(PoolTest, KeptOversizeBlocksStayWithinMaxFreeBytes) {
  const size_t bound = 100000;
  pmr_pool_options o = {0, 0, bound};
  auto p = Make(&o);
  std::vector<std::pair<void*, size_t>> v;
  for (size_t n : {10000, 20000, 30000, 40000, 50000, 150000}) {
    v.emplace_back(pmr_allocate(p->get(), n, 16), n);
    ASSERT_NE(v.back().first, nullptr);
  }
  size_t before = up_.outstanding_bytes();
  for (auto& b : v) {
    pmr_deallocate(p->get(), b.first, b.second, 16);
    EXPECT_LE(p->stats().free_oversize_bytes, bound);
  }
  pmr_pool_stats st = p->stats();
  EXPECT_EQ(up_.outstanding_bytes(), st.held_bytes);
  EXPECT_LT(up_.outstanding_bytes(), before);
  // 10000 + 20000 + 30000 (and trailers) fit; 40000 would not with them:
  // the largest went back first.
  EXPECT_GE(st.free_oversize_bytes, 60000u);
  EXPECT_EQ(pmr_allocate(p->get(), 10000, 16), v[0].first);
  EXPECT_EQ(pmr_allocate(p->get(), 30000, 16), v[2].first);
  pmr_deallocate(p->get(), v[0].first, 10000, 16);
  pmr_deallocate(p->get(), v[2].first, 30000, 16);

  // max_free_bytes below a page: nothing is kept.
  pmr_pool_options none = {0, 0, 1};
  auto q = Make(&none);
  void* x = pmr_allocate(q->get(), 20000, 16);
  size_t held = up_.outstanding_bytes();
  pmr_deallocate(q->get(), x, 20000, 16);
  EXPECT_EQ(q->stats().free_oversize_bytes, 0u);
  EXPECT_LT(up_.outstanding_bytes(), held);
  p->trim();
  q->trim();
}

// Over another pool, a pool keeps no freed oversize block: the pool under it
// keeps it (within its own max_free_bytes) and serves the next request with
// it. Kept at both levels, a stack would hold twice what either allows.
TEST_P(PoolTest, OverAPoolOnlyThePoolUnderItKeepsFreedOversizeBlocks) {
  for (bool lower_sync : {false, true}) {
    std::unique_ptr<Pool> lower(
        lower_sync
            ? static_cast<Pool*>(new pmrtest::SyncPool(nullptr, up_.get()))
            : static_cast<Pool*>(new pmrtest::UnsyncPool(nullptr, up_.get())));
    std::unique_ptr<Pool> upper(
        GetParam()
            ? static_cast<Pool*>(new pmrtest::SyncPool(nullptr, lower->get()))
            : static_cast<Pool*>(
                  new pmrtest::UnsyncPool(nullptr, lower->get())));
    const size_t n = 40000;
    auto* a = static_cast<unsigned char*>(pmr_allocate(upper->get(), n, 16));
    ASSERT_NE(a, nullptr);
    std::memset(a, 1, n);
    pmr_deallocate(upper->get(), a, n, 16);
    EXPECT_EQ(upper->stats().free_oversize_bytes, 0u);
    EXPECT_EQ(upper->stats().held_bytes, 0u);
    EXPECT_GE(lower->stats().free_oversize_bytes, n);
    // The next request gets the block the pool under it kept.
    size_t calls = up_.calls().size();
    auto* b = static_cast<unsigned char*>(pmr_allocate(upper->get(), n, 16));
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(up_.calls().size(), calls);
    EXPECT_EQ(lower->stats().free_oversize_bytes, 0u);
    std::memset(b, 2, n);
    pmr_deallocate(upper->get(), b, n, 16);
    // Over any other upstream the pool keeps it itself (as before).
    EXPECT_EQ(upper->stats().free_oversize_bytes, 0u);
    upper.reset();
    lower->trim();
    EXPECT_EQ(lower->stats().held_bytes, 0u);
  }
  auto p = Make();
  void* c = pmr_allocate(p->get(), 40000, 16);
  pmr_deallocate(p->get(), c, 40000, 16);
  EXPECT_GE(p->stats().free_oversize_bytes, 40000u);
  p->trim();
}

TEST_P(PoolTest, ReleaseFreesEverythingIsIdempotentAndLeavesThePoolUsable) {
  auto p = Make();
  for (int i = 0; i < 3000; ++i)  // never deallocated
    ASSERT_NE(pmr_allocate(p->get(), 1 + i % 3000, 8), nullptr);
  for (int i = 0; i < 10; ++i)
    ASSERT_NE(pmr_allocate(p->get(), 100000, 64), nullptr);  // oversize
  EXPECT_GT(up_.outstanding_blocks(), 10u);
  p->release();
  EXPECT_EQ(up_.outstanding_blocks(), 0u);
  EXPECT_EQ(up_.mismatches(), 0u) << up_.last_mismatch();
  p->release();
  EXPECT_EQ(up_.outstanding_blocks(), 0u);
  void* q = pmr_allocate(p->get(), 64, 8);
  ASSERT_NE(q, nullptr);
  pmr_deallocate(p->get(), q, 64, 8);
}

TEST_P(PoolTest, PoolsKeepServingWhenUpstreamFails) {
  auto p = Make();
  std::vector<void*> blocks;
  for (int i = 0; i < 100; ++i) blocks.push_back(pmr_allocate(p->get(), 32, 8));
  for (void* b : blocks) pmr_deallocate(p->get(), b, 32, 8);
  up_.fail_always();
  std::vector<void*> again;
  for (int i = 0; i < 100; ++i) {
    void* b = pmr_allocate(p->get(), 32, 8);
    ASSERT_NE(b, nullptr) << i;
    again.push_back(b);
  }
  errno = 0;
  EXPECT_EQ(pmr_allocate(p->get(), 20000, 8), nullptr);  // oversize: upstream
  EXPECT_EQ(errno, ENOMEM);
  // A class with no page yet takes a free page of a segment already held.
  void* other = pmr_allocate(p->get(), 2000, 8);
  EXPECT_NE(other, nullptr);
  // Once every page is taken, a new class fails cleanly, then recovers.
  std::vector<void*> fill;
  for (void* b; (b = pmr_allocate(p->get(), 4000, 8)) != nullptr;)
    fill.push_back(b);
  EXPECT_EQ(errno, ENOMEM);
  up_.never_fail();
  void* later = pmr_allocate(p->get(), 4000, 8);
  EXPECT_NE(later, nullptr);
  pmr_deallocate(p->get(), later, 4000, 8);
  for (void* b : fill) pmr_deallocate(p->get(), b, 4000, 8);
  pmr_deallocate(p->get(), other, 2000, 8);
  for (void* b : again) pmr_deallocate(p->get(), b, 32, 8);
  p->release();
}

TEST_P(PoolTest, BlocksDoNotOverlapUnderRandomChurn) {
  auto p = Make();
  std::mt19937 rng(42);
  struct B {
    unsigned char* p;
    size_t n, a;
    unsigned char fill;
  };
  std::vector<B> live;
  for (int step = 0; step < 50000; ++step) {
    if (!live.empty() && (rng() % 2 || live.size() > 2000)) {
      size_t i = rng() % live.size();
      B b = live[i];
      for (size_t j = 0; j < b.n; ++j) ASSERT_EQ(b.p[j], b.fill);
      pmr_deallocate(p->get(), b.p, b.n, b.a);
      live[i] = live.back();
      live.pop_back();
    } else {
      size_t n = rng() % (rng() % 8 ? 300 : 6000);
      size_t a = size_t{1} << (rng() % 7);
      auto* q = static_cast<unsigned char*>(pmr_allocate(p->get(), n, a));
      ASSERT_NE(q, nullptr);
      ASSERT_EQ(U(q) % a, 0u);
      unsigned char fill = static_cast<unsigned char>(step);
      std::memset(q, fill, n);
      live.push_back({q, n, a, fill});
    }
  }
  for (const B& b : live) pmr_deallocate(p->get(), b.p, b.n, b.a);
}

// Over the default upstream a pool maps its segments, and its free takes
// the pooled sizes' bound as a constant only when it pools every size up to
// the lookup table's limit (1 KiB). With a smaller largest block, the sizes
// between are oversize blocks (from upstream, not in a page) and are freed
// as such: were the constant bound used, their free would take them for
// blocks of a page.
TEST_P(PoolTest,
       OverTheDefaultUpstreamSizesAboveASmallLargestBlockFreeAsOversize) {
  pmr_pool_options o = {0, 100, 0};
  std::unique_ptr<Pool> p;
  if (GetParam())
    p.reset(new pmrtest::SyncPool(&o, nullptr));
  else
    p.reset(new pmrtest::UnsyncPool(&o, nullptr));
  const size_t largest = p->options().largest_required_pool_block;
  ASSERT_LT(largest, size_t{1024});
  std::vector<std::pair<void*, size_t>> v;
  for (int round = 0; round < 3; ++round) {
    for (size_t n = 8; n <= 1024; n += 29) {
      void* b = pmr_allocate(p->get(), n, 8);
      ASSERT_NE(b, nullptr);
      std::memset(b, 0x5a, n);
      v.emplace_back(b, n);
    }
  }
  EXPECT_GT(p->stats().oversize_bytes, 0u);
  std::shuffle(v.begin(), v.end(), std::mt19937(7));
  for (auto& [b, n] : v) pmr_deallocate(p->get(), b, n, 8);
  EXPECT_EQ(p->stats().oversize_bytes, 0u);
  // The pool still serves both kinds.
  void* a = pmr_allocate(p->get(), largest, 8);
  void* c = pmr_allocate(p->get(), largest + 1, 8);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(c, nullptr);
  pmr_deallocate(p->get(), a, largest, 8);
  pmr_deallocate(p->get(), c, largest + 1, 8);
  EXPECT_EQ(p->stats().oversize_bytes, 0u);
}

INSTANTIATE_TEST_SUITE_P(Pools, PoolTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "synchronized"
                                             : "unsynchronized";
                         });

// ---- the size-class table (private header) -------------------------------

TEST(SizeClasses, ClassOfIsTheSmallestClassThatFits) {
  unsigned prev = 0;
  for (size_t s = 1; s <= PMR_IMPL_POOL_MAX_CLASS_SIZE; ++s) {
    unsigned c = pmr_impl_pool_class_of(s);
    ASSERT_LT(c, unsigned{PMR_IMPL_POOL_CLASSES});
    ASSERT_GE(pmr_impl_pool_class_size(c), s) << s;
    if (c > 0) {
      ASSERT_LT(pmr_impl_pool_class_size(c - 1), s) << s;
    }
    ASSERT_GE(c, prev);
    prev = c;
  }
  EXPECT_EQ(pmr_impl_pool_class_of(0), 0u);
  EXPECT_EQ(pmr_impl_pool_class_size(PMR_IMPL_POOL_CLASSES - 1),
            PMR_IMPL_POOL_MAX_CLASS_SIZE);
  // The table's classes, counted by the rule (PMR_IMPL_POOL_TABLE_CLASSES,
  // the heaps' small classes): the last one is the table's bound.
  EXPECT_EQ(pmr_impl_pool_class_of(PMR_IMPL_POOL_TABLE_LIMIT),
            unsigned{PMR_IMPL_POOL_TABLE_CLASSES} - 1);
}

// From 4 KiB to 16 KiB each class is the largest multiple of 16 that n
// blocks fit in a 64 KiB page, n = 15 .. 4: a page wastes less than n * 16
// bytes (SQLite's page-cache blocks, 4 KiB + 264, take 4368).
TEST(SizeClasses, ClassesAboveFourKiBFillAPage) {
  unsigned first = pmr_impl_pool_class_of(4097);
  unsigned last = pmr_impl_pool_class_of(16384);
  ASSERT_EQ(last - first + 1, 12u);
  EXPECT_EQ(pmr_impl_pool_class_size(first - 1), 4096u);
  for (unsigned c = first; c <= last; ++c) {
    size_t size = pmr_impl_pool_class_size(c), n = 15 - (c - first);
    EXPECT_EQ(size % 16, 0u) << size;
    EXPECT_LE(n * size, size_t{65536}) << size;
    EXPECT_GT(n * (size + 16), size_t{65536}) << size;
  }
  EXPECT_EQ(pmr_impl_pool_class_size(pmr_impl_pool_class_of(4360)), 4368u);
  EXPECT_EQ(pmr_impl_pool_class_size(pmr_impl_pool_class_of(8193)), 9360u);
  EXPECT_EQ(pmr_impl_pool_class_size(last + 1), 20480u);
}

// The class of an aligned request is the smallest that holds its rounded
// size and is a multiple of its alignment, or none above largest.
TEST(SizeClasses, AnAlignedRequestGetsTheSmallestClassThatIsAMultiple) {
  for (size_t largest : {size_t{8192}, size_t{5040}, size_t{1024}}) {
    for (size_t a = 1; a <= 4096; a *= 2) {
      for (size_t n = 1; n <= 8192; ++n) {
        size_t s = (n + a - 1) / a * a;
        int c = pmr_impl_pool_class_for(s, a, largest);
        size_t want = 0;
        for (unsigned k = 0; k < PMR_IMPL_POOL_CLASSES; ++k) {
          size_t size = pmr_impl_pool_class_size(k);
          if (size >= s && size % a == 0) {
            want = size;
            break;
          }
        }
        if (s > largest || want > largest) {
          ASSERT_EQ(c, -1) << n << " " << a << " " << largest;
        } else {
          ASSERT_GE(c, 0) << n << " " << a << " " << largest;
          ASSERT_EQ(pmr_impl_pool_class_size(unsigned(c)), want)
              << n << " " << a << " " << largest;
        }
      }
    }
  }
}

// Over the malloc resource the pools map 1 MiB segments whose descriptors
// take one page's first 2 KiB: the other 15 pages hold 15 blocks of 4368.
TEST_P(PoolTest, FifteenSqlitePageBlocksShareAPage) {
  std::unique_ptr<Pool> p;
  if (GetParam())
    p.reset(new pmrtest::SyncPool(nullptr, pmr_malloc_resource()));
  else
    p.reset(new pmrtest::UnsyncPool(nullptr, pmr_malloc_resource()));
  std::vector<void*> live;
  for (int i = 0; i < 15 * 32; ++i) {
    void* b = pmr_allocate(p->get(), 4360, 8);
    ASSERT_NE(b, nullptr);
    std::memset(b, 1, 4360);
    live.push_back(b);
  }
  EXPECT_EQ(pmr_usable_size(p->get(), live[0], 8), 4368u);
  std::map<uintptr_t, size_t> per_page;
  for (void* b : live) ++per_page[PageOf(b)];
  size_t fifteen = 0;
  for (auto& [page, n] : per_page) {
    EXPECT_LE(n, 15u);
    fifteen += n == 15;
  }
  EXPECT_GE(fifteen, 28u);  // all but a segment's first pages and the last
  for (void* b : live) pmr_deallocate(p->get(), b, 4360, 8);
}

TEST(SizeClasses, WasteIsBounded) {
  // At most 25% (in fact 20%) above 24 bytes; at most 7 bytes below. The
  // one exception, by a hair: 13105 to 13107 bytes take 16384 (20.01%), the
  // next class that fits a page (4 blocks; 13104 is the largest of 5).
  double worst = 0;
  for (size_t s = 1; s <= PMR_IMPL_POOL_MAX_CLASS_SIZE; ++s) {
    size_t block = pmr_impl_pool_class_size(pmr_impl_pool_class_of(s));
    size_t waste = block - s;
    if (s <= 24) {
      ASSERT_LE(waste, 7u) << s;
    } else {
      double frac = double(waste) / double(block);
      ASSERT_LE(frac, 0.25) << s;
      if (s > 64) {
        ASSERT_LE(frac, s > 13104 && s < 13108 ? 0.2002 : 0.20) << s;
      }
      worst = std::max(worst, frac);
    }
  }
  EXPECT_LE(worst, 0.25);
}

// The table of class sizes follows the rule of pool_classes.h: 8 .. 64 by 8,
// four per power of two (2^k + j 2^(k-2)) but for the twelve page-fitted
// classes above 4 KiB (ClassesAboveFourKiBFillAPage).
TEST(SizeClasses, TheTableFollowsTheRule) {
  std::vector<size_t> rule;
  for (size_t i = 1; i <= 8; ++i) rule.push_back(8 * i);
  for (unsigned k = 6; k < 20; ++k) {
    if (k == 12) {
      for (size_t n = 15; n >= 4; --n) rule.push_back(65536 / n / 16 * 16);
      continue;
    }
    if (k == 13) continue;  // page-fitted too, above
    for (size_t j = 1; j <= 4; ++j)
      rule.push_back((size_t{1} << k) + j * (size_t{1} << (k - 2)));
  }
  ASSERT_EQ(rule.size(), size_t{PMR_IMPL_POOL_CLASSES});
  for (unsigned i = 0; i < PMR_IMPL_POOL_CLASSES; ++i)
    EXPECT_EQ(pmr_impl_pool_class_size(i), rule[i]) << i;
}

TEST(SizeClasses, TheDocumentedTable) {
  const size_t expected[] = {8,   16,  24,  32,  40,  48,  56,
                             64,  80,  96,  112, 128, 160, 192,
                             224, 256, 320, 384, 448, 512, 640};
  for (unsigned i = 0; i < sizeof expected / sizeof expected[0]; ++i)
    EXPECT_EQ(pmr_impl_pool_class_size(i), expected[i]) << i;
}

// trim says exactly what went back, also when segments go back on the
// way (a page that empties during the trim, once a second has passed since
// the pool last grew, frees its segment at once).
TEST_P(PoolTest, TrimReportsEveryByteThatWentBack) {
  pmrtest::FakeClock clock;
  auto p = Make();
  std::vector<void*> v;
  for (int i = 0; i < 60000; ++i) v.push_back(pmr_allocate(p->get(), 64, 8));
  for (void* b : v) pmr_deallocate(p->get(), b, 64, 8);
  clock.AdvanceMs(1100);  // past the give-back delay (page_source.h)
  const size_t before = up_.outstanding_bytes();
  const size_t given = p->trim();
  EXPECT_GT(given, size_t{3} << 20);
  EXPECT_EQ(given, before - up_.outstanding_bytes());
}

}  // namespace
