// The pools over the malloc resource map their memory themselves and give
// the OS back the memory of free pages (resources/internal/platform.h); over
// any other upstream they never do. Residency is read with mincore.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "resources/internal/reservoir.h"
#include "resources/pmr_segment_cache.h"
#include "resources/pmr_synchronized_pool.h"
#include "resources/pmr_thread_cache.h"
#include "resources/pmr_unsynchronized_pool.h"
#include "tests/testkit/clock.h"
#include "tests/testkit/counting_resource.h"
#include "tests/testkit/os_memory.h"
#include "tests/testkit/pools.h"

namespace {

constexpr uintptr_t kPage = 64 * 1024;         // the pools' page size
constexpr size_t kMapped = size_t{128} << 10;  // PMR_IMPL_OS_LARGE_MIN
// Oversize blocks of up to this many bytes may lie in a run of free pages
// (PMR_IMPL_RUN_PAGES pages); larger ones are always mappings.
constexpr size_t kRunMax = 4 * kPage;
constexpr size_t kMappedBlock = 2 * kRunMax;

uintptr_t PageOf(const void* p) {
  return reinterpret_cast<uintptr_t>(p) & ~(kPage - 1);
}

using pmrtest::Resident;

// The bookkeeping a pool may hold from upstream with nothing in use (the
// synchronized pool's and the thread cache's shards).
constexpr size_t kBookkeeping = 4096;

// The resident OS pages of a pool page but one: a free page gives the OS
// all its memory but the OS page holding its frame's table of descriptors,
// when it holds it (page_heap.h).
long ResidentBody(uintptr_t page) {
  long r = Resident(page, kPage);
  return r > 0 ? r - 1 : r;
}

using pmrtest::Pool;

// Blocks of one size filling one page of their class (`full`) and starting
// the next (`next`, the class's current page).
struct TwoPages {
  std::vector<void*> full, next;
  uintptr_t page = 0;
};

TwoPages FillAPage(pmr_mem_resource* r, size_t size) {
  TwoPages t;
  void* first = pmr_allocate(r, size, 8);
  t.page = PageOf(first);
  t.full.push_back(first);
  for (;;) {
    void* b = pmr_allocate(r, size, 8);
    if (b == nullptr) break;
    if (PageOf(b) != t.page) {
      t.next.push_back(b);
      break;
    }
    t.full.push_back(b);
  }
  for (void* b : t.full) memset(b, 0x5a, size);  // resident
  return t;
}

// n blocks of `size` bytes from r, each written (resident); fewer if r
// fails.
std::vector<void*> Written(pmr_mem_resource* r, int n, size_t size) {
  std::vector<void*> v;
  for (int i = 0; i < n; ++i) {
    void* x = pmr_allocate(r, size, 8);
    if (x == nullptr) break;
    memset(x, 2, size);
    v.push_back(x);
  }
  return v;
}

void FreeAll(pmr_mem_resource* r, std::vector<void*>& v, size_t size) {
  for (void* b : v) pmr_deallocate(r, b, size, 8);
  v.clear();
}

// n blocks of `size` bytes from r, each written, read back as written and
// freed: memory a pool took back from the OS serves again.
void ServesAgain(pmr_mem_resource* r, int n, size_t size) {
  std::vector<void*> v;
  for (int i = 0; i < n; ++i) {
    void* b = pmr_allocate(r, size, 8);
    ASSERT_NE(b, nullptr);
    memset(b, i & 0xff, size);
    v.push_back(b);
  }
  for (size_t i = 0; i < v.size(); ++i)
    ASSERT_EQ(static_cast<unsigned char*>(v[i])[size - 1], i & 0xff);
  FreeAll(r, v, size);
}

class PoolOsMemoryTest : public ::testing::TestWithParam<bool> {
 protected:
  std::unique_ptr<Pool> Make(pmr_mem_resource* up,
                             const pmr_pool_options* o = nullptr) {
    if (GetParam()) return std::unique_ptr<Pool>(new pmrtest::SyncPool(o, up));
    return std::unique_ptr<Pool>(new pmrtest::UnsyncPool(o, up));
  }
};

// Resident OS pages over a set of pool pages.
long ResidentOver(const std::set<uintptr_t>& pages) {
  long sum = 0;
  for (uintptr_t pg : pages) sum += Resident(pg, kPage);
  return sum;
}

// n blocks of 64 bytes from r, written, then freed: the pages they filled.
std::set<uintptr_t> FilledAndFreed(pmr_mem_resource* r, int n) {
  std::vector<void*> v = Written(r, n, 64);
  EXPECT_EQ(v.size(), static_cast<size_t>(n));
  std::set<uintptr_t> pages;
  for (void* b : v) pages.insert(PageOf(b));
  FreeAll(r, v, 64);
  return pages;
}

// Mapping an oversize block at the pool's peak, free pages give back as
// much memory as it takes; below the peak (the block went back, one of the
// same size comes) they keep theirs: the pool stays within the most it has
// held and does not fault in again memory it had.
void MappingBelowThePeakKeepsFreePages(pmr_mem_resource* r) {
  // No warm segment a pool of an earlier test gave back: the pool's free
  // pages are the ones its blocks used (the oldest free give back first).
  pmr_segment_cache_trim();
  pmr_large_reservoir_trim();
  const std::set<uintptr_t> pages = FilledAndFreed(r, 16 * 1024);
  ASSERT_GE(pages.size(), 8u);
  const long os_page = sysconf(_SC_PAGESIZE);
  const size_t n = kMappedBlock;
  const long before = ResidentOver(pages);
  void* big = pmr_allocate(r, n, 8);
  ASSERT_NE(big, nullptr);
  memset(big, 1, n);
  const long at_peak = ResidentOver(pages);
  EXPECT_LE(at_peak, before - static_cast<long>(n) / os_page);
  // Kept in the reservoir of freed large memory, still resident, and the
  // next large block is carved from it: no new mapping, no fault.
  // (Off under AddressSanitizer: unmapped at once.)
  pmr_deallocate(r, big, n, 8);
  const bool on = pmr_impl_reservoir_on();
  EXPECT_EQ(Resident(reinterpret_cast<uintptr_t>(big), n),
            on ? n / os_page : -1);
  void* again = pmr_allocate(r, n, 8);
  ASSERT_NE(again, nullptr);
  if (on) {
    EXPECT_EQ(again, big);
  }
  big = again;
  memset(big, 1, n);
  EXPECT_EQ(ResidentOver(pages), at_peak);
  pmr_deallocate(r, big, n, 8);
}

TEST_P(PoolOsMemoryTest, AFreePageGivesItsMemoryBackOnceFreeForAWhile) {
  pmrtest::FakeClock clock;
  auto p = Make(pmr_malloc_resource());
  pmr_mem_resource* r = p->get();
  TwoPages a = FillAPage(r, 64);
  TwoPages c = FillAPage(r, 4096);
  errno = 1234;
  FreeAll(r, a.full, 64);  // page a.page is free now
  // Just freed: kept resident, the next class to need a page takes it warm.
  EXPECT_GT(ResidentBody(a.page), 0);
  clock.AdvanceMs(1100);
  FreeAll(r, c.full, 4096);  // c.page: free, the newest
  // The next page event gives a.page back: in the synchronized pool the
  // allocation slow path that follows it, with no lock held. A new class
  // takes the newest free page, c.page.
  void* x = pmr_allocate(r, 2000, 8);
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(PageOf(x), c.page);
  EXPECT_EQ(ResidentBody(a.page), 0);
  EXPECT_GT(ResidentBody(c.page), 0);
  pmr_deallocate(r, x, 2000, 8);
  EXPECT_EQ(errno, 1234);
  // Still held, and it serves again.
  EXPECT_GE(p->stats().free_page_bytes, kPage);
  ServesAgain(r, 4000, 256);
  FreeAll(r, a.next, 64);
  FreeAll(r, c.next, 4096);
}

TEST_P(PoolOsMemoryTest, MemoryFromAnotherUpstreamIsNeverGivenToTheOs) {
  pmrtest::CountingResource up;
  {
    pmrtest::FakeClock clock;
    auto p = Make(up.get());
    pmr_mem_resource* r = p->get();
    TwoPages a = FillAPage(r, 64);
    TwoPages c = FillAPage(r, 4096);
    FreeAll(r, a.full, 64);
    clock.AdvanceMs(1100);
    FreeAll(r, c.full, 4096);
    p->trim();
    // a.page's segment holds live blocks: still held, and untouched.
    EXPECT_EQ(ResidentBody(a.page), static_cast<long>((kPage - 4096) / 4096));
    void* big = pmr_allocate(r, kMappedBlock, 8);  // from upstream
    ASSERT_NE(big, nullptr);
    EXPECT_GE(up.outstanding_blocks(), 2u);
    pmr_deallocate(r, big, kMappedBlock, 8);
    FreeAll(r, a.next, 64);
    FreeAll(r, c.next, 4096);
  }
  EXPECT_EQ(up.outstanding_blocks(), 0u);
}

TEST_P(PoolOsMemoryTest, TrimGivesTheMemoryOfEveryFreePageBackAtOnce) {
  auto p = Make(pmr_malloc_resource());
  pmr_mem_resource* r = p->get();
  TwoPages a = FillAPage(r, 64);
  FreeAll(r, a.full, 64);
  EXPECT_GT(ResidentBody(a.page), 0);
  size_t held = p->stats().held_bytes;
  p->trim();  // a.next keeps the segment
  EXPECT_EQ(ResidentBody(a.page), 0);
  EXPECT_EQ(p->stats().held_bytes, held);
  FreeAll(r, a.next, 64);
  p->trim();
  EXPECT_LT(p->stats().held_bytes, kBookkeeping);
}

TEST_P(PoolOsMemoryTest, MappingALargeBlockFirstGivesBackFreePages) {
  auto p = Make(pmr_malloc_resource());
  pmr_mem_resource* r = p->get();
  TwoPages a = FillAPage(r, 64);
  FreeAll(r, a.full, 64);  // freed just now: no delay has passed
  EXPECT_GT(ResidentBody(a.page), 0);
  void* big = pmr_allocate(r, kMappedBlock, 8);
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(ResidentBody(a.page), 0);
  pmr_deallocate(r, big, kMappedBlock, 8);
  FreeAll(r, a.next, 64);
}

// An oversize block of a few pages takes free pages the small blocks left
// (resident already: no new memory, no page fault), resizes in place within
// them, and once freed its pages serve small blocks again. held: the
// resource's held_bytes.
void ARunOfFreePagesServesAnOversizeBlock(pmr_mem_resource* r,
                                          const std::function<size_t()>& held) {
  pmr_segment_cache_trim();  // cold: the pool's free pages are its own
  const std::set<uintptr_t> pages = FilledAndFreed(r, 16 * 1024);
  const long before = ResidentOver(pages);
  const size_t held_before = held();
  const size_t n = kMapped + 1;  // three pages
  char* b = static_cast<char*>(pmr_allocate(r, n, 8));
  ASSERT_NE(b, nullptr);
  const uintptr_t first = reinterpret_cast<uintptr_t>(b);
  EXPECT_EQ(first % kPage, 0u);
  for (uintptr_t pg = first; pg < first + 3 * kPage; pg += kPage)
    EXPECT_EQ(pages.count(pg), 1u) << "a page the small blocks used";
  memset(b, 7, n);
  EXPECT_EQ(ResidentOver(pages), before);  // nothing given back, nothing new
  EXPECT_EQ(held(), held_before);          // no memory from upstream
  // Its size is the caller's: not answered from the address.
  EXPECT_EQ(pmr_usable_size(r, b, 8), 0u);
  // In place within its three pages, not beyond them.
  EXPECT_TRUE(pmr_try_resize(r, b, n, 3 * kPage, 8));
  EXPECT_FALSE(pmr_try_resize(r, b, 3 * kPage, 3 * kPage + 1, 8));
  EXPECT_EQ(static_cast<unsigned char>(b[n - 1]), 7u);
  pmr_deallocate(r, b, 3 * kPage, 8);
  // Small blocks take those pages again.
  std::vector<void*> v = Written(r, 16 * 1024, 64);
  std::set<uintptr_t> used;
  for (void* x : v) used.insert(PageOf(x));
  for (uintptr_t pg = first; pg < first + 3 * kPage; pg += kPage)
    EXPECT_EQ(used.count(pg), 1u);
  FreeAll(r, v, 64);
  // Just under 128 KiB: a mapping with the trailer an oversize block gets,
  // so a run as well (two pages).
  void* u = pmr_allocate(r, kMapped - 16, 8);
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(u) % kPage, 0u);
  EXPECT_EQ(pages.count(PageOf(u)), 1u);
  EXPECT_EQ(held(), held_before);
  // It grows within its two pages only (a mapping had room for more).
  EXPECT_TRUE(pmr_try_resize(r, u, kMapped - 16, kMapped, 8));
  EXPECT_FALSE(pmr_try_resize(r, u, kMapped, kMapped + 1, 8));
  pmr_deallocate(r, u, kMapped, 8);
  // Larger than a run: a mapping of its own.
  void* m = pmr_allocate(r, kRunMax + 1, 8);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(pages.count(PageOf(m)), 0u);
  pmr_deallocate(r, m, kRunMax + 1, 8);
}

