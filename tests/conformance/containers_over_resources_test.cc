// The same C code, using pmr_vector, pmr_string and pmr_hashmap together,
// runs over every resource in kResources and must produce identical results,
// give every block back, and fail cleanly when memory runs out.
//
// To cover a new resource, add one line to Resources() below.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "containers/pmr_hashmap.h"
#include "containers/pmr_string.h"
#include "containers/pmr_vector.h"
#include "mem_resource/pmr_mem_resource.h"
#include "resources/pmr_monotonic_buffer.h"
#include "resources/pmr_synchronized_pool.h"
#include "resources/pmr_thread_cache.h"
#include "resources/pmr_unsynchronized_pool.h"
#include "tests/testkit/conformance.h"
#include "tests/testkit/counting_resource.h"

namespace {

// ---- The workload: C-style code (C API only, no C++ features) -------------

typedef struct {
  uint32_t count;
  uint32_t first_seen;
} word_stat;

/* Builds a text of n_words pseudo-random words, counts them in a string-keyed
 * map, keeps per-word records in a vector, indexes first positions in a
 * u64-keyed map, drops the words seen once while iterating, and writes a
 * digest of everything (iteration orders included) to out. Every container
 * uses r. Returns 0, or -1 when some allocation failed (everything is still
 * given back). */
static int workload(pmr_mem_resource *r, unsigned n_words, char *out,
                    size_t out_size) {
  int rc = -1;
  pmr_string text, word, digest;
  pmr_hashmap counts, first_pos;
  pmr_vector stats, lengths;
  pmr_string_init(&text, r);
  pmr_string_init(&word, r);
  pmr_string_init(&digest, r);
  pmr_hashmap_init_string(&counts, sizeof(uint32_t), sizeof(uint32_t), r);
  pmr_hashmap_init(&first_pos, sizeof(uint64_t), sizeof(uint64_t),
                   sizeof(uint32_t), sizeof(uint32_t), r);
  /* Fixed seeds: the digest records iteration orders. */
  pmr_hashmap_set_seed(&counts, 1);
  pmr_hashmap_set_seed(&first_pos, 2);
  pmr_vector_init(&stats, sizeof(word_stat), sizeof(uint32_t), r);
  pmr_vector_init(&lengths, sizeof(uint16_t), sizeof(uint16_t), r);

  /* 1. The text: short words and words too long to be stored inline. */
  uint32_t x = 12345;
  for (unsigned i = 0; i < n_words; ++i) {
    x = x * 1103515245u + 12345u;
    unsigned id = (x >> 8) % 1000;
    const char *prefix = id % 7 == 0 ? "a-rather-long-word-prefix-" : "w";
    if (!pmr_string_append_format(&text, "%s%u ", prefix, id)) goto done;
  }

  /* 2. Split it and count the words. */
  {
    size_t pos = 0, n = 0;
    for (;;) {
      size_t end = pmr_string_find_char(&text, ' ', pos);
      if (end == PMR_STRING_NPOS) break;
      pmr_string_destroy(&word);
      if (!pmr_string_substr(&word, &text, pos, end - pos, r)) goto done;
      bool inserted = false;
      uint32_t *count =
          (uint32_t *)pmr_hashmap_emplace(&counts, &word, &inserted);
      if (count == NULL) goto done;
      if (inserted) {
        word_stat st = {0, (uint32_t)n};
        if (!pmr_vector_push_back(&stats, &st)) {
          pmr_hashmap_erase(&counts, &word, NULL); /* keep them in step */
          goto done;
        }
        uint64_t h = pmr_string_hash(&word);
        uint32_t first = (uint32_t)n;
        if (pmr_hashmap_insert(&first_pos, &h, &first, NULL) < 0) goto done;
      }
      ++*count;
      uint16_t len = (uint16_t)(end - pos);
      if (!pmr_vector_push_back(&lengths, &len)) goto done;
      pos = end + 1;
      ++n;
    }
  }

  /* 3. Walk the map: record the counts, drop the words seen once. */
  {
    size_t erased = 0;
    pmr_hashmap_iter it = pmr_hashmap_iter_begin(&counts);
    if (!pmr_string_append_format(&digest, "words=%zu distinct=%zu\n",
                                  pmr_vector_size(&lengths),
                                  pmr_hashmap_size(&counts)))
      goto done;
    while (pmr_hashmap_iter_next(&it)) {
      const pmr_string *key = (const pmr_string *)it.key;
      uint32_t count = *(const uint32_t *)it.value;
      uint64_t h = pmr_string_hash(key);
      const uint32_t *first =
          (const uint32_t *)pmr_hashmap_find_u64(&first_pos, h);
      if (first == NULL) goto done;
      word_stat *st = (word_stat *)pmr_vector_at(&stats, 0);
      size_t i;
      for (i = 0; i < pmr_vector_size(&stats); ++i)
        if (st[i].first_seen == *first) st[i].count = count;
      if (!pmr_string_append_format(&digest, "%s:%u@%u,", pmr_string_c_str(key),
                                    count, *first))
        goto done;
      if (count == 1) {
        pmr_hashmap_iter_erase(&it);
        ++erased;
      }
    }
    if (!pmr_string_append_format(&digest, "\nerased=%zu left=%zu\n", erased,
                                  pmr_hashmap_size(&counts)))
      goto done;
  }

  /* 4. Vector work: drop the records of rare words, insert a marker. */
  {
    size_t i = 0;
    while (i < pmr_vector_size(&stats)) {
      const word_stat *st = (const word_stat *)pmr_vector_at(&stats, i);
      if (st->count < 3)
        pmr_vector_erase(&stats, i);
      else
        ++i;
    }
    word_stat marker = {0xffffffffu, 0};
    if (!pmr_vector_insert(&stats, pmr_vector_size(&stats) / 2, &marker))
      goto done;
    if (!pmr_vector_shrink_to_fit(&stats)) goto done;
    uint64_t sum = 0;
    for (i = 0; i < pmr_vector_size(&stats); ++i) {
      const word_stat *st = (const word_stat *)pmr_vector_at(&stats, i);
      sum = sum * 31 + st->count * 7 + st->first_seen;
    }
    uint64_t len_sum = 0;
    for (i = 0; i < pmr_vector_size(&lengths); ++i)
      len_sum += *(const uint16_t *)pmr_vector_at(&lengths, i);
    if (!pmr_string_append_format(&digest, "stats=%zu sum=%llu len_sum=%llu\n",
                                  pmr_vector_size(&stats),
                                  (unsigned long long)sum,
                                  (unsigned long long)len_sum))
      goto done;
  }

  /* 5. String edits on the digest itself. */
  {
    size_t at = pmr_string_find_cstr(&digest, "erased=", 0);
    if (at == PMR_STRING_NPOS) goto done;
    if (!pmr_string_replace(&digest, at, 6, "ERASED", 6)) goto done;
    if (!pmr_string_insert_cstr(&digest, 0, "[digest]\n")) goto done;
  }

  if (pmr_string_length(&digest) + 1 > out_size) goto done;
  memcpy(out, pmr_string_c_str(&digest), pmr_string_length(&digest) + 1);
  rc = 0;

done:
  pmr_vector_destroy(&lengths);
  pmr_vector_destroy(&stats);
  pmr_hashmap_destroy(&first_pos);
  pmr_hashmap_destroy(&counts);
  pmr_string_destroy(&digest);
  pmr_string_destroy(&word);
  pmr_string_destroy(&text);
  return rc;
}

// ---- The resources ----------------------------------------------------------

struct ResourceCase {
  std::string name;
  // Builds the resource over `upstream` (a CountingResource); resources that
  // have no upstream ignore it. A NULL get() means "the default resource".
  std::function<std::unique_ptr<pmrtest::ResourceUnderTest>(
      pmr_mem_resource *upstream)>
      make;
  bool uses_upstream;  // its memory comes from `upstream`
};

void PrintTo(const ResourceCase &c, std::ostream *os) { *os << c.name; }

template <typename T, typename Init>
std::unique_ptr<pmrtest::ResourceUnderTest> Own(Init init,
                                                void (*destroy)(T *)) {
  return std::make_unique<pmrtest::OwnedResource<T>>(init, destroy);
}

std::vector<ResourceCase> Resources() {
  using pmrtest::BorrowedResource;
  return {
      {"malloc",
       [](pmr_mem_resource *) {
         return std::make_unique<BorrowedResource>(pmr_malloc_resource());
       },
       false},
      {"counting",
       [](pmr_mem_resource *up) {
         return std::make_unique<BorrowedResource>(up);
       },
       true},
      {"default_via_null",
       [](pmr_mem_resource *) {
         return std::make_unique<BorrowedResource>(nullptr);
       },
       false},
      {"monotonic",
       [](pmr_mem_resource *up) {
         return Own<pmr_monotonic_buffer>(
             [up](pmr_monotonic_buffer *m) {
               pmr_monotonic_buffer_init(m, up);
             },
             pmr_monotonic_buffer_destroy);
       },
       true},
      {"unsynchronized_pool",
       [](pmr_mem_resource *up) {
         return Own<pmr_unsynchronized_pool>(
             [up](pmr_unsynchronized_pool *p) {
               pmr_unsynchronized_pool_init(p, nullptr, up);
             },
             pmr_unsynchronized_pool_destroy);
       },
       true},
      {"synchronized_pool",
       [](pmr_mem_resource *up) {
         return Own<pmr_synchronized_pool>(
             [up](pmr_synchronized_pool *p) {
               pmr_synchronized_pool_init(p, nullptr, up);
             },
             pmr_synchronized_pool_destroy);
       },
       true},
      {"thread_cache",
       [](pmr_mem_resource *up) {
         return Own<pmr_thread_cache>(
             [up](pmr_thread_cache *t) {
               pmr_thread_cache_init(t, nullptr, up);
             },
             pmr_thread_cache_destroy);
       },
       true},
  };
}

std::string RunWorkload(pmr_mem_resource *r, unsigned n_words, int *rc) {
  std::vector<char> out(1 << 20);
  *rc = workload(r, n_words, out.data(), out.size());
  return *rc == 0 ? std::string(out.data()) : std::string();
}

class OverResources : public ::testing::TestWithParam<ResourceCase> {};

TEST_P(OverResources, SameResultsAndEveryBlockBack) {
  int rc = 0;
  const std::string reference = RunWorkload(pmr_malloc_resource(), 3000, &rc);
  ASSERT_EQ(rc, 0);
  ASSERT_NE(reference.find("words=3000 distinct="), std::string::npos);
  ASSERT_EQ(reference.find("ERASED=0 "), std::string::npos) << reference;

  pmrtest::CountingResource up;
  {
    std::unique_ptr<pmrtest::ResourceUnderTest> res = GetParam().make(up.get());
    EXPECT_EQ(RunWorkload(res->get(), 3000, &rc), reference);
    EXPECT_EQ(rc, 0);
    // Twice on the same resource: the same again.
    EXPECT_EQ(RunWorkload(res->get(), 3000, &rc), reference);
  }
  if (GetParam().uses_upstream) {
    EXPECT_GT(up.allocations(), 0u);
  }
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  EXPECT_EQ(up.mismatches(), 0u) << up.last_mismatch();
}

TEST_P(OverResources, FailsCleanlyAtEveryAllocation) {
  if (!GetParam().uses_upstream) GTEST_SKIP() << "no upstream to fail";
  int rc = 0;
  const std::string reference = RunWorkload(pmr_malloc_resource(), 200, &rc);
  ASSERT_EQ(rc, 0);
  size_t failures = 0;
  for (size_t k = 0;; ++k) {
    pmrtest::CountingResource up;
    std::string got;
    {
      std::unique_ptr<pmrtest::ResourceUnderTest> res =
          GetParam().make(up.get());
      up.fail_after(k);
      got = RunWorkload(res->get(), 200, &rc);
      up.never_fail();
    }
    EXPECT_EQ(up.outstanding_blocks(), 0u) << "k=" << k;
    EXPECT_EQ(up.mismatches(), 0u) << "k=" << k;
    if (rc == 0) {
      EXPECT_EQ(got, reference);
      if (up.failed_allocations() == 0) break;
    } else {
      EXPECT_GT(up.failed_allocations(), 0u) << "k=" << k;
      ++failures;
    }
    ASSERT_LT(k, 100000u);
  }
  EXPECT_GT(failures, 0u);  // resources with big chunks fail only a few times
  printf("out-of-memory sweep over %s: %zu failing runs, containers intact\n",
         GetParam().name.c_str(), failures);
}

INSTANTIATE_TEST_SUITE_P(
    Containers, OverResources, ::testing::ValuesIn(Resources()),
    [](const ::testing::TestParamInfo<ResourceCase> &info) {
      return info.param.name;
    });

}  // namespace
