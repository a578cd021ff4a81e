// pmr_monotonic_buffer: std::pmr::monotonic_buffer_resource's contract plus
// mark/rewind, reset and introspection.
#include "resources/pmr_monotonic_buffer.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "tests/testkit/counting_resource.h"

namespace {

using pmrtest::Call;
using pmrtest::CountingResource;

uintptr_t U(const void* p) { return reinterpret_cast<uintptr_t>(p); }

std::vector<Call> Allocations(const CountingResource& c) {
  std::vector<Call> out;
  for (const Call& call : c.calls())
    if (call.kind == Call::kAllocate) out.push_back(call);
  return out;
}

bool Inside(const void* p, size_t n, const void* base, size_t size) {
  return U(p) >= U(base) && U(p) + n <= U(base) + size;
}

TEST(MonotonicBuffer, InitNeverCallsUpstream) {
  CountingResource up;
  alignas(16) char buf[256];
  pmr_monotonic_buffer a, b, c;
  pmr_monotonic_buffer_init(&a, up.get());
  pmr_monotonic_buffer_init_with_size(&b, 100000, up.get());
  pmr_monotonic_buffer_init_with_buffer(&c, buf, sizeof buf, up.get());
  EXPECT_EQ(up.calls().size(), 0u);
  EXPECT_EQ(pmr_monotonic_buffer_upstream(&a), up.get());
  pmr_monotonic_buffer_destroy(&a);
  pmr_monotonic_buffer_destroy(&b);
  pmr_monotonic_buffer_destroy(&c);
  EXPECT_EQ(up.calls().size(), 0u);
}

TEST(MonotonicBuffer, NullUpstreamIsTheDefaultAtInit) {
  CountingResource up;
  pmr_mem_resource* prev = pmr_set_default_resource(up.get());
  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init(&m, nullptr);
  pmr_set_default_resource(prev);
  EXPECT_EQ(pmr_monotonic_buffer_upstream(&m), up.get());
  EXPECT_NE(pmr_allocate(&m.base, 10, 1), nullptr);
  EXPECT_EQ(up.allocations(), 1u);
  pmr_monotonic_buffer_destroy(&m);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
}

TEST(MonotonicBuffer, AllocationsThatFitTheInitialBufferNeverCallUpstream) {
  CountingResource up;
  alignas(64) char buf[1024];
  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init_with_buffer(&m, buf, sizeof buf, up.get());
  for (int i = 0; i < 16; ++i) {
    void* p = pmr_allocate(&m.base, 64, 8);
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(Inside(p, 64, buf, sizeof buf));
  }
  EXPECT_EQ(up.calls().size(), 0u);
  EXPECT_EQ(pmr_monotonic_buffer_bytes_left(&m), 0u);
  // The next one spills to upstream.
  EXPECT_NE(pmr_allocate(&m.base, 1, 1), nullptr);
  EXPECT_EQ(up.allocations(), 1u);
  pmr_monotonic_buffer_destroy(&m);
}

TEST(MonotonicBuffer, UnderAlignedInitialBufferStillGivesAlignedBlocks) {
  CountingResource up;
  alignas(64) char raw[4096 + 1];
  char* buf = raw + 1;  // odd address
  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init_with_buffer(&m, buf, 4096, up.get());
  for (size_t a = 1; a <= 256; a *= 2) {
    void* p = pmr_allocate(&m.base, 24, a);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(U(p) % a, 0u);
    EXPECT_TRUE(Inside(p, 24, buf, 4096));
  }
  EXPECT_EQ(up.calls().size(), 0u);
  pmr_monotonic_buffer_destroy(&m);
}

TEST(MonotonicBuffer, ChunksGrowGeometricallyByTwo) {
  CountingResource up;
  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init(&m, up.get());
  EXPECT_EQ(pmr_monotonic_buffer_next_chunk_size(&m),
            PMR_MONOTONIC_DEFAULT_CHUNK);
  for (int i = 0; i < 20000; ++i)
    ASSERT_NE(pmr_allocate(&m.base, 32, 8), nullptr);
  std::vector<Call> chunks = Allocations(up);
  ASSERT_GE(chunks.size(), 5u);
  EXPECT_EQ(chunks[0].bytes, PMR_MONOTONIC_DEFAULT_CHUNK);
  for (size_t i = 1; i < chunks.size(); ++i)
    EXPECT_EQ(chunks[i].bytes, 2 * chunks[i - 1].bytes) << i;
  for (const Call& c : chunks) EXPECT_EQ(c.alignment, alignof(max_align_t));
  EXPECT_EQ(pmr_monotonic_buffer_next_chunk_size(&m), 2 * chunks.back().bytes);
  pmr_monotonic_buffer_destroy(&m);
}

TEST(MonotonicBuffer, GrowthStopsAtTheCap) {
  CountingResource up;
  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init_with_size(&m, PMR_MONOTONIC_MAX_CHUNK / 4,
                                      up.get());
  // Requests of a quarter of the cap: chunks of cap/4, cap/2, then the cap
  // twice (holding 1, 2, 4 and 1 requests).
  for (int i = 0; i < 8; ++i)
    ASSERT_NE(pmr_allocate(&m.base, PMR_MONOTONIC_MAX_CHUNK / 4, 16), nullptr);
  std::vector<Call> chunks = Allocations(up);
  ASSERT_GE(chunks.size(), 4u);
  for (const Call& c : chunks) EXPECT_LE(c.bytes, PMR_MONOTONIC_MAX_CHUNK);
  EXPECT_EQ(chunks.back().bytes, PMR_MONOTONIC_MAX_CHUNK);
  EXPECT_EQ(pmr_monotonic_buffer_next_chunk_size(&m), PMR_MONOTONIC_MAX_CHUNK);
  pmr_monotonic_buffer_destroy(&m);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
}

TEST(MonotonicBuffer, InitialSizeIsWhatTheFirstChunkHolds) {
  CountingResource up;
  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init_with_size(&m, 10000, up.get());
  // 10000 bytes fit in the first chunk: exactly one upstream call.
  for (int i = 0; i < 100; ++i)
    ASSERT_NE(pmr_allocate(&m.base, 100, 1), nullptr);
  EXPECT_EQ(up.allocations(), 1u);
  EXPECT_GE(Allocations(up)[0].bytes, 10000u);
  pmr_monotonic_buffer_destroy(&m);
}

TEST(MonotonicBuffer, RequestLargerThanTheNextChunkGetsAChunkBigEnough) {
  CountingResource up;
  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init(&m, up.get());
  void* p = pmr_allocate(&m.base, 100000, 8);
  ASSERT_NE(p, nullptr);
  std::memset(p, 1, 100000);
  std::vector<Call> chunks = Allocations(up);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_GE(chunks[0].bytes, 100000u);
  EXPECT_TRUE(Inside(p, 100000, chunks[0].p, chunks[0].bytes));
  pmr_monotonic_buffer_destroy(&m);
}

TEST(MonotonicBuffer, OverAlignedRequestDoesNotOverAlignLaterChunks) {
  CountingResource up;
  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init(&m, up.get());
  void* p = pmr_allocate(&m.base, 5000, 8192);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(U(p) % 8192, 0u);
  // Exhaust the chunk, forcing another one.
  for (int i = 0; i < 100; ++i)
    ASSERT_NE(pmr_allocate(&m.base, 512, 8), nullptr);
  std::vector<Call> chunks = Allocations(up);
  ASSERT_GE(chunks.size(), 2u);
  EXPECT_EQ(chunks[0].alignment, 8192u);
  for (size_t i = 1; i < chunks.size(); ++i)
    EXPECT_EQ(chunks[i].alignment, alignof(max_align_t));
  pmr_monotonic_buffer_destroy(&m);
  EXPECT_EQ(up.mismatches(), 0u);
}

TEST(MonotonicBuffer, EveryResultLiesInsideAChunkWithItsAlignment) {
  CountingResource up;
  alignas(8) char raw[1000];
  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init_with_buffer(&m, raw + 3, sizeof raw - 3, up.get());
  std::mt19937 rng(7);
  struct B {
    char* p;
    size_t n;
    unsigned char fill;
  };
  std::vector<B> blocks;
  for (int i = 0; i < 5000; ++i) {
    size_t n = rng() % 3000;
    size_t a = size_t{1} << (rng() % 13);
    char* p = static_cast<char*>(pmr_allocate(&m.base, n, a));
    ASSERT_NE(p, nullptr);
    ASSERT_EQ(U(p) % a, 0u);
    bool inside = Inside(p, n, raw + 3, sizeof raw - 3);
    for (const Call& c : Allocations(up))
      inside = inside || Inside(p, n, c.p, c.bytes);
    ASSERT_TRUE(inside) << i;
    unsigned char fill = static_cast<unsigned char>(i);
    std::memset(p, fill, n);
    blocks.push_back({p, n, fill});
    if (i % 500 == 0) up.clear_calls();  // keep the scan short...
    if (i % 500 == 0) pmr_monotonic_buffer_release(&m);
    if (i % 500 == 0) blocks.clear();
  }
  for (const B& b : blocks)
    for (size_t j = 0; j < b.n; ++j) ASSERT_EQ((unsigned char)b.p[j], b.fill);
  pmr_monotonic_buffer_destroy(&m);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
}

TEST(MonotonicBuffer, DeallocateDoesNothing) {
  CountingResource up;
  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init(&m, up.get());
  char* p = static_cast<char*>(pmr_allocate(&m.base, 100, 8));
  std::memset(p, 7, 100);
  size_t calls = up.calls().size();
  size_t used = pmr_monotonic_buffer_bytes_used(&m);
  pmr_deallocate(&m.base, p, 100, 8);
  EXPECT_EQ(up.calls().size(), calls);
  EXPECT_EQ(pmr_monotonic_buffer_bytes_used(&m), used);
  EXPECT_EQ(p[99], 7);  // still ours until release
  void* q = pmr_allocate(&m.base, 100, 8);
  EXPECT_NE(q, p);  // no reuse
  pmr_monotonic_buffer_destroy(&m);
}

TEST(MonotonicBuffer, ReleaseReturnsEveryChunkExactlyAndRestarts) {
  CountingResource up;
  alignas(16) char buf[512];
  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init_with_buffer(&m, buf, sizeof buf, up.get());
  size_t first_next = pmr_monotonic_buffer_next_chunk_size(&m);
  for (int i = 0; i < 3000; ++i)
    ASSERT_NE(pmr_allocate(&m.base, 40, 8), nullptr);
  ASSERT_NE(pmr_allocate(&m.base, 10, 4096), nullptr);  // an over-aligned chunk
  ASSERT_GT(up.allocations(), 3u);
  pmr_monotonic_buffer_release(&m);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  EXPECT_EQ(up.mismatches(), 0u) << up.last_mismatch();  // same size+alignment
  EXPECT_EQ(up.allocations(), up.deallocations());
  // Restarts from the initial buffer (LWG 3120) and the initial growth.
  EXPECT_EQ(pmr_monotonic_buffer_next_chunk_size(&m), first_next);
  EXPECT_EQ(pmr_monotonic_buffer_bytes_used(&m), 0u);
  void* p = pmr_allocate(&m.base, 16, 8);
  EXPECT_TRUE(Inside(p, 16, buf, sizeof buf));
  size_t allocs = up.allocations();
  for (int i = 0; i < 20; ++i) pmr_allocate(&m.base, 40, 8);  // > 512 bytes
  EXPECT_EQ(up.allocations(), allocs + 1);
  EXPECT_EQ(Allocations(up).back().bytes, first_next);
  pmr_monotonic_buffer_destroy(&m);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
}

TEST(MonotonicBuffer, ReleaseOnAFreshResourceOrTwiceIsHarmless) {
  CountingResource up;
  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init(&m, up.get());
  pmr_monotonic_buffer_release(&m);
  pmr_monotonic_buffer_release(&m);
  EXPECT_EQ(up.calls().size(), 0u);
  ASSERT_NE(pmr_allocate(&m.base, 5000, 8), nullptr);
  pmr_monotonic_buffer_release(&m);
  pmr_monotonic_buffer_release(&m);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  EXPECT_EQ(up.deallocations(), 1u);
  ASSERT_NE(pmr_allocate(&m.base, 5000, 8), nullptr);  // usable afterwards
  pmr_monotonic_buffer_destroy(&m);
  pmr_monotonic_buffer_destroy(&m);  // destroy = release: also idempotent
  EXPECT_EQ(up.outstanding_blocks(), 0u);
}

TEST(MonotonicBuffer, ImpossibleSizesFailWithoutAShortBlock) {
  CountingResource up;
  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init(&m, up.get());
  ASSERT_NE(pmr_allocate(&m.base, 10, 1), nullptr);
  for (size_t n :
       {SIZE_MAX - 1, SIZE_MAX - 64, SIZE_MAX / 2, SIZE_MAX - 4096}) {
    errno = 0;
    EXPECT_EQ(pmr_allocate(&m.base, n, 1), nullptr) << n;
    EXPECT_EQ(errno, ENOMEM);
    EXPECT_EQ(pmr_monotonic_buffer_allocate(&m, n, 1), nullptr) << n;
  }
  EXPECT_NE(pmr_allocate(&m.base, 10, 1), nullptr);  // still usable
  pmr_monotonic_buffer_destroy(&m);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
}

TEST(MonotonicBuffer, UpstreamFailureGivesNullAndTheResourceStaysUsable) {
  CountingResource up;
  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init(&m, up.get());
  char* a = static_cast<char*>(pmr_allocate(&m.base, 100, 8));
  ASSERT_NE(a, nullptr);
  std::memset(a, 3, 100);
  up.fail_always();
  EXPECT_EQ(pmr_allocate(&m.base, 100000, 8), nullptr);
  // Still serves from the current chunk.
  EXPECT_NE(pmr_allocate(&m.base, 100, 8), nullptr);
  up.never_fail();
  EXPECT_NE(pmr_allocate(&m.base, 100000, 8), nullptr);
  EXPECT_EQ(a[99], 3);
  pmr_monotonic_buffer_release(&m);
  EXPECT_EQ(up.allocations(), up.deallocations());
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  pmr_monotonic_buffer_destroy(&m);
}

TEST(MonotonicBuffer, MarkAndRewindWorkLikeAStack) {
  CountingResource up;
  alignas(16) char buf[256];
  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init_with_buffer(&m, buf, sizeof buf, up.get());
  ASSERT_NE(pmr_allocate(&m.base, 100, 8), nullptr);
  pmr_monotonic_marker mk = pmr_monotonic_buffer_mark(&m);
  size_t used = pmr_monotonic_buffer_bytes_used(&m);
  void* first = pmr_allocate(&m.base, 64, 8);
  for (int i = 0; i < 1000; ++i)
    ASSERT_NE(pmr_allocate(&m.base, 64, 8), nullptr);
  size_t chunk_allocs = up.allocations();
  ASSERT_GT(chunk_allocs, 2u);
  ASSERT_TRUE(pmr_monotonic_buffer_rewind(&m, mk));
  EXPECT_EQ(pmr_monotonic_buffer_bytes_used(&m), used);
  EXPECT_EQ(pmr_allocate(&m.base, 64, 8), first);  // same place again
  // The same work again reuses the kept chunks: no upstream call.
  for (int i = 0; i < 1000; ++i)
    ASSERT_NE(pmr_allocate(&m.base, 64, 8), nullptr);
  EXPECT_EQ(up.allocations(), chunk_allocs);
  // Nested marks inside chunks.
  pmr_monotonic_marker inner = pmr_monotonic_buffer_mark(&m);
  void* x = pmr_allocate(&m.base, 32, 8);
  ASSERT_TRUE(pmr_monotonic_buffer_rewind(&m, inner));
  EXPECT_EQ(pmr_allocate(&m.base, 32, 8), x);
  // A marker that was rewound past is refused and changes nothing.
  ASSERT_TRUE(pmr_monotonic_buffer_rewind(&m, mk));
  used = pmr_monotonic_buffer_bytes_used(&m);
  EXPECT_FALSE(pmr_monotonic_buffer_rewind(&m, inner));
  EXPECT_EQ(pmr_monotonic_buffer_bytes_used(&m), used);
  pmr_monotonic_buffer_destroy(&m);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
}

TEST(MonotonicBuffer, MarkerFromAnotherResourceIsRefused) {
  pmr_monotonic_buffer a, b;
  pmr_monotonic_buffer_init(&a, nullptr);
  pmr_monotonic_buffer_init(&b, nullptr);
  pmr_allocate(&a.base, 10, 1);
  pmr_allocate(&b.base, 10, 1);
  pmr_monotonic_marker mb = pmr_monotonic_buffer_mark(&b);
  EXPECT_FALSE(pmr_monotonic_buffer_rewind(&a, mb));
  pmr_monotonic_buffer_destroy(&a);
  pmr_monotonic_buffer_destroy(&b);
}

TEST(MonotonicBuffer, ResetKeepsChunksSoLaterRequestsMakeNoUpstreamCall) {
  CountingResource up;
  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init(&m, up.get());
  for (int request = 0; request < 100; ++request) {
    for (int i = 0; i < 50; ++i)
      ASSERT_NE(pmr_allocate(&m.base, 16 + (i * 31) % 500, 8), nullptr);
    pmr_monotonic_buffer_reset(&m);
    if (request == 0) up.clear_calls();
  }
  EXPECT_EQ(up.calls().size(), 0u) << "requests after the first hit upstream";
  EXPECT_GT(up.outstanding_blocks(), 0u);  // kept, not returned
  pmr_monotonic_buffer_release(&m);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  pmr_monotonic_buffer_destroy(&m);
}

TEST(MonotonicBuffer, Introspection) {
  CountingResource up;
  alignas(16) char buf[100];
  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init_with_buffer(&m, buf, sizeof buf, up.get());
  EXPECT_EQ(pmr_monotonic_buffer_bytes_used(&m), 0u);
  EXPECT_EQ(pmr_monotonic_buffer_bytes_left(&m), 100u);
  pmr_allocate(&m.base, 30, 1);
  EXPECT_EQ(pmr_monotonic_buffer_bytes_used(&m), 30u);
  EXPECT_EQ(pmr_monotonic_buffer_bytes_left(&m), 70u);
  pmr_allocate(&m.base, 200, 1);  // spills: 30 used in buf + 200 in a chunk
  EXPECT_EQ(pmr_monotonic_buffer_bytes_used(&m), 230u);
  size_t left = pmr_monotonic_buffer_bytes_left(&m);
  EXPECT_GT(left, 0u);
  EXPECT_LE(left, PMR_MONOTONIC_DEFAULT_CHUNK - 200);
  EXPECT_EQ(pmr_monotonic_buffer_next_chunk_size(&m),
            2 * PMR_MONOTONIC_DEFAULT_CHUNK);
  pmr_allocate(&m.base, 5000, 1);
  EXPECT_EQ(pmr_monotonic_buffer_bytes_used(&m), 5230u);
  pmr_monotonic_buffer_destroy(&m);
}

TEST(MonotonicBuffer, TryResizeGrowsOnlyTheLatestBlockInPlace) {
  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init_with_size(&m, 4096, nullptr);
  char* a = static_cast<char*>(pmr_allocate(&m.base, 100, 8));
  char* b = static_cast<char*>(pmr_allocate(&m.base, 100, 8));
  std::memset(b, 9, 100);
  EXPECT_FALSE(pmr_try_resize(&m.base, a, 100, 200, 8));  // not the latest
  EXPECT_TRUE(pmr_try_resize(&m.base, b, 100, 1000, 8));
  EXPECT_EQ(b[99], 9);
  std::memset(b, 1, 1000);
  EXPECT_TRUE(pmr_try_resize(&m.base, b, 1000, 50, 8));  // shrink
  char* c = static_cast<char*>(pmr_allocate(&m.base, 8, 8));
  EXPECT_EQ(c, b + 56);  // space after the shrunk block is reused
  EXPECT_FALSE(pmr_try_resize(&m.base, c, 8, 1 << 20, 8));  // beyond the chunk
  EXPECT_FALSE(pmr_try_resize(&m.base, c, 16, 32, 8));      // wrong old size
  pmr_monotonic_buffer_destroy(&m);
}

TEST(MonotonicBuffer, InlineFastPathMatchesTheAbstractInterface) {
  pmr_monotonic_buffer a, b;
  pmr_monotonic_buffer_init(&a, nullptr);
  pmr_monotonic_buffer_init(&b, nullptr);
  for (int i = 0; i < 2000; ++i) {
    // Alignment 1: no padding, so both must account exactly the same bytes
    // (padding depends on where upstream's chunks happen to land).
    size_t n = (i * 37) % 300;
    char* x = static_cast<char*>(pmr_allocate(&a.base, n, 1));
    char* y = static_cast<char*>(pmr_monotonic_buffer_allocate(&b, n, 1));
    ASSERT_NE(x, nullptr);
    ASSERT_NE(y, nullptr);
    EXPECT_EQ(pmr_monotonic_buffer_bytes_used(&a),
              pmr_monotonic_buffer_bytes_used(&b));
  }
  for (int i = 0; i < 2000; ++i) {
    size_t n = (i * 37) % 300, al = size_t{1} << (i % 10);
    EXPECT_EQ(U(pmr_monotonic_buffer_allocate(&b, n, al)) % al, 0u);
  }
  errno = 0;
  EXPECT_EQ(pmr_monotonic_buffer_allocate(&b, 8, 3), nullptr);
  EXPECT_EQ(errno, EINVAL);
  pmr_monotonic_buffer_destroy(&a);
  pmr_monotonic_buffer_destroy(&b);
}

// A marker is refused once what it points into was dropped, even when later
// allocations have passed its position again (the next block would overlap
// a live one).
TEST(MonotonicBuffer, StaleMarkerAfterResetIsRefused) {
  alignas(16) char buf[1024];
  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init_with_buffer(&m, buf, sizeof buf, nullptr);
  ASSERT_NE(pmr_allocate(&m.base, 100, 1), nullptr);
  pmr_monotonic_marker mk = pmr_monotonic_buffer_mark(&m);
  pmr_monotonic_buffer_reset(&m);
  char* live = static_cast<char*>(pmr_allocate(&m.base, 200, 1));
  ASSERT_NE(live, nullptr);
  EXPECT_FALSE(pmr_monotonic_buffer_rewind(&m, mk));
  char* next = static_cast<char*>(pmr_allocate(&m.base, 50, 1));
  EXPECT_GE(next, live + 200);  // not inside the live block
  pmr_monotonic_buffer_destroy(&m);
}

TEST(MonotonicBuffer, StaleMarkerAfterReleaseIsRefused) {
  alignas(16) char buf[1024];
  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init_with_buffer(&m, buf, sizeof buf, nullptr);
  ASSERT_NE(pmr_allocate(&m.base, 100, 1), nullptr);
  pmr_monotonic_marker mk = pmr_monotonic_buffer_mark(&m);
  pmr_monotonic_buffer_release(&m);
  ASSERT_NE(pmr_allocate(&m.base, 200, 1), nullptr);
  size_t used = pmr_monotonic_buffer_bytes_used(&m);
  EXPECT_FALSE(pmr_monotonic_buffer_rewind(&m, mk));
  EXPECT_EQ(pmr_monotonic_buffer_bytes_used(&m), used);
  pmr_monotonic_buffer_destroy(&m);
}

TEST(MonotonicBuffer, StaleMarkerInsideAReusedChunkIsRefused) {
  CountingResource up;
  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init(&m, up.get());
  ASSERT_NE(pmr_allocate(&m.base, 100, 1), nullptr);  // in the first chunk
  pmr_monotonic_marker mk = pmr_monotonic_buffer_mark(&m);
  pmr_monotonic_buffer_reset(&m);  // the chunk is kept and reused
  char* live = static_cast<char*>(pmr_allocate(&m.base, 200, 1));
  ASSERT_EQ(up.allocations(), 1u);
  EXPECT_FALSE(pmr_monotonic_buffer_rewind(&m, mk));
  char* next = static_cast<char*>(pmr_allocate(&m.base, 50, 1));
  EXPECT_GE(next, live + 200);
  pmr_monotonic_buffer_destroy(&m);
}

TEST(MonotonicBuffer, MarkerRewoundPastIsRefusedAfterAllocationsPassIt) {
  for (bool chunked : {false, true}) {
    alignas(16) char buf[4096];
    pmr_monotonic_buffer m;
    if (chunked)
      pmr_monotonic_buffer_init(&m, nullptr);
    else
      pmr_monotonic_buffer_init_with_buffer(&m, buf, sizeof buf, nullptr);
    pmr_monotonic_marker outer = pmr_monotonic_buffer_mark(&m);
    ASSERT_NE(pmr_allocate(&m.base, 100, 1), nullptr);
    pmr_monotonic_marker inner = pmr_monotonic_buffer_mark(&m);
    ASSERT_NE(pmr_allocate(&m.base, 10, 1), nullptr);
    ASSERT_TRUE(pmr_monotonic_buffer_rewind(&m, outer));
    char* live = static_cast<char*>(pmr_allocate(&m.base, 200, 1));
    EXPECT_FALSE(pmr_monotonic_buffer_rewind(&m, inner)) << chunked;
    char* next = static_cast<char*>(pmr_allocate(&m.base, 50, 1));
    EXPECT_GE(next, live + 200);
    // The outer marker is still valid, as is rewinding to it again.
    EXPECT_TRUE(pmr_monotonic_buffer_rewind(&m, outer));
    EXPECT_TRUE(pmr_monotonic_buffer_rewind(&m, outer));
    pmr_monotonic_buffer_destroy(&m);
  }
}

TEST(MonotonicBuffer, NestedMarkersStayValidThroughInnerRewinds) {
  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init_with_size(&m, 256, nullptr);
  pmr_monotonic_marker outer = pmr_monotonic_buffer_mark(&m);
  // Scopes that each keep one block and drop their scratch, spilling over
  // several chunks: more levels than the bookkeeping holds exactly.
  std::vector<char*> kept;
  for (int i = 0; i < 40; ++i) {
    kept.push_back(static_cast<char*>(pmr_allocate(&m.base, 48, 8)));
    std::memset(kept.back(), i, 48);
    pmr_monotonic_marker scope = pmr_monotonic_buffer_mark(&m);
    ASSERT_NE(pmr_allocate(&m.base, 100, 8), nullptr);
    pmr_monotonic_marker inner = pmr_monotonic_buffer_mark(&m);
    ASSERT_NE(pmr_allocate(&m.base, 10, 8), nullptr);
    ASSERT_TRUE(pmr_monotonic_buffer_rewind(&m, inner));
    ASSERT_TRUE(pmr_monotonic_buffer_rewind(&m, scope)) << i;
  }
  for (int i = 0; i < 40; ++i) EXPECT_EQ(kept[i][47], i);
  EXPECT_TRUE(pmr_monotonic_buffer_rewind(&m, outer));
  EXPECT_EQ(pmr_monotonic_buffer_bytes_used(&m), 0u);
  pmr_monotonic_buffer_destroy(&m);
}

// Many random marks, rewinds, resets and allocations against a model of
// which markers are valid: with an upstream (the default here) every valid
// marker is accepted, an invalid one never.
TEST(MonotonicBuffer, RandomRewindsNeverAcceptAStaleMarker) {
  std::mt19937 rng(7);
  alignas(16) char buf[512];
  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init_with_buffer(&m, buf, sizeof buf, nullptr);
  struct Mk {
    pmr_monotonic_marker mk;
    size_t used;
    bool valid;
  };
  std::vector<Mk> marks;
  for (int step = 0; step < 20000; ++step) {
    int op = rng() % 10;
    if (op < 5) {
      ASSERT_NE(pmr_allocate(&m.base, rng() % 300, 8), nullptr);
    } else if (op < 7) {
      marks.push_back({pmr_monotonic_buffer_mark(&m),
                       pmr_monotonic_buffer_bytes_used(&m), true});
    } else if (op < 9 && !marks.empty()) {
      size_t i = rng() % marks.size();
      bool ok = pmr_monotonic_buffer_rewind(&m, marks[i].mk);
      ASSERT_EQ(ok, marks[i].valid) << step;
      if (ok) {
        ASSERT_EQ(pmr_monotonic_buffer_bytes_used(&m), marks[i].used);
        for (Mk& x : marks)  // taken after it, positioned beyond it
          if (x.used > marks[i].used) x.valid = false;
      }
    } else if (op == 9 && rng() % 8 == 0) {
      pmr_monotonic_buffer_reset(&m);
      for (Mk& x : marks) x.valid = false;
    }
    if (marks.size() > 64) marks.erase(marks.begin());
  }
  pmr_monotonic_buffer_destroy(&m);
}

// The header's promise at its edge: PMR_IMPL_MONO_RUNS (4) rewinds that
// each stop above the previous one keep every marker exact; the fifth may
// refuse a marker above the third stop position, never one at or below it.
TEST(MonotonicBuffer, FourRisingRewindsKeepEveryMarker) {
  for (int rounds = 1; rounds <= PMR_IMPL_MONO_RUNS; ++rounds) {
    for (int target = 0; target < rounds; ++target) {
      pmr_monotonic_buffer m;
      pmr_monotonic_buffer_init(&m, nullptr);
      std::vector<pmr_monotonic_marker> marks;
      std::vector<size_t> used;
      for (int r = 0; r < rounds; ++r) {
        ASSERT_NE(pmr_allocate(&m.base, 16, 8), nullptr);
        marks.push_back(pmr_monotonic_buffer_mark(&m));
        used.push_back(pmr_monotonic_buffer_bytes_used(&m));
        ASSERT_NE(pmr_allocate(&m.base, 16, 8), nullptr);
        ASSERT_TRUE(pmr_monotonic_buffer_rewind(&m, marks.back()));
      }
      EXPECT_TRUE(pmr_monotonic_buffer_rewind(&m, marks[target]))
          << rounds << " rounds, marker " << target;
      EXPECT_EQ(pmr_monotonic_buffer_bytes_used(&m), used[target]);
      pmr_monotonic_buffer_destroy(&m);
    }
  }
}

// Without memory for the bookkeeping (the null resource upstream), the
// fifth rising rewind may refuse a marker above the third stop position,
// never one at or below it.
TEST(MonotonicBuffer, AFifthRisingRewindKeepsTheMarkersUpToTheThird) {
  alignas(16) char buf[1024];
  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init_with_buffer(&m, buf, sizeof buf,
                                        pmr_null_resource());
  std::vector<pmr_monotonic_marker> marks;
  for (int r = 0; r < PMR_IMPL_MONO_RUNS + 1; ++r) {
    ASSERT_NE(pmr_allocate(&m.base, 16, 8), nullptr);
    marks.push_back(pmr_monotonic_buffer_mark(&m));
    ASSERT_NE(pmr_allocate(&m.base, 16, 8), nullptr);
    ASSERT_TRUE(pmr_monotonic_buffer_rewind(&m, marks.back()));
  }
  // The fourth lies above the third stop position: the bookkeeping merged
  // it away (refused, never wrongly accepted).
  errno = 0;
  EXPECT_FALSE(pmr_monotonic_buffer_rewind(&m, marks[3]));
  EXPECT_EQ(errno, 0);
  EXPECT_TRUE(pmr_monotonic_buffer_rewind(&m, marks[4]));
  EXPECT_TRUE(pmr_monotonic_buffer_rewind(&m, marks[2]));
  EXPECT_TRUE(pmr_monotonic_buffer_rewind(&m, marks[1]));
  EXPECT_TRUE(pmr_monotonic_buffer_rewind(&m, marks[0]));
  EXPECT_EQ(pmr_monotonic_buffer_bytes_used(&m), 16u);
  pmr_monotonic_buffer_destroy(&m);
}

// With an upstream, any number of rising rewinds keeps every marker: the
// bookkeeping grows from upstream, is kept by reset and given back by
// release.
TEST(MonotonicBuffer, RisingRewindsKeepEveryMarkerWithAnUpstream) {
  CountingResource up;
  alignas(16) char buf[4096];
  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init_with_buffer(&m, buf, sizeof buf, up.get());
  for (int pass = 0; pass < 2; ++pass) {
    std::vector<pmr_monotonic_marker> marks;
    std::vector<size_t> used;
    for (int r = 0; r < 40; ++r) {
      ASSERT_NE(pmr_allocate(&m.base, 16, 8), nullptr);
      marks.push_back(pmr_monotonic_buffer_mark(&m));
      used.push_back(pmr_monotonic_buffer_bytes_used(&m));
      ASSERT_NE(pmr_allocate(&m.base, 16, 8), nullptr);
      ASSERT_TRUE(pmr_monotonic_buffer_rewind(&m, marks.back()));
    }
    EXPECT_GT(up.outstanding_blocks(), 0u);  // the bookkeeping's array
    for (int r = 39; r >= 0; --r) {
      ASSERT_TRUE(pmr_monotonic_buffer_rewind(&m, marks[r])) << r;
      EXPECT_EQ(pmr_monotonic_buffer_bytes_used(&m), used[r]);
    }
    if (pass == 0) {
      pmr_monotonic_buffer_reset(&m);
      up.clear_calls();
    }
  }
  EXPECT_EQ(up.calls().size(), 0u) << "the array kept by reset serves again";
  pmr_monotonic_buffer_release(&m);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  EXPECT_EQ(up.mismatches(), 0u) << up.last_mismatch();
  pmr_monotonic_buffer_destroy(&m);
}

// Issue #47, the minimal sequence the model check found: four rewinds that
// each stop above the previous one, a fifth above them, then a rewind back
// to the fourth stop. The stops remembered are four rising ones again, yet
// the marker of the fourth rewind was refused: the fifth had merged the
// third and fourth runs under the fourth's generation, and undoing the
// fifth did not undo the merge.
TEST(MonotonicBuffer,
     Issue47MarkerOfTheFourthRisingRewindAfterTheFifthIsUndone) {
  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init(&m, nullptr);
  std::vector<pmr_monotonic_marker> marks;
  std::vector<size_t> used;
  for (int r = 0; r < 4; ++r) {
    ASSERT_NE(pmr_allocate(&m.base, 16, 8), nullptr);
    marks.push_back(pmr_monotonic_buffer_mark(&m));
    used.push_back(pmr_monotonic_buffer_bytes_used(&m));
    ASSERT_NE(pmr_allocate(&m.base, 16, 8), nullptr);
    ASSERT_TRUE(pmr_monotonic_buffer_rewind(&m, marks.back()));
  }
  pmr_monotonic_marker again = pmr_monotonic_buffer_mark(&m);  // 4th stop
  ASSERT_NE(pmr_allocate(&m.base, 16, 8), nullptr);
  pmr_monotonic_marker fifth = pmr_monotonic_buffer_mark(&m);
  ASSERT_NE(pmr_allocate(&m.base, 16, 8), nullptr);
  ASSERT_TRUE(pmr_monotonic_buffer_rewind(&m, fifth));
  ASSERT_TRUE(pmr_monotonic_buffer_rewind(&m, again));
  EXPECT_TRUE(pmr_monotonic_buffer_rewind(&m, marks[3]));
  EXPECT_EQ(pmr_monotonic_buffer_bytes_used(&m), used[3]);
  for (int r = 2; r >= 0; --r) {
    EXPECT_TRUE(pmr_monotonic_buffer_rewind(&m, marks[r])) << r;
    EXPECT_EQ(pmr_monotonic_buffer_bytes_used(&m), used[r]);
  }
  pmr_monotonic_buffer_destroy(&m);
}

// A resize in place moves the end of the latest block: the markers taken
// after it was allocated point inside it (grow) or past it (shrink) and
// become stale; those taken before it stay valid.
TEST(MonotonicBuffer, TryResizeMakesTheMarkersTakenAfterTheBlockStale) {
  for (bool grow : {true, false}) {
    pmr_monotonic_buffer m;
    pmr_monotonic_buffer_init_with_size(&m, 4096, nullptr);
    ASSERT_NE(pmr_allocate(&m.base, 10, 1), nullptr);
    pmr_monotonic_marker before = pmr_monotonic_buffer_mark(&m);
    size_t used_before = pmr_monotonic_buffer_bytes_used(&m);
    char* b = static_cast<char*>(pmr_allocate(&m.base, 100, 8));
    std::memset(b, 7, 100);
    pmr_monotonic_marker after = pmr_monotonic_buffer_mark(&m);
    ASSERT_TRUE(pmr_try_resize(&m.base, b, 100, grow ? 300 : 40, 8));
    if (grow) std::memset(b, 7, 300);
    // Allocations pass the old end again (shrink), or not (grow).
    char* c = static_cast<char*>(pmr_allocate(&m.base, 100, 1));
    ASSERT_NE(c, nullptr);
    std::memset(c, 3, 100);
    size_t used = pmr_monotonic_buffer_bytes_used(&m);
    EXPECT_FALSE(pmr_monotonic_buffer_rewind(&m, after)) << grow;
    EXPECT_EQ(pmr_monotonic_buffer_bytes_used(&m), used);
    char* d = static_cast<char*>(pmr_allocate(&m.base, 8, 1));
    EXPECT_GE(d, c + 100);  // the refused rewind cut nothing
    EXPECT_EQ(b[grow ? 299 : 39], 7);
    EXPECT_EQ(c[99], 3);
    EXPECT_TRUE(pmr_monotonic_buffer_rewind(&m, before));
    EXPECT_EQ(pmr_monotonic_buffer_bytes_used(&m), used_before);
    pmr_monotonic_buffer_destroy(&m);
  }
}

// A block larger than the current chunk gets a chunk of its own; markers
// before and after it work across the two chunks, and a rewind keeps the
// big chunk for reuse.
TEST(MonotonicBuffer, MarkersAroundABlockLargerThanTheChunk) {
  CountingResource up;
  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init(&m, up.get());
  ASSERT_NE(pmr_allocate(&m.base, 100, 8), nullptr);
  pmr_monotonic_marker before = pmr_monotonic_buffer_mark(&m);
  size_t used_before = pmr_monotonic_buffer_bytes_used(&m);
  char* big = static_cast<char*>(pmr_allocate(&m.base, 5000, 64));
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(U(big) % 64, 0u);
  EXPECT_EQ(up.allocations(), 2u);
  pmr_monotonic_marker after = pmr_monotonic_buffer_mark(&m);
  size_t used_after = pmr_monotonic_buffer_bytes_used(&m);
  EXPECT_EQ(used_after, used_before + 5000);
  ASSERT_NE(pmr_allocate(&m.base, 3000, 8), nullptr);
  ASSERT_TRUE(pmr_monotonic_buffer_rewind(&m, after));
  EXPECT_EQ(pmr_monotonic_buffer_bytes_used(&m), used_after);
  ASSERT_TRUE(pmr_monotonic_buffer_rewind(&m, before));
  EXPECT_EQ(pmr_monotonic_buffer_bytes_used(&m), used_before);
  EXPECT_FALSE(pmr_monotonic_buffer_rewind(&m, after));
  // The same big block again comes from the kept chunk.
  size_t calls = up.allocations();
  EXPECT_EQ(pmr_allocate(&m.base, 5000, 64), big);
  EXPECT_EQ(up.allocations(), calls);
  EXPECT_FALSE(pmr_monotonic_buffer_rewind(&m, after));
  pmr_monotonic_buffer_destroy(&m);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
}

// Chunks kept by reset serve again; markers taken before the reset stay
// refused even at the same addresses, markers taken after work.
TEST(MonotonicBuffer, MarkersOverChunksKeptByReset) {
  CountingResource up;
  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init_with_size(&m, 700, up.get());
  std::vector<pmr_monotonic_marker> old;
  for (int i = 0; i < 20; ++i) {
    ASSERT_NE(pmr_allocate(&m.base, 300, 16), nullptr);
    old.push_back(pmr_monotonic_buffer_mark(&m));
  }
  pmr_monotonic_buffer_reset(&m);
  up.clear_calls();
  std::vector<pmr_monotonic_marker> fresh;
  std::vector<size_t> used;
  for (int i = 0; i < 20; ++i) {
    ASSERT_NE(pmr_allocate(&m.base, 300, 16), nullptr);
    fresh.push_back(pmr_monotonic_buffer_mark(&m));
    used.push_back(pmr_monotonic_buffer_bytes_used(&m));
  }
  EXPECT_EQ(up.calls().size(), 0u);  // all from the kept chunks
  for (const pmr_monotonic_marker& mk : old)
    EXPECT_FALSE(pmr_monotonic_buffer_rewind(&m, mk));
  for (int i = 19; i >= 0; --i) {
    ASSERT_TRUE(pmr_monotonic_buffer_rewind(&m, fresh[i])) << i;
    EXPECT_EQ(pmr_monotonic_buffer_bytes_used(&m), used[i]);
  }
  pmr_monotonic_buffer_destroy(&m);
}

// An initial buffer at an odd address, filled to its last byte: a marker
// there survives the spill into a chunk and brings the resource back to
// the buffer's end.
TEST(MonotonicBuffer, MarkerAtTheEndOfAnInitialBufferExhaustedAtAnOddOffset) {
  CountingResource up;
  alignas(16) char storage[2100];
  char* buf = storage + 3;
  const size_t size = 2001;
  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init_with_buffer(&m, buf, size, up.get());
  ASSERT_NE(pmr_allocate(&m.base, 1000, 1), nullptr);
  char* last = static_cast<char*>(pmr_allocate(&m.base, size - 1000, 1));
  ASSERT_EQ(last + (size - 1000), buf + size);
  EXPECT_EQ(pmr_monotonic_buffer_bytes_left(&m), 0u);
  pmr_monotonic_marker full = pmr_monotonic_buffer_mark(&m);
  char* spill = static_cast<char*>(pmr_allocate(&m.base, 10, 8));
  ASSERT_NE(spill, nullptr);
  EXPECT_FALSE(Inside(spill, 10, buf, size));
  pmr_monotonic_marker in_chunk = pmr_monotonic_buffer_mark(&m);
  ASSERT_TRUE(pmr_monotonic_buffer_rewind(&m, full));
  EXPECT_EQ(pmr_monotonic_buffer_bytes_used(&m), size);
  EXPECT_EQ(pmr_monotonic_buffer_bytes_left(&m), 0u);
  EXPECT_FALSE(pmr_monotonic_buffer_rewind(&m, in_chunk));
  EXPECT_EQ(pmr_allocate(&m.base, 10, 8), spill);  // the kept chunk
  EXPECT_FALSE(pmr_monotonic_buffer_rewind(&m, in_chunk));
  pmr_monotonic_buffer_destroy(&m);
}

// try_resize of the latest block cannot cross into another chunk: a grow
// past the chunk's end is refused and changes nothing, markers included.
// A block that opened a new chunk resizes there; a marker from before it
// (in the previous chunk) stays valid.
TEST(MonotonicBuffer, TryResizeOfTheLatestBlockAcrossAChunkBoundary) {
  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init(&m, nullptr);
  ASSERT_NE(pmr_allocate(&m.base, 100, 8), nullptr);
  char* b = static_cast<char*>(pmr_allocate(&m.base, 100, 8));
  pmr_monotonic_marker after_b = pmr_monotonic_buffer_mark(&m);
  size_t used = pmr_monotonic_buffer_bytes_used(&m);
  size_t left = pmr_monotonic_buffer_bytes_left(&m);
  EXPECT_FALSE(pmr_try_resize(&m.base, b, 100, 100 + left + 1, 8));
  EXPECT_EQ(pmr_monotonic_buffer_bytes_used(&m), used);
  EXPECT_TRUE(pmr_monotonic_buffer_rewind(&m, after_b));        // still valid
  EXPECT_TRUE(pmr_try_resize(&m.base, b, 100, 100 + left, 8));  // to the end
  EXPECT_EQ(pmr_monotonic_buffer_bytes_left(&m), 0u);
  pmr_monotonic_marker full = pmr_monotonic_buffer_mark(&m);
  size_t used_full = pmr_monotonic_buffer_bytes_used(&m);
  char* c = static_cast<char*>(pmr_allocate(&m.base, 200, 8));  // new chunk
  std::memset(c, 5, 200);
  pmr_monotonic_marker after_c = pmr_monotonic_buffer_mark(&m);
  ASSERT_TRUE(pmr_try_resize(&m.base, c, 200, 400, 8));
  EXPECT_EQ(c[199], 5);
  EXPECT_FALSE(pmr_monotonic_buffer_rewind(&m, after_c));
  EXPECT_TRUE(pmr_monotonic_buffer_rewind(&m, full));
  EXPECT_EQ(pmr_monotonic_buffer_bytes_used(&m), used_full);
  pmr_monotonic_buffer_destroy(&m);
}

TEST(MonotonicBuffer, InitialSizeAboveTheCapIsHonoured) {
  CountingResource up;
  pmr_monotonic_buffer m;
  const size_t want = PMR_MONOTONIC_MAX_CHUNK + 4096;
  pmr_monotonic_buffer_init_with_size(&m, want, up.get());
  EXPECT_GE(pmr_monotonic_buffer_next_chunk_size(&m), want);
  ASSERT_NE(pmr_allocate(&m.base, 100, 8), nullptr);
  ASSERT_NE(pmr_allocate(&m.base, want - 200, 8), nullptr);
  std::vector<Call> chunks = Allocations(up);
  ASSERT_EQ(chunks.size(), 1u);  // the first chunk held both
  EXPECT_GE(chunks[0].bytes, want);
  pmr_monotonic_buffer_destroy(&m);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
}

TEST(MonotonicBuffer, DestroyTwiceIsHarmless) {
  CountingResource up;
  alignas(16) char buf[64];
  pmr_monotonic_buffer m;
  pmr_monotonic_buffer_init_with_buffer(&m, buf, sizeof buf, up.get());
  ASSERT_NE(pmr_allocate(&m.base, 1000, 8), nullptr);
  pmr_monotonic_buffer_destroy(&m);
  pmr_monotonic_buffer_destroy(&m);
  pmr_monotonic_buffer_release(&m);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  EXPECT_EQ(up.deallocations(), up.allocations());
  std::memset(buf, 1, sizeof buf);  // the caller's again (ASan: not poisoned)
}

}  // namespace