// A class takes the first free page of the segment of the page freed last
// (not the page freed last): pages fill their segment from its start, so
// the free ones gather at its end, where a run of them serves an oversize
// block.
void PagesFillTheirSegmentFromItsStart(pmr_mem_resource* r) {
  pmr_segment_cache_trim();  // cold: the pool's free pages are its own
  std::vector<void*> v = Written(r, 24 * 1024, 64);
  ASSERT_EQ(v.size(), 24u * 1024);
  std::map<uintptr_t, std::vector<void*>> by_page;
  for (void* b : v) by_page[PageOf(b)].push_back(b);
  // Two pages of one segment (a segment lies in one frame of 16 pages),
  // neither the class's page now: lo below hi.
  constexpr uintptr_t kFrame = 16 * kPage;
  const uintptr_t now = PageOf(v.back());
  uintptr_t lo = 0, hi = 0;
  for (const auto& a : by_page)
    for (const auto& b : by_page)
      if (a.first < b.first && a.first / kFrame == b.first / kFrame &&
          a.first != now && b.first != now && b.first - a.first > hi - lo) {
        lo = a.first;
        hi = b.first;
      }
  ASSERT_NE(lo, 0u);
  FreeAll(r, by_page[lo], 64);
  FreeAll(r, by_page[hi], 64);         // the page freed last
  void* x = pmr_allocate(r, 4096, 8);  // a class with no page yet
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(PageOf(x), lo);
  pmr_deallocate(r, x, 4096, 8);
  for (auto& e : by_page) FreeAll(r, e.second, 64);
}

TEST_P(PoolOsMemoryTest, PagesFillTheirSegmentFromItsStart) {
  pmrtest::FakeClock clock;  // no free page old enough to give memory back
  auto p = Make(pmr_malloc_resource());
  PagesFillTheirSegmentFromItsStart(p->get());
}

TEST(ThreadCacheOsMemoryTest, PagesFillTheirSegmentFromItsStart) {
  pmrtest::FakeClock clock;
  pmr_thread_cache tc;
  ASSERT_TRUE(pmr_thread_cache_init(&tc, nullptr, pmr_malloc_resource()));
  PagesFillTheirSegmentFromItsStart(&tc.base);
  pmr_thread_cache_destroy(&tc);
}

TEST_P(PoolOsMemoryTest, ARunOfFreePagesServesAnOversizeBlock) {
  pmrtest::FakeClock clock;
  auto p = Make(pmr_malloc_resource());
  Pool* pool = p.get();
  ARunOfFreePagesServesAnOversizeBlock(
      pool->get(), [&] { return pool->stats().held_bytes; });
  // Counted as an oversize block in use while it is one.
  void* b = pmr_allocate(pool->get(), 2 * kPage, 8);
  ASSERT_NE(b, nullptr);
  const pmr_pool_stats st = pool->stats();
  EXPECT_GE(st.oversize_bytes, 2 * kPage);
  EXPECT_LE(st.oversize_bytes + st.free_page_bytes, st.held_bytes);
  pmr_deallocate(pool->get(), b, 2 * kPage, 8);
  EXPECT_EQ(pool->stats().oversize_bytes, 0u);
}

// A run's block shrinks in place whatever its new size: the pages past the
// new end go back to the free pages at once (the contents before it stay),
// and the block keeps the pages it has, growing back within them.
TEST_P(PoolOsMemoryTest, ARunsBlockShrinksInPlaceAndGivesBackItsTail) {
  pmrtest::FakeClock clock;
  auto p = Make(pmr_malloc_resource());
  pmr_mem_resource* r = p->get();
  pmr_segment_cache_trim();
  pmr_large_reservoir_trim();
  const std::set<uintptr_t> pages = FilledAndFreed(r, 16 * 1024);
  const size_t free_before = p->stats().free_page_bytes;
  auto* b = static_cast<unsigned char*>(pmr_allocate(r, 4 * kPage, 8));
  ASSERT_NE(b, nullptr);
  ASSERT_EQ(pages.count(PageOf(b)), 1u) << "a run of the pool's free pages";
  EXPECT_EQ(p->stats().free_page_bytes, free_before - 4 * kPage);
  for (size_t i = 0; i < kPage + 100; ++i) b[i] = static_cast<unsigned char>(i);
  // To less than half: one page and 100 bytes, so two pages stay.
  ASSERT_TRUE(pmr_try_resize(r, b, 4 * kPage, kPage + 100, 8));
  EXPECT_EQ(p->stats().free_page_bytes, free_before - 2 * kPage);
  EXPECT_EQ(p->stats().oversize_bytes, 2 * kPage);
  for (size_t i = 0; i < kPage + 100; ++i)
    ASSERT_EQ(b[i], static_cast<unsigned char>(i)) << i;
  // Within its two pages it grows again; beyond them it cannot.
  EXPECT_TRUE(pmr_try_resize(r, b, kPage + 100, 2 * kPage, 8));
  EXPECT_FALSE(pmr_try_resize(r, b, 2 * kPage, 2 * kPage + 1, 8));
  pmr_deallocate(r, b, 2 * kPage, 8);
  EXPECT_EQ(p->stats().free_page_bytes, free_before);
  EXPECT_EQ(p->stats().oversize_bytes, 0u);
}

// A pool over this one (it maps its large blocks) lays its pages out in
// frames of 1 MiB, as this one does: it asks for its segments aligned to
// that, so they are mappings this pool makes, not runs of its free pages,
// and the pool above finds a block's descriptor from constants. Every block
// of several segments is sized by address, freed, and the segments go
// back; this pool's own pages then serve its small blocks, and runs, again.
TEST_P(PoolOsMemoryTest, APoolAboveTakesFrameAlignedSegmentsAndGivesThemBack) {
  pmrtest::FakeClock clock;
  auto lower = Make(pmr_malloc_resource());
  pmr_mem_resource* r = lower->get();
  pmr_segment_cache_trim();
  const std::set<uintptr_t> pages = FilledAndFreed(r, 32 * 1024);
  ASSERT_GE(pages.size(), 16u);
  // A pool of the same kind above; over the synchronized pool (thread-safe)
  // also a thread cache.
  for (int kind = 0; kind < (GetParam() ? 2 : 1); ++kind) {
    std::unique_ptr<Pool> upper;
    pmr_thread_cache tc;
    pmr_mem_resource* u;
    if (kind == 0) {
      upper = Make(r);
      u = upper->get();
    } else {
      ASSERT_TRUE(pmr_thread_cache_init(&tc, nullptr, r));
      u = &tc.base;
    }
    // 1.25 MiB of blocks: segments of 256 KiB, 512 KiB and 1 MiB.
    std::vector<void*> v = Written(u, 20000, 64);
    ASSERT_EQ(v.size(), 20000u);
    std::set<uintptr_t> frames;
    for (void* b : v) {
      ASSERT_EQ(pages.count(PageOf(b)), 0u) << "a mapping, not a run";
      ASSERT_EQ(pmr_usable_size(u, b, 8), 64u);
      frames.insert(reinterpret_cast<uintptr_t>(b) >> 20);
    }
    EXPECT_LE(frames.size(), 3u) << "one frame per segment";
    EXPECT_GE(lower->stats().oversize_bytes, 20000u * 64);
    FreeAll(u, v, 64);
    if (kind == 0) {
      upper->trim();
      upper.reset();
    } else {
      pmr_thread_cache_trim(&tc);
      pmr_thread_cache_destroy(&tc);
    }
    EXPECT_EQ(lower->stats().oversize_bytes, 0u);
    // The pages serve this pool's small blocks again, sized by address.
    std::vector<void*> w = Written(r, 32 * 1024, 64);
    for (void* x : w) ASSERT_EQ(pmr_usable_size(r, x, 8), 64u);
    FreeAll(r, w, 64);
    // And a run of them is a run of this pool's.
    void* b = pmr_allocate(r, 4 * kPage, 8);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(pages.count(PageOf(b)), 1u);
    pmr_deallocate(r, b, 4 * kPage, 8);
  }
}

// An upstream that says PMR_TRAIT_MAPS_LARGE but does not align its large
// blocks as asked (1 MiB): the pool reports it, gives the block back and
// fails the request, rather than look for descriptors outside the memory.
struct MisalignedUpstream {
  pmr_mem_resource base;
  size_t allocated = 0, freed = 0;
  static MisalignedUpstream* Of(pmr_mem_resource* r) {
    return reinterpret_cast<MisalignedUpstream*>(r);
  }
  // Aligned to 64 KiB, never to 128 KiB.
  static void* Allocate(pmr_mem_resource* self, size_t bytes, size_t) {
    char* m = static_cast<char*>(
        pmr_allocate(pmr_malloc_resource(), bytes + 2 * kPage, 2 * kPage));
    if (m == nullptr) return nullptr;
    Of(self)->allocated++;
    return m + kPage;
  }
  static void Deallocate(pmr_mem_resource* self, void* p, size_t bytes,
                         size_t) {
    Of(self)->freed++;
    pmr_deallocate(pmr_malloc_resource(), static_cast<char*>(p) - kPage,
                   bytes + 2 * kPage, 2 * kPage);
  }
  static unsigned Traits(const pmr_mem_resource*) {
    return PMR_TRAIT_THREAD_SAFE | PMR_TRAIT_MAPS_LARGE;
  }
};
static_assert(offsetof(MisalignedUpstream, base) == 0, "cast from base");

void CaptureReport(const char* message, void* context) {
  static_cast<std::vector<std::string>*>(context)->push_back(message);
}

TEST_P(PoolOsMemoryTest, AnUpstreamThatIgnoresTheFrameAlignmentIsReported) {
  static const pmr_mem_resource_ops ops = {MisalignedUpstream::Allocate,
                                           MisalignedUpstream::Deallocate,
                                           nullptr,
                                           nullptr,
                                           MisalignedUpstream::Traits,
                                           nullptr,
                                           nullptr};
  MisalignedUpstream up;
  up.base.ops = &ops;
  std::vector<std::string> got;
  pmr_misuse_handler prev = pmr_set_misuse_handler(CaptureReport, &got);
  {
    auto p = Make(&up.base);
    errno = 0;
    EXPECT_EQ(pmr_allocate(p->get(), 64, 8), nullptr);
    EXPECT_EQ(errno, ENOMEM);
    // Oversize blocks do not need the frames: they still work.
    void* big = pmr_allocate(p->get(), 3 * kMapped, 8);
    EXPECT_NE(big, nullptr);
    pmr_deallocate(p->get(), big, 3 * kMapped, 8);
  }
  pmr_set_misuse_handler(prev, nullptr);
  ASSERT_GE(got.size(), 1u);
  for (const std::string& m : got)
    EXPECT_NE(m.find("not aligned to the 1048576 bytes asked"),
              std::string::npos)
        << m;
  EXPECT_GE(up.allocated, 1u);
  EXPECT_EQ(up.allocated, up.freed) << "every block given back";
}

TEST_P(PoolOsMemoryTest, MappingBelowThePoolsPeakKeepsFreePages) {
  pmrtest::FakeClock clock;  // no page frees long enough to go back by age
  pmr_pool_options o{};
  o.max_free_bytes = kPage;  // an oversize block of 256 KiB is not kept
  auto p = Make(pmr_malloc_resource(), &o);
  MappingBelowThePeakKeepsFreePages(p->get());
}

// A pool over a pool over the malloc resource: its segments are mappings
// the pool under it made, so its free pages give their memory back as well.
TEST_P(PoolOsMemoryTest, OverAPoolOverMallocFreePagesGoBackToTheOsToo) {
  pmrtest::SyncPool under(nullptr, pmr_malloc_resource());
  auto p = Make(under.get());
  pmr_mem_resource* r = p->get();
  TwoPages a = FillAPage(r, 64);
  FreeAll(r, a.full, 64);
  EXPECT_GT(ResidentBody(a.page), 0);
  p->trim();  // a.next keeps the segment
  EXPECT_EQ(ResidentBody(a.page), 0);
  TwoPages c = FillAPage(r, 4096);
  FreeAll(r, c.full, 4096);
  EXPECT_GT(ResidentBody(c.page), 0);
  void* big = pmr_allocate(r, kMappedBlock, 8);  // the pool under maps it
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(ResidentBody(c.page), 0);
  // The pages serve again, reading as written.
  ServesAgain(r, 3000, 64);
  pmr_deallocate(r, big, kMappedBlock, 8);
  FreeAll(r, a.next, 64);
  FreeAll(r, c.next, 4096);
  p->trim();
  EXPECT_LT(p->stats().held_bytes, kBookkeeping);
}

// The same over a pool whose memory comes from another upstream: untouched.
TEST_P(PoolOsMemoryTest, OverAPoolOverAnotherUpstreamNothingGoesToTheOs) {
  pmrtest::CountingResource up;
  {
    pmrtest::SyncPool under(nullptr, up.get());
    auto p = Make(under.get());
    pmr_mem_resource* r = p->get();
    TwoPages a = FillAPage(r, 64);
    FreeAll(r, a.full, 64);
    p->trim();
    void* big = pmr_allocate(r, kMappedBlock, 8);
    ASSERT_NE(big, nullptr);
    EXPECT_EQ(ResidentBody(a.page), static_cast<long>((kPage - 4096) / 4096));
    pmr_deallocate(r, big, kMappedBlock, 8);
    FreeAll(r, a.next, 64);
  }
  EXPECT_EQ(up.outstanding_blocks(), 0u);
}

TEST_P(PoolOsMemoryTest, LargeBlocksAreMappedAndUnmapped) {
  pmr_large_reservoir_trim();  // fresh mappings, untouched
  auto p = Make(pmr_malloc_resource());
  pmr_mem_resource* r = p->get();
  const size_t n = size_t{4} << 20;  // more than max_free_bytes: not kept
  errno = 1234;
  for (size_t align : {size_t{16}, size_t{4096}, size_t{1} << 20}) {
    char* b = static_cast<char*>(pmr_allocate(r, n, align));
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % align, 0u);
    EXPECT_EQ(Resident(reinterpret_cast<uintptr_t>(b), n), 0);  // untouched
    memset(b, 1, n);
    EXPECT_EQ(b[n - 1], 1);
    EXPECT_GE(p->stats().oversize_bytes, n);
    pmr_deallocate(r, b, n, align);
    // Kept mapped in the reservoir of freed large memory until a trim.
    // (Off under AddressSanitizer: unmapped at once.)
    EXPECT_EQ(Resident(reinterpret_cast<uintptr_t>(b), n),
              pmr_impl_reservoir_on()
                  ? static_cast<long>(n / sysconf(_SC_PAGESIZE))
                  : -1);
    pmr_large_reservoir_trim();
    EXPECT_EQ(Resident(reinterpret_cast<uintptr_t>(b), n), -1);  // unmapped
  }
  EXPECT_EQ(errno, 1234);
  EXPECT_LT(p->stats().held_bytes, kBookkeeping);
}

// A mapped oversize block has room to grow in place (oversize.h): two
// doublings of three need no copy and no new mapping; the room is address
// space only (not resident, not counted as held); a block that outgrows it,
// or shrinks below half, moves.
template <typename Stats>
void AMappedBlockGrowsInPlace(pmr_mem_resource* r, Stats stats) {
  const size_t n = 200000;
  errno = 1234;
  char* b = static_cast<char*>(pmr_allocate(r, n, 16));
  ASSERT_NE(b, nullptr);
  memset(b, 7, n);
  ASSERT_TRUE(pmr_try_resize(r, b, n, 2 * n, 16));
  memset(b + n, 8, n);
  EXPECT_GE(stats().held_bytes, 2 * n);
  EXPECT_LT(stats().held_bytes, 2 * n + 4096 + kBookkeeping);
  EXPECT_EQ(Resident(reinterpret_cast<uintptr_t>(b) + 2 * n + 4096, n), 0);
  ASSERT_TRUE(pmr_try_resize(r, b, 2 * n, 4 * n, 16));
  b[4 * n - 1] = 9;
  EXPECT_EQ(b[0], 7);
  EXPECT_EQ(b[n], 8);
  EXPECT_FALSE(pmr_try_resize(r, b, 4 * n, 8 * n, 16));  // beyond its room
  EXPECT_TRUE(pmr_try_resize(r, b, 4 * n, 2 * n + 1, 16));
  // Below half: in place too, the pages past the new end back to the OS.
  EXPECT_TRUE(pmr_try_resize(r, b, 2 * n + 1, n - 1, 16));
  EXPECT_EQ(Resident(reinterpret_cast<uintptr_t>(b) + n + 8192, 2 * n), 0);
  EXPECT_EQ(b[n - 2], 7);
  char* q = static_cast<char*>(pmr_reallocate(r, b, n - 1, 8 * n, 16));
  ASSERT_NE(q, nullptr);
  EXPECT_NE(q, b);
  EXPECT_EQ(q[0], 7);
  EXPECT_EQ(q[n - 2], 7);
  // The old block is kept for reuse (within max_free_bytes: it counts what
  // it used, not its room nor what it gave back).
  EXPECT_GE(stats().free_oversize_bytes, n);
  EXPECT_LT(stats().free_oversize_bytes, n + 4096 + 65536);
  pmr_deallocate(r, q, 8 * n, 16);
  EXPECT_EQ(errno, 1234);
}

// Requests no OS can map fail with ENOMEM, nothing held, however close to
// SIZE_MAX (the room a mapped block gets must not wrap around).
TEST_P(PoolOsMemoryTest, ImpossibleLargeRequestsFailCleanly) {
  auto p = Make(pmr_malloc_resource());
  for (size_t n : {SIZE_MAX / 4 * 3, SIZE_MAX / 3 + 1, SIZE_MAX - 100000,
                   SIZE_MAX - 4096 * 3}) {
    errno = 0;
    EXPECT_EQ(pmr_allocate(p->get(), n, 16), nullptr) << n;
    EXPECT_EQ(errno, ENOMEM) << n;
  }
  EXPECT_LT(p->stats().held_bytes, kBookkeeping);
}

TEST_P(PoolOsMemoryTest, AMappedBlockGrowsInPlace) {
  auto p = Make(pmr_malloc_resource());
  AMappedBlockGrowsInPlace(p->get(), [&] { return p->stats(); });
}

// Over the malloc resource a segment is one frame (page_heap.h): aligned to
// 1 MiB, its pages' descriptors side by side in one 2 KiB table inside its
// first page, at one of 32 offsets (multiples of 2 KiB, PMR_IMPL_PAGE_COLORS)
// that moves from segment to segment;
// every other page is all blocks. 64-byte blocks fill those pages wholly and
// leave one 2 KiB hole in each first page.
TEST_P(PoolOsMemoryTest, ASegmentKeepsItsDescriptorsInOneTableInItsFirstPage) {
  auto p = Make(pmr_malloc_resource());
  pmr_mem_resource* r = p->get();
  constexpr uintptr_t kFrame = uintptr_t{1} << 20;
  std::vector<void*> live;
  for (size_t i = 0; i < 28 * (kPage / 64); ++i) {  // segments of 4, 8, 16
    void* b = pmr_allocate(r, 64, 8);
    ASSERT_NE(b, nullptr);
    memset(b, 0xA5, 64);  // a block over a descriptor would break it
    live.push_back(b);
  }
  std::map<uintptr_t, std::vector<size_t>> by_page;
  for (void* b : live)
    by_page[PageOf(b)].push_back(reinterpret_cast<uintptr_t>(b) - PageOf(b));
  std::set<size_t> holes;
  size_t firsts = 0, others = 0;
  for (auto& [page, offs] : by_page) {
    if (page % kFrame != 0) {
      if (offs.size() != kPage / 64) continue;  // the last page, partly used
      ++others;
      EXPECT_TRUE(pmrtest::GapsIn(offs, 64, kPage).empty()) << "page " << page;
      continue;
    }
    auto gaps = pmrtest::GapsIn(offs, 64, kPage);
    if (gaps.size() != 1) continue;  // the last page, partly used
    // The table's offset, a multiple of 2048, from the hole around it
    // (secure builds: a gap on either side, pmrtest::TableHole).
    const size_t t = (gaps[0].first + 2047) / 2048 * 2048;
    if (gaps[0] != pmrtest::TableHole(t, 2048, 64)) continue;
    ++firsts;
    EXPECT_EQ(offs.size(), (kPage - gaps[0].second) / 64);
    holes.insert(t);
  }
  EXPECT_GE(firsts, 2u);
  EXPECT_GE(others, 20u);
  EXPECT_GE(holes.size(), 2u);
  for (void* b : live) pmr_deallocate(r, b, 64, 8);
  p->trim();  // needs every descriptor intact
  EXPECT_LT(p->stats().held_bytes, kBookkeeping);
}

INSTANTIATE_TEST_SUITE_P(Pools, PoolOsMemoryTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& i) {
                           return i.param ? "synchronized" : "unsynchronized";
                         });

// A page of 64-byte blocks freed while one block keeps its segment: its
// memory goes back to the OS on the thread cache's trim.
void TrimGivesBackTheMemoryOfAFreePage(pmr_thread_cache* tc) {
  pmr_mem_resource* r = &tc->base;
  std::vector<void*> v = Written(r, 3000, 64);
  ASSERT_EQ(v.size(), 3000u);
  void* keep = v.back();
  v.pop_back();
  uintptr_t first = PageOf(v.front());
  ASSERT_NE(first, PageOf(keep));
  FreeAll(r, v, 64);
  EXPECT_GT(ResidentBody(first), 0);
  pmr_thread_cache_trim(tc);
  EXPECT_EQ(ResidentBody(first), 0);
  pmr_deallocate(r, keep, 64, 8);
}

TEST(ThreadCacheOsMemoryTest, LargeBlocksAreMappedAndTrimEmptiesFreePages) {
  pmr_thread_cache tc;
  ASSERT_TRUE(pmr_thread_cache_init(&tc, nullptr, pmr_malloc_resource()));
  pmr_mem_resource* r = &tc.base;
  const size_t n = size_t{4} << 20;
  char* b = static_cast<char*>(pmr_allocate(r, n, 16));
  ASSERT_NE(b, nullptr);
  memset(b, 1, n);
  pmr_deallocate(r, b, n, 16);
  // Kept in the reservoir of freed large memory; the trim unmaps it.
  EXPECT_GE(Resident(reinterpret_cast<uintptr_t>(b), n),
            pmr_impl_reservoir_on() ? 0 : -1);
  TrimGivesBackTheMemoryOfAFreePage(&tc);
  EXPECT_EQ(Resident(reinterpret_cast<uintptr_t>(b), n), -1);
  pmr_thread_cache_trim(&tc);
  EXPECT_LT(pmr_thread_cache_get_stats(&tc).held_bytes, kBookkeeping);
  pmr_thread_cache_destroy(&tc);
}

TEST(ThreadCacheOsMemoryTest, AMappedBlockGrowsInPlace) {
  pmr_thread_cache tc;
  ASSERT_TRUE(pmr_thread_cache_init(&tc, nullptr, pmr_malloc_resource()));
  AMappedBlockGrowsInPlace(&tc.base,
                           [&] { return pmr_thread_cache_get_stats(&tc); });
  pmr_thread_cache_destroy(&tc);
}

// The thread cache over a synchronized pool over the malloc resource (the
// thread-safe stack): trim gives the memory of its free pages to the OS.
TEST(ThreadCacheOsMemoryTest, OverAPoolOverMallocTrimEmptiesFreePages) {
  pmrtest::SyncPool under(nullptr, pmr_malloc_resource());
  pmr_thread_cache tc;
  ASSERT_TRUE(pmr_thread_cache_init(&tc, nullptr, under.get()));
  TrimGivesBackTheMemoryOfAFreePage(&tc);
  pmr_thread_cache_destroy(&tc);
}

// A thread cache parks no freed block away from its page: once the blocks
// are freed their pages are free at once (but one current page), and
// before an oversize block is mapped they give their memory to the OS, so
// that free pages, not new memory, make room for it.
TEST(ThreadCacheOsMemoryTest, FreedPagesGiveTheirMemoryBackBeforeAMapping) {
  pmr_thread_cache tc;
  ASSERT_TRUE(pmr_thread_cache_init(&tc, nullptr, pmr_malloc_resource()));
  pmr_mem_resource* r = &tc.base;
  std::vector<void*> v;
  std::set<uintptr_t> pages;
  for (int i = 0; i < 40000; ++i) {
    void* x = pmr_allocate(r, 64, 8);
    ASSERT_NE(x, nullptr);
    memset(x, 3, 64);
    v.push_back(x);
    pages.insert(PageOf(x));
  }
  FreeAll(r, v, 64);
  auto resident = [&] {
    long sum = 0;
    for (uintptr_t pg : pages) sum += Resident(pg, kPage);
    return sum;
  };
  const pmr_thread_cache_stats freed = pmr_thread_cache_get_stats(&tc);
  EXPECT_EQ(freed.thread_page_bytes, kPage);  // the class's current page
  EXPECT_GE(freed.free_page_bytes, freed.held_bytes - 2 * kPage);
  const long before = resident();
  void* big = pmr_allocate(r, kMappedBlock, 8);
  ASSERT_NE(big, nullptr);
  const long os_page = sysconf(_SC_PAGESIZE);
  EXPECT_LE(resident(), before - static_cast<long>(kMappedBlock) / os_page);
  pmr_deallocate(r, big, kMappedBlock, 8);
  pmr_thread_cache_destroy(&tc);
}

TEST(ThreadCacheOsMemoryTest, ARunOfFreePagesServesAnOversizeBlock) {
  pmrtest::FakeClock clock;
  pmr_thread_cache tc;
  ASSERT_TRUE(pmr_thread_cache_init(&tc, nullptr, pmr_malloc_resource()));
  ARunOfFreePagesServesAnOversizeBlock(
      &tc.base, [&] { return pmr_thread_cache_get_stats(&tc).held_bytes; });
  pmr_thread_cache_destroy(&tc);
}

// A thread frees a block another thread's run holds: its pages go back to
// the shared free set (with no upstream call).
TEST(ThreadCacheOsMemoryTest, AnotherThreadFreesARunsBlock) {
  pmrtest::FakeClock clock;
  pmr_thread_cache tc;
  ASSERT_TRUE(pmr_thread_cache_init(&tc, nullptr, pmr_malloc_resource()));
  pmr_mem_resource* r = &tc.base;
  pmr_segment_cache_trim();
  pmr_large_reservoir_trim();
  const std::set<uintptr_t> pages = FilledAndFreed(r, 16 * 1024);
  const size_t free_before = pmr_thread_cache_get_stats(&tc).free_page_bytes;
  void* b = pmr_allocate(r, 2 * kPage, 8);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(pages.count(PageOf(b)), 1u);
  EXPECT_EQ(pmr_thread_cache_get_stats(&tc).free_page_bytes,
            free_before - 2 * kPage);
  std::thread([&] { pmr_deallocate(r, b, 2 * kPage, 8); }).join();
  EXPECT_EQ(pmr_thread_cache_get_stats(&tc).free_page_bytes, free_before);
  pmr_thread_cache_destroy(&tc);
}

TEST(ThreadCacheOsMemoryTest, MappingBelowThePeakKeepsFreePages) {
  pmrtest::FakeClock clock;
  pmr_thread_cache_options o{};
  o.pool.max_free_bytes = kPage;
  pmr_thread_cache tc;
  ASSERT_TRUE(pmr_thread_cache_init(&tc, &o, pmr_malloc_resource()));
  MappingBelowThePeakKeepsFreePages(&tc.base);
  pmr_thread_cache_destroy(&tc);
}

}  // namespace
