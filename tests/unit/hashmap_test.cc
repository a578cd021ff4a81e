// pmr_hashmap through its C API: every operation and key kind, iteration with
// erasure, tombstones, copies and moves between resources, failure injection
// at every allocation point, and random operation sequences checked against
// std::unordered_map.
#include "containers/pmr_hashmap.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "containers/pmr_string.h"
#include "tests/testkit/counting_resource.h"
#include "tests/testkit/test_resources.h"

namespace {

using pmrtest::Call;
using pmrtest::CountingResource;

// Everything observable about a map: its elements in iteration order (key
// and value bytes; string keys as their text), size and capacity.
struct State {
  std::vector<std::pair<std::string, std::string>> elements;
  size_t size, capacity;
  bool operator==(const State& o) const {
    return elements == o.elements && size == o.size && capacity == o.capacity;
  }
};
State Capture(pmr_hashmap* m, bool string_keys = false) {
  State s;
  pmr_hashmap_iter it = pmr_hashmap_iter_begin(m);
  while (pmr_hashmap_iter_next(&it)) {
    std::string k;
    if (string_keys) {
      const pmr_string* ks = static_cast<const pmr_string*>(it.key);
      k.assign(pmr_string_c_str(ks), pmr_string_length(ks));
    } else {
      k.assign(static_cast<const char*>(it.key), m->key_size);
    }
    s.elements.emplace_back(
        k, std::string(static_cast<const char*>(it.value), m->value_size));
  }
  s.size = pmr_hashmap_size(m);
  s.capacity = pmr_hashmap_capacity(m);
  return s;
}

std::map<uint64_t, uint64_t> Contents(pmr_hashmap* m) {
  std::map<uint64_t, uint64_t> r;
  pmr_hashmap_iter it = pmr_hashmap_iter_begin(m);
  while (pmr_hashmap_iter_next(&it)) {
    uint64_t k, v;
    std::memcpy(&k, it.key, 8);
    std::memcpy(&v, it.value, 8);
    EXPECT_TRUE(r.emplace(k, v).second) << "key seen twice";
  }
  EXPECT_EQ(r.size(), pmr_hashmap_size(m));
  return r;
}

// A uint64_t -> uint64_t map under a fixed seed: two maps given the same
// operations have the same layout (the tests that compare maps, or replay a
// setup to find a key with some effect, rely on it).
bool InitU64(pmr_hashmap* m, pmr_mem_resource* r) {
  return pmr_hashmap_init(m, sizeof(uint64_t), alignof(uint64_t),
                          sizeof(uint64_t), alignof(uint64_t), r) &&
         pmr_hashmap_set_seed(m, 42);
}

uint64_t* Find(pmr_hashmap* m, uint64_t k) {
  return static_cast<uint64_t*>(pmr_hashmap_find(m, &k));
}

pmr_hashmap_status Insert(pmr_hashmap* m, uint64_t k, uint64_t v) {
  return pmr_hashmap_insert(m, &k, &v, nullptr);
}

using pmrtest::FriendlyResource;

// ---- Basics ----------------------------------------------------------------

TEST(Hashmap, InitRejectsBadConfigurations) {
  pmr_hashmap m;
  EXPECT_FALSE(pmr_hashmap_init(&m, 0, 1, 8, 8, nullptr));
  EXPECT_FALSE(pmr_hashmap_init(&m, 8, 3, 8, 8, nullptr));
  EXPECT_FALSE(pmr_hashmap_init(&m, 8, 8, 8, 0, nullptr));
  EXPECT_FALSE(pmr_hashmap_init(&m, 12, 8, 8, 8, nullptr));
  EXPECT_FALSE(pmr_hashmap_init(&m, 8, 8, 12, 8, nullptr));
  EXPECT_FALSE(pmr_hashmap_init(&m, SIZE_MAX, 1, 8, 8, nullptr));
  EXPECT_FALSE(pmr_hashmap_init(nullptr, 8, 8, 8, 8, nullptr));
  EXPECT_FALSE(pmr_hashmap_init_cstr(&m, 4, 3, nullptr));
  EXPECT_TRUE(pmr_hashmap_init(&m, 3, 1, 0, 1, nullptr));  // a set
  pmr_hashmap_destroy(&m);
}

TEST(Hashmap, EmptyMapAllocatesNothing) {
  CountingResource up;
  pmr_hashmap m;
  ASSERT_TRUE(InitU64(&m, up.get()));
  EXPECT_EQ(pmr_hashmap_size(&m), 0u);
  EXPECT_TRUE(pmr_hashmap_empty(&m));
  EXPECT_EQ(pmr_hashmap_capacity(&m), 0u);
  EXPECT_EQ(pmr_hashmap_resource(&m), up.get());
  EXPECT_EQ(Find(&m, 1), nullptr);
  uint64_t k = 0;
  EXPECT_FALSE(pmr_hashmap_contains(&m, &k));
  EXPECT_EQ(pmr_hashmap_find_key(&m, &k), nullptr);
  EXPECT_FALSE(pmr_hashmap_erase(&m, &k, nullptr));
  pmr_hashmap_clear(&m);
  ASSERT_TRUE(pmr_hashmap_shrink_to_fit(&m));
  pmr_hashmap_iter it = pmr_hashmap_iter_begin(&m);
  EXPECT_FALSE(pmr_hashmap_iter_next(&it));
  pmr_hashmap_iter_erase(&it);  // nothing current: ignored
  pmr_hashmap_destroy(&m);
  pmr_hashmap_destroy(&m);  // twice is fine
  EXPECT_EQ(up.calls().size(), 0u);
}

TEST(Hashmap, NullResourceMeansTheDefaultAtInit) {
  CountingResource up;
  pmr_mem_resource* prev = pmr_set_default_resource(up.get());
  pmr_hashmap m;
  ASSERT_TRUE(InitU64(&m, nullptr));
  pmr_set_default_resource(prev);
  EXPECT_EQ(pmr_hashmap_resource(&m), up.get());
  ASSERT_EQ(Insert(&m, 1, 2), PMR_HASHMAP_INSERTED);
  EXPECT_EQ(up.allocations(), 1u);
  pmr_hashmap_destroy(&m);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
}

TEST(Hashmap, InsertFindAssignEmplaceErase) {
  CountingResource up;
  pmr_hashmap m;
  ASSERT_TRUE(InitU64(&m, up.get()));
  void* slot = nullptr;
  uint64_t k = 7, v = 70;
  EXPECT_EQ(pmr_hashmap_insert(&m, &k, &v, &slot), PMR_HASHMAP_INSERTED);
  ASSERT_NE(slot, nullptr);
  EXPECT_EQ(*static_cast<uint64_t*>(slot), 70u);
  v = 71;
  void* slot2 = nullptr;
  EXPECT_EQ(pmr_hashmap_insert(&m, &k, &v, &slot2), PMR_HASHMAP_EXISTED);
  EXPECT_EQ(slot2, slot);
  EXPECT_EQ(*Find(&m, 7), 70u);  // insert does not overwrite
  EXPECT_EQ(pmr_hashmap_insert_or_assign(&m, &k, &v), PMR_HASHMAP_EXISTED);
  EXPECT_EQ(*Find(&m, 7), 71u);
  k = 8;
  EXPECT_EQ(pmr_hashmap_insert_or_assign(&m, &k, &v), PMR_HASHMAP_INSERTED);
  EXPECT_EQ(*Find(&m, 8), 71u);
  EXPECT_EQ(pmr_hashmap_insert(&m, &k, nullptr, nullptr), PMR_HASHMAP_EXISTED);
  k = 9;
  EXPECT_EQ(pmr_hashmap_insert(&m, &k, nullptr, nullptr), PMR_HASHMAP_INSERTED);
  EXPECT_EQ(*Find(&m, 9), 0u);  // NULL value: zero-filled
  bool inserted = false;
  k = 10;
  uint64_t* e = static_cast<uint64_t*>(pmr_hashmap_emplace(&m, &k, &inserted));
  ASSERT_NE(e, nullptr);
  EXPECT_TRUE(inserted);
  EXPECT_EQ(*e, 0u);
  *e = 100;
  e = static_cast<uint64_t*>(pmr_hashmap_emplace(&m, &k, &inserted));
  EXPECT_FALSE(inserted);
  EXPECT_EQ(*e, 100u);
  EXPECT_EQ(pmr_hashmap_size(&m), 4u);
  EXPECT_TRUE(pmr_hashmap_contains(&m, &k));
  const void* stored = pmr_hashmap_find_key(&m, &k);
  ASSERT_NE(stored, nullptr);
  EXPECT_NE(stored, &k);
  EXPECT_EQ(*static_cast<const uint64_t*>(stored), 10u);
  uint64_t out = 0;
  EXPECT_TRUE(pmr_hashmap_erase(&m, &k, &out));
  EXPECT_EQ(out, 100u);
  EXPECT_FALSE(pmr_hashmap_erase(&m, &k, &out));
  EXPECT_FALSE(pmr_hashmap_contains(&m, &k));
  EXPECT_EQ(pmr_hashmap_size(&m), 3u);
  EXPECT_EQ(Contents(&m),
            (std::map<uint64_t, uint64_t>{{7, 71}, {8, 71}, {9, 0}}));
  pmr_hashmap_destroy(&m);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  EXPECT_EQ(up.mismatches(), 0u);
}

TEST(Hashmap, CapacityIsAPowerOfTwoLoadedToSevenEighths) {
  CountingResource up;
  pmr_hashmap m;
  ASSERT_TRUE(InitU64(&m, up.get()));
  std::vector<std::pair<size_t, size_t>> growth;  // (size before, capacity)
  for (uint64_t i = 0; i < 1000; ++i) {
    size_t cap = pmr_hashmap_capacity(&m);
    ASSERT_EQ(Insert(&m, i, i), PMR_HASHMAP_INSERTED);
    if (pmr_hashmap_capacity(&m) != cap)
      growth.emplace_back(i, pmr_hashmap_capacity(&m));
  }
  EXPECT_EQ(growth, (std::vector<std::pair<size_t, size_t>>{{0, 16},
                                                            {14, 32},
                                                            {28, 64},
                                                            {56, 128},
                                                            {112, 256},
                                                            {224, 512},
                                                            {448, 1024},
                                                            {896, 2048}}));
  for (uint64_t i = 0; i < 1000; ++i) ASSERT_EQ(*Find(&m, i), i);
  for (uint64_t i = 1000; i < 2000; ++i) ASSERT_EQ(Find(&m, i), nullptr);
  pmr_hashmap_destroy(&m);
  for (const Call& c : up.calls()) EXPECT_EQ(c.alignment, 8u);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  EXPECT_EQ(up.mismatches(), 0u);
}

TEST(Hashmap, ReserveShrinkClear) {
  CountingResource up;
  pmr_hashmap m;
  ASSERT_TRUE(InitU64(&m, up.get()));
  ASSERT_TRUE(pmr_hashmap_reserve(&m, 100));
  EXPECT_EQ(pmr_hashmap_capacity(&m), 128u);
  size_t allocs = up.allocations();
  for (uint64_t i = 0; i < 100; ++i)
    ASSERT_EQ(Insert(&m, i, i), PMR_HASHMAP_INSERTED);
  EXPECT_EQ(up.allocations(), allocs);  // reserved: no rebuild
  EXPECT_EQ(pmr_hashmap_capacity(&m), 128u);
  ASSERT_TRUE(pmr_hashmap_reserve(&m, 50));  // never shrinks
  EXPECT_EQ(pmr_hashmap_capacity(&m), 128u);
  for (uint64_t i = 0; i < 90; ++i) {
    uint64_t k = i;
    ASSERT_TRUE(pmr_hashmap_erase(&m, &k, nullptr));
  }
  ASSERT_TRUE(pmr_hashmap_shrink_to_fit(&m));
  EXPECT_EQ(pmr_hashmap_capacity(&m), 16u);
  EXPECT_EQ(Contents(&m).size(), 10u);
  for (uint64_t i = 90; i < 100; ++i) ASSERT_EQ(*Find(&m, i), i);
  ASSERT_TRUE(pmr_hashmap_shrink_to_fit(&m));  // nothing to do
  pmr_hashmap_clear(&m);
  EXPECT_EQ(pmr_hashmap_size(&m), 0u);
  EXPECT_EQ(pmr_hashmap_capacity(&m), 16u);
  EXPECT_EQ(Find(&m, 95), nullptr);
  ASSERT_TRUE(pmr_hashmap_shrink_to_fit(&m));  // empty: no table at all
  EXPECT_EQ(pmr_hashmap_capacity(&m), 0u);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  ASSERT_EQ(Insert(&m, 5, 6), PMR_HASHMAP_INSERTED);  // still usable
  EXPECT_FALSE(pmr_hashmap_reserve(&m, SIZE_MAX));
  EXPECT_FALSE(pmr_hashmap_reserve(&m, SIZE_MAX / 8));
  EXPECT_EQ(pmr_hashmap_size(&m), 1u);
  EXPECT_EQ(up.failed_allocations(), 0u);  // refused before the resource
  pmr_hashmap_destroy(&m);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  EXPECT_EQ(up.mismatches(), 0u);
}

TEST(Hashmap, TombstonesDoNotMakeTheTableGrow) {
  CountingResource up;
  pmr_hashmap m;
  ASSERT_TRUE(InitU64(&m, up.get()));
  // A sliding window of 100 live keys over 200000 distinct keys.
  for (uint64_t i = 0; i < 200000; ++i) {
    ASSERT_EQ(Insert(&m, i, i), PMR_HASHMAP_INSERTED);
    if (i >= 100) {
      uint64_t old = i - 100;
      ASSERT_TRUE(pmr_hashmap_erase(&m, &old, nullptr));
    }
    ASSERT_LE(pmr_hashmap_capacity(&m), 256u);
  }
  EXPECT_EQ(pmr_hashmap_size(&m), 100u);
  for (uint64_t i = 199900; i < 200000; ++i) ASSERT_EQ(*Find(&m, i), i);
  for (uint64_t i = 0; i < 199900; i += 997) ASSERT_EQ(Find(&m, i), nullptr);
  pmr_hashmap_destroy(&m);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
}

TEST(Hashmap, StructuredKeysSpreadOverTheTable) {
  // Keys that differ only in high bits, or only in a few middle bits, must
  // still work (the hash mixes all 64 bits); check them all.
  pmr_hashmap m;
  ASSERT_TRUE(InitU64(&m, nullptr));
  std::vector<uint64_t> keys;
  for (uint64_t i = 0; i < 20000; ++i) keys.push_back(i << 44);
  for (uint64_t i = 0; i < 20000; ++i) keys.push_back((i << 20) | 1);
  for (uint64_t i = 0; i < 20000; ++i) keys.push_back(i * 0x100000000ull + 7);
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  for (uint64_t k : keys) ASSERT_EQ(Insert(&m, k, ~k), PMR_HASHMAP_INSERTED);
  EXPECT_EQ(pmr_hashmap_size(&m), keys.size());
  EXPECT_LE(pmr_hashmap_capacity(&m), 2 * keys.size() * 8 / 7 + 16);
  for (uint64_t k : keys) ASSERT_EQ(*Find(&m, k), ~k);
  pmr_hashmap_destroy(&m);
}

TEST(Hashmap, HashesMixAllBits) {
  // Flipping any one input bit flips about half the output bits.
  std::mt19937_64 rng(99);
  for (int bit = 0; bit < 64; ++bit) {
    double flips = 0;
    for (int i = 0; i < 200; ++i) {
      uint64_t x = rng();
      flips += __builtin_popcountll(pmr_hash_u64(x) ^
                                    pmr_hash_u64(x ^ (1ull << bit)));
    }
    flips /= 200;
    EXPECT_GT(flips, 24) << "bit " << bit;
    EXPECT_LT(flips, 40) << "bit " << bit;
  }
  for (int bit = 0; bit < 8 * 24; ++bit) {
    double flips = 0;
    for (int i = 0; i < 100; ++i) {
      unsigned char buf[24];
      for (auto& b : buf) b = static_cast<unsigned char>(rng());
      uint64_t h1 = pmr_hash_bytes(buf, sizeof buf);
      buf[bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
      flips += __builtin_popcountll(h1 ^ pmr_hash_bytes(buf, sizeof buf));
    }
    flips /= 100;
    EXPECT_GT(flips, 24) << "bit " << bit;
    EXPECT_LT(flips, 40) << "bit " << bit;
  }
  EXPECT_NE(pmr_hash_bytes("a", 1), pmr_hash_bytes("a\0", 2));
  EXPECT_EQ(pmr_hash_bytes("abc", 3),
            pmr_hash_bytes(std::string("abc").data(), 3));
  EXPECT_EQ(pmr_hash_bytes(nullptr, 0), pmr_hash_bytes("", 0));
}

// The inline erase leaves exactly the table the general one leaves (same
// slots emptied or made tombstones): two maps given the same operations
// iterate in the same order and grow at the same moments.
TEST(Hashmap, InlineU64EraseAgreesWithErase) {
  pmr_hashmap a, b;
  ASSERT_TRUE(InitU64(&a, nullptr));
  ASSERT_TRUE(InitU64(&b, nullptr));
  EXPECT_FALSE(pmr_hashmap_erase_u64(&a, 3));  // no table yet
  std::mt19937_64 rng(7);
  for (int step = 0; step < 60000; ++step) {
    uint64_t k = rng() % 4000;
    if (rng() % 3 == 0) {
      Insert(&a, k, k);
      Insert(&b, k, k);
    } else {
      ASSERT_EQ(pmr_hashmap_erase_u64(&a, k),
                pmr_hashmap_erase(&b, &k, nullptr));
    }
    ASSERT_EQ(pmr_hashmap_size(&a), pmr_hashmap_size(&b));
    ASSERT_EQ(pmr_hashmap_capacity(&a), pmr_hashmap_capacity(&b));
  }
  pmr_hashmap_iter ia = pmr_hashmap_iter_begin(&a),
                   ib = pmr_hashmap_iter_begin(&b);
  size_t n = 0;
  while (pmr_hashmap_iter_next(&ia)) {
    ASSERT_TRUE(pmr_hashmap_iter_next(&ib));
    uint64_t ka, kb;
    memcpy(&ka, ia.key, 8);
    memcpy(&kb, ib.key, 8);
    ASSERT_EQ(ka, kb);
    ++n;
  }
  EXPECT_FALSE(pmr_hashmap_iter_next(&ib));
  EXPECT_EQ(n, pmr_hashmap_size(&a));
  pmr_hashmap_destroy(&a);
  pmr_hashmap_destroy(&b);
  // Other kinds of 8-byte keys go through the general erase.
  ASSERT_TRUE(pmr_hashmap_init_custom(&a, 8, 8, 8, 8, nullptr, nullptr, nullptr,
                                      nullptr));
  Insert(&a, 42, 1);
  EXPECT_FALSE(pmr_hashmap_erase_u64(&a, 43));
  EXPECT_TRUE(pmr_hashmap_erase_u64(&a, 42));
  EXPECT_EQ(pmr_hashmap_size(&a), 0u);
  pmr_hashmap_destroy(&a);
  // Keys of another size are never erased that way.
  ASSERT_TRUE(pmr_hashmap_init(&a, 4, 4, 0, 1, nullptr));
  uint32_t k4 = 42;
  pmr_hashmap_insert(&a, &k4, nullptr, nullptr);
  EXPECT_FALSE(pmr_hashmap_erase_u64(&a, 42));
  EXPECT_TRUE(pmr_hashmap_contains(&a, &k4));
  pmr_hashmap_destroy(&a);
}

TEST(Hashmap, InlineU64LookupAgreesWithFind) {
  pmr_hashmap m;
  ASSERT_TRUE(InitU64(&m, nullptr));
  EXPECT_EQ(pmr_hashmap_find_u64(&m, 3), nullptr);  // no table yet
  for (uint64_t i = 0; i < 5000; ++i) Insert(&m, i * 0x9e3779b97f4a7c15ull, i);
  for (uint64_t i = 0; i < 10000; ++i) {
    uint64_t k = (i % 2 ? i : i / 2) * 0x9e3779b97f4a7c15ull;
    ASSERT_EQ(pmr_hashmap_find_u64(&m, k), pmr_hashmap_find(&m, &k));
  }
  pmr_hashmap_destroy(&m);
  // Other kinds of 8-byte keys go through the general lookup.
  ASSERT_TRUE(pmr_hashmap_init_custom(&m, 8, 8, 8, 8, nullptr, nullptr, nullptr,
                                      nullptr));
  Insert(&m, 42, 1);
  ASSERT_NE(pmr_hashmap_find_u64(&m, 42), nullptr);
  EXPECT_EQ(pmr_hashmap_find_u64(&m, 43), nullptr);
  pmr_hashmap_destroy(&m);
  // Keys of another size are never found that way.
  ASSERT_TRUE(pmr_hashmap_init(&m, 4, 4, 0, 1, nullptr));
  uint32_t k4 = 42;
  pmr_hashmap_insert(&m, &k4, nullptr, nullptr);
  EXPECT_EQ(pmr_hashmap_find_u64(&m, 42), nullptr);
  EXPECT_TRUE(pmr_hashmap_contains(&m, &k4));
  pmr_hashmap_destroy(&m);
}

// ---- Other key and value shapes ---------------------------------------------

TEST(Hashmap, OddSizedKeysAndAlignedValues) {
  struct Key {
    uint32_t a, b, c;  // 12 bytes, alignment 4
  };
  struct alignas(64) Value {
    unsigned char bytes[64];
  };
  CountingResource up;
  pmr_hashmap m;
  ASSERT_TRUE(pmr_hashmap_init(&m, sizeof(Key), alignof(Key), sizeof(Value),
                               alignof(Value), up.get()));
  for (uint32_t i = 0; i < 500; ++i) {
    Key k = {i, i * 7, ~i};
    Value v;
    std::memset(v.bytes, static_cast<int>(i & 0xff), sizeof v.bytes);
    ASSERT_EQ(pmr_hashmap_insert(&m, &k, &v, nullptr), PMR_HASHMAP_INSERTED);
  }
  for (uint32_t i = 0; i < 500; ++i) {
    Key k = {i, i * 7, ~i};
    Value* v = static_cast<Value*>(pmr_hashmap_find(&m, &k));
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(v) % 64, 0u);
    EXPECT_EQ(v->bytes[63], i & 0xff);
    k.c ^= 1;
    EXPECT_EQ(pmr_hashmap_find(&m, &k), nullptr);
  }
  pmr_hashmap_destroy(&m);
  for (const Call& c : up.calls()) EXPECT_EQ(c.alignment, 64u);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  EXPECT_EQ(up.mismatches(), 0u);
}

TEST(Hashmap, SetWithNoValuesAndTinyKeys) {
  pmr_hashmap m;
  ASSERT_TRUE(pmr_hashmap_init(&m, 1, 1, 0, 1, nullptr));
  for (int i = 0; i < 256; i += 2) {
    unsigned char k = static_cast<unsigned char>(i);
    ASSERT_EQ(pmr_hashmap_insert(&m, &k, nullptr, nullptr),
              PMR_HASHMAP_INSERTED);
  }
  EXPECT_EQ(pmr_hashmap_size(&m), 128u);
  for (int i = 0; i < 256; ++i) {
    unsigned char k = static_cast<unsigned char>(i);
    EXPECT_EQ(pmr_hashmap_contains(&m, &k), i % 2 == 0);
  }
  unsigned char k = 4;
  EXPECT_TRUE(pmr_hashmap_erase(&m, &k, nullptr));
  EXPECT_FALSE(pmr_hashmap_contains(&m, &k));
  pmr_hashmap_destroy(&m);
}

TEST(Hashmap, CStringKeysAreStoredAsPointersAndComparedByText) {
  CountingResource up;
  pmr_hashmap m;
  ASSERT_TRUE(pmr_hashmap_init_cstr(&m, sizeof(int), alignof(int), up.get()));
  const char* words[] = {"apple", "banana", "cherry", "",
                         "a longer key of text"};
  for (int i = 0; i < 5; ++i)
    ASSERT_EQ(pmr_hashmap_insert(&m, &words[i], &i, nullptr),
              PMR_HASHMAP_INSERTED);
  const char* null_key = nullptr;
  int nv = 99;
  ASSERT_EQ(pmr_hashmap_insert(&m, &null_key, &nv, nullptr),
            PMR_HASHMAP_INSERTED);
  size_t allocs = up.allocations();
  char buf[32];
  for (int i = 0; i < 5; ++i) {
    std::strcpy(buf, words[i]);  // same text, different address
    const char* k = buf;
    int* v = static_cast<int*>(pmr_hashmap_find(&m, &k));
    ASSERT_NE(v, nullptr) << words[i];
    EXPECT_EQ(*v, i);
    // The map stored the caller's pointer, not a copy of the text.
    const char* const* stored =
        static_cast<const char* const*>(pmr_hashmap_find_key(&m, &k));
    EXPECT_EQ(*stored, words[i]);
  }
  EXPECT_EQ(*static_cast<int*>(pmr_hashmap_find(&m, &null_key)), 99);
  const char* absent = "durian";
  EXPECT_EQ(pmr_hashmap_find(&m, &absent), nullptr);
  EXPECT_EQ(up.allocations(), allocs);  // lookups never allocate
  EXPECT_TRUE(pmr_hashmap_erase(&m, &null_key, nullptr));
  EXPECT_FALSE(pmr_hashmap_contains(&m, &null_key));
  EXPECT_EQ(pmr_hashmap_size(&m), 5u);
  pmr_hashmap_destroy(&m);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
}

TEST(Hashmap, PmrStringKeysAreDeepCopiedIntoTheMapResource) {
  CountingResource map_up, key_up;
  pmr_hashmap m;
  ASSERT_TRUE(
      pmr_hashmap_init_string(&m, sizeof(int), alignof(int), map_up.get()));
  const std::string long_text(100, 'L');
  for (int i = 0; i < 50; ++i) {
    pmr_string k;
    std::string text =
        (i % 2 ? long_text : std::string("k")) + std::to_string(i);
    ASSERT_TRUE(pmr_string_init_cstr(&k, text.c_str(), key_up.get()));
    ASSERT_EQ(pmr_hashmap_insert(&m, &k, &i, nullptr), PMR_HASHMAP_INSERTED);
    ASSERT_EQ(pmr_hashmap_insert(&m, &k, &i, nullptr), PMR_HASHMAP_EXISTED);
    pmr_string_destroy(&k);  // the map has its own copy
  }
  EXPECT_EQ(key_up.outstanding_blocks(), 0u);
  for (int i = 0; i < 50; ++i) {
    pmr_string k;
    std::string text =
        (i % 2 ? long_text : std::string("k")) + std::to_string(i);
    ASSERT_TRUE(pmr_string_init_cstr(&k, text.c_str(), nullptr));
    ASSERT_TRUE(pmr_string_reserve(&k, 200));  // another form, same text
    int* v = static_cast<int*>(pmr_hashmap_find(&m, &k));
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(*v, i);
    const pmr_string* stored =
        static_cast<const pmr_string*>(pmr_hashmap_find_key(&m, &k));
    EXPECT_EQ(pmr_string_resource(stored), map_up.get());
    pmr_string_destroy(&k);
  }
  // The keys live in the map's records: the table, the chunk list and the
  // chunks.
  EXPECT_GT(map_up.outstanding_blocks(), 2u);
  pmr_string k;
  ASSERT_TRUE(pmr_string_init_cstr(&k, (long_text + "1").c_str(), nullptr));
  EXPECT_TRUE(pmr_hashmap_erase(&m, &k, nullptr));
  EXPECT_EQ(pmr_hashmap_find(&m, &k), nullptr);
  pmr_string_destroy(&k);
  pmr_hashmap_clear(&m);
  EXPECT_EQ(map_up.outstanding_blocks(), 1u);  // the table
  pmr_hashmap_destroy(&m);
  EXPECT_EQ(map_up.outstanding_blocks(), 0u);
  EXPECT_EQ(map_up.mismatches(), 0u);
}

struct CaseCtx {
  int hashes = 0, equals = 0;
};
uint64_t CaseHash(const void* key, void* ctx) {
  ++static_cast<CaseCtx*>(ctx)->hashes;
  char buf[16];
  std::memcpy(buf, key, 16);
  for (char& c : buf) c = static_cast<char>(std::tolower(c));
  return pmr_hash_bytes(buf, 16);
}
bool CaseEqual(const void* a, const void* b, void* ctx) {
  ++static_cast<CaseCtx*>(ctx)->equals;
  const char* x = static_cast<const char*>(a);
  const char* y = static_cast<const char*>(b);
  for (int i = 0; i < 16; ++i)
    if (std::tolower(x[i]) != std::tolower(y[i])) return false;
  return true;
}

TEST(Hashmap, CustomHashAndEquality) {
  CaseCtx ctx;
  pmr_hashmap m;
  ASSERT_TRUE(pmr_hashmap_init_custom(&m, 16, 1, sizeof(int), alignof(int),
                                      CaseHash, CaseEqual, &ctx, nullptr));
  char k1[16] = "Hello";
  char k2[16] = "HELLO";
  char k3[16] = "world";
  int v = 1;
  ASSERT_EQ(pmr_hashmap_insert(&m, k1, &v, nullptr), PMR_HASHMAP_INSERTED);
  EXPECT_EQ(pmr_hashmap_insert(&m, k2, &v, nullptr), PMR_HASHMAP_EXISTED);
  EXPECT_TRUE(pmr_hashmap_contains(&m, k2));
  EXPECT_FALSE(pmr_hashmap_contains(&m, k3));
  EXPECT_GT(ctx.hashes, 0);
  EXPECT_GT(ctx.equals, 0);
  pmr_hashmap_destroy(&m);
  // Only one of the two given: the other is the built-in byte version.
  ASSERT_TRUE(pmr_hashmap_init_custom(&m, 16, 1, 0, 1, nullptr, nullptr,
                                      nullptr, nullptr));
  ASSERT_EQ(pmr_hashmap_insert(&m, k1, nullptr, nullptr), PMR_HASHMAP_INSERTED);
  EXPECT_FALSE(pmr_hashmap_contains(&m, k2));
  EXPECT_TRUE(pmr_hashmap_contains(&m, k1));
  pmr_hashmap_destroy(&m);
}

// ---- Iteration
// ----------------------------------------------------------------

TEST(Hashmap, IterationVisitsEveryElementOnce) {
  pmr_hashmap m;
  ASSERT_TRUE(InitU64(&m, nullptr));
  for (uint64_t i = 0; i < 1000; ++i) Insert(&m, i * 3, i);
  std::map<uint64_t, uint64_t> seen = Contents(&m);
  ASSERT_EQ(seen.size(), 1000u);
  for (auto& kv : seen) EXPECT_EQ(kv.first, kv.second * 3);
  pmr_hashmap_destroy(&m);
}

TEST(Hashmap, EraseDuringIteration) {
  for (int n : {5, 14, 15, 100, 3000}) {
    pmr_hashmap m;
    ASSERT_TRUE(InitU64(&m, nullptr));
    for (uint64_t i = 0; i < static_cast<uint64_t>(n); ++i) Insert(&m, i, i);
    std::multiset<uint64_t> visited;
    pmr_hashmap_iter it = pmr_hashmap_iter_begin(&m);
    while (pmr_hashmap_iter_next(&it)) {
      uint64_t k;
      std::memcpy(&k, it.key, 8);
      visited.insert(k);
      if (k % 2 == 0) {
        pmr_hashmap_iter_erase(&it);
        EXPECT_EQ(it.key, nullptr);
        pmr_hashmap_iter_erase(&it);  // a second time: ignored
      }
    }
    EXPECT_EQ(visited.size(),
              static_cast<size_t>(n));  // none skipped or repeated
    EXPECT_EQ(std::set<uint64_t>(visited.begin(), visited.end()).size(),
              static_cast<size_t>(n));
    EXPECT_EQ(pmr_hashmap_size(&m), static_cast<size_t>(n / 2));
    for (uint64_t i = 0; i < static_cast<uint64_t>(n); ++i)
      EXPECT_EQ(Find(&m, i) != nullptr, i % 2 == 1);
    // Erase everything that is left the same way.
    it = pmr_hashmap_iter_begin(&m);
    while (pmr_hashmap_iter_next(&it)) pmr_hashmap_iter_erase(&it);
    EXPECT_TRUE(pmr_hashmap_empty(&m));
    pmr_hashmap_destroy(&m);
  }
}

TEST(Hashmap, PointersStayValidUntilARebuild) {
  pmr_hashmap m;
  ASSERT_TRUE(InitU64(&m, nullptr));
  ASSERT_TRUE(pmr_hashmap_reserve(&m, 200));
  Insert(&m, 1, 10);
  uint64_t* p = Find(&m, 1);
  for (uint64_t i = 2; i < 200; ++i) Insert(&m, i, i);
  for (uint64_t i = 2; i < 100; ++i) {
    uint64_t k = i;
    pmr_hashmap_erase(&m, &k, nullptr);
  }
  EXPECT_EQ(Find(&m, 1), p);
  EXPECT_EQ(*p, 10u);
  pmr_hashmap_destroy(&m);
}

TEST(Hashmap, InsertingAValueThatLivesInTheTableWhileItGrows) {
  pmr_hashmap m;
  ASSERT_TRUE(InitU64(&m, nullptr));
  for (uint64_t i = 0; i < 14; ++i) Insert(&m, i, 1000 + i);
  ASSERT_EQ(pmr_hashmap_capacity(&m), 16u);
  uint64_t k = 99;
  // Both the key and the value point into the table that is about to go.
  ASSERT_EQ(pmr_hashmap_insert(&m, &k, Find(&m, 5), nullptr),
            PMR_HASHMAP_INSERTED);
  EXPECT_EQ(pmr_hashmap_capacity(&m), 32u);
  EXPECT_EQ(*Find(&m, 99), 1005u);
  k = 100;
  void* v = Find(&m, 7);
  ASSERT_EQ(pmr_hashmap_insert_or_assign(&m, &k, v), PMR_HASHMAP_INSERTED);
  EXPECT_EQ(*Find(&m, 100), 1007u);
  k = 7;
  ASSERT_EQ(pmr_hashmap_insert_or_assign(&m, &k, Find(&m, 7)),
            PMR_HASHMAP_EXISTED);
  EXPECT_EQ(*Find(&m, 7), 1007u);
  pmr_hashmap_destroy(&m);
}

// ---- Copies, moves, swap
// -------------------------------------------------------

TEST(Hashmap, CopyMoveSwap) {
  CountingResource a_up, b_up;
  pmr_hashmap a, b, c, d;
  ASSERT_TRUE(InitU64(&a, a_up.get()));
  for (uint64_t i = 0; i < 100; ++i) Insert(&a, i, i * i);
  ASSERT_TRUE(pmr_hashmap_init_copy(&b, &a, b_up.get()));
  EXPECT_EQ(pmr_hashmap_resource(&b), b_up.get());
  EXPECT_EQ(Contents(&b), Contents(&a));
  EXPECT_TRUE(Capture(&b) == Capture(&a));  // same order, same capacity
  Insert(&b, 1000, 1);
  EXPECT_EQ(Find(&a, 1000), nullptr);  // independent
  size_t allocs = a_up.allocations();
  pmr_hashmap_init_move(&c, &a);
  EXPECT_EQ(a_up.allocations(), allocs);
  EXPECT_EQ(pmr_hashmap_resource(&c), a_up.get());
  EXPECT_EQ(pmr_hashmap_size(&c), 100u);
  EXPECT_TRUE(pmr_hashmap_empty(&a));
  EXPECT_EQ(pmr_hashmap_capacity(&a), 0u);
  Insert(&a, 5, 5);  // the source is still usable
  pmr_hashmap_swap(&a, &c);
  EXPECT_EQ(pmr_hashmap_size(&a), 100u);
  EXPECT_EQ(pmr_hashmap_size(&c), 1u);
  // copy_assign keeps the destination's resource.
  ASSERT_TRUE(InitU64(&d, b_up.get()));
  Insert(&d, 77, 77);
  ASSERT_TRUE(pmr_hashmap_copy_assign(&d, &a));
  EXPECT_EQ(pmr_hashmap_resource(&d), b_up.get());
  EXPECT_EQ(Contents(&d), Contents(&a));
  EXPECT_TRUE(pmr_hashmap_copy_assign(&d, &d));
  pmr_hashmap other;
  ASSERT_TRUE(pmr_hashmap_init(&other, 4, 4, 8, 8, b_up.get()));
  EXPECT_FALSE(pmr_hashmap_copy_assign(&other, &a));  // configuration differs
  EXPECT_FALSE(pmr_hashmap_move_assign(&other, &a));
  for (pmr_hashmap* m : {&a, &b, &c, &d, &other}) pmr_hashmap_destroy(m);
  EXPECT_EQ(a_up.outstanding_blocks() + b_up.outstanding_blocks(), 0u);
  EXPECT_EQ(a_up.mismatches() + b_up.mismatches(), 0u);
}

TEST(Hashmap, MoveAssignTakesTheTableOnlyFromAnEqualResource) {
  CountingResource up1, up2;
  {
    FriendlyResource f1(&up1), f2(&up1);
    pmr_hashmap a, b;
    ASSERT_TRUE(InitU64(&a, &f1.base));
    ASSERT_TRUE(InitU64(&b, &f2.base));
    for (uint64_t i = 0; i < 50; ++i) Insert(&a, i, i);
    Insert(&b, 1000, 0);
    uint64_t* p = Find(&a, 7);
    size_t allocs = up1.allocations();
    ASSERT_TRUE(pmr_hashmap_move_assign(&b, &a));
    EXPECT_EQ(up1.allocations(), allocs);
    EXPECT_EQ(Find(&b, 7), p);  // the same table
    EXPECT_EQ(pmr_hashmap_resource(&b), &f2.base);
    EXPECT_TRUE(pmr_hashmap_empty(&a));
    EXPECT_EQ(Find(&b, 1000), nullptr);
    EXPECT_TRUE(pmr_hashmap_move_assign(&b, &b));
    pmr_hashmap_destroy(&a);
    pmr_hashmap_destroy(&b);
  }
  {
    pmr_hashmap a, b;
    ASSERT_TRUE(pmr_hashmap_init_string(&a, 8, 8, up1.get()));
    ASSERT_TRUE(pmr_hashmap_init_string(&b, 8, 8, up2.get()));
    for (int i = 0; i < 30; ++i) {
      pmr_string k;
      pmr_string_init_cstr(
          &k, (std::string(40, 'x') + std::to_string(i)).c_str(), nullptr);
      uint64_t v = i;
      pmr_hashmap_insert(&a, &k, &v, nullptr);
      pmr_string_destroy(&k);
    }
    const size_t held = up1.outstanding_blocks();
    ASSERT_TRUE(pmr_hashmap_move_assign(&b, &a));
    EXPECT_EQ(pmr_hashmap_size(&b), 30u);
    EXPECT_TRUE(pmr_hashmap_empty(&a));
    EXPECT_EQ(up1.outstanding_blocks(), 0u);  // the source gave all back
    // The table, the chunk list and the chunks, copied one for one.
    EXPECT_EQ(up2.outstanding_blocks(), held);
    pmr_hashmap_iter it = pmr_hashmap_iter_begin(&b);
    while (pmr_hashmap_iter_next(&it))
      EXPECT_EQ(pmr_string_resource(static_cast<const pmr_string*>(it.key)),
                up2.get());
    pmr_hashmap_destroy(&a);
    pmr_hashmap_destroy(&b);
  }
  EXPECT_EQ(up1.outstanding_blocks() + up2.outstanding_blocks(), 0u);
  EXPECT_EQ(up1.mismatches() + up2.mismatches(), 0u);
}

// ---- Failure injection
// -----------------------------------------------------------

// For k = 0, 1, 2, ...: builds a map with `setup` (never failing), lets the
// upstream succeed k times and runs `op`. A failed op must leave the map
// exactly as it was; a successful one must pass `check`. Stops at the first
// success during which no allocation failed.
void InjectFailures(
    const std::function<void(pmr_hashmap*, pmr_mem_resource*)>& init,
    const std::function<void(pmr_hashmap*)>& setup,
    const std::function<bool(pmr_hashmap*)>& op,
    const std::function<void(pmr_hashmap*)>& check, bool string_keys = false) {
  for (size_t k = 0;; ++k) {
    ASSERT_LT(k, 100u) << "never succeeded";
    CountingResource up;
    pmr_hashmap m;
    init(&m, up.get());
    setup(&m);
    State before = Capture(&m, string_keys);
    size_t failed_before = up.failed_allocations();
    up.fail_after(k);
    bool ok = op(&m);
    up.never_fail();
    bool injected = up.failed_allocations() != failed_before;
    if (ok) {
      check(&m);
    } else {
      EXPECT_TRUE(injected) << "failed with no allocation failure, k=" << k;
      EXPECT_TRUE(Capture(&m, string_keys) == before)
          << "changed by a failed op, k=" << k;
    }
    pmr_hashmap_destroy(&m);
    EXPECT_EQ(up.outstanding_blocks(), 0u);
    EXPECT_EQ(up.mismatches(), 0u);
    if (ok && !injected) return;
  }
}

void InitU64Map(pmr_hashmap* m, pmr_mem_resource* r) {
  ASSERT_TRUE(InitU64(m, r));
}
void InitStringMap(pmr_hashmap* m, pmr_mem_resource* r) {
  ASSERT_TRUE(pmr_hashmap_init_string(m, 8, 8, r));
}
// 14 keys: the 16-slot table is full, the next new key rebuilds it.
void FillU64(pmr_hashmap* m) {
  for (uint64_t i = 0; i < 14; ++i)
    ASSERT_EQ(Insert(m, i, i), PMR_HASHMAP_INSERTED);
}
std::string LongKey(int i) { return std::string(30, 'k') + std::to_string(i); }
bool InsertString(pmr_hashmap* m, const std::string& text, uint64_t v,
                  pmr_hashmap_status* st = nullptr) {
  pmr_string k;
  pmr_string_init_cstr(&k, text.c_str(), pmr_malloc_resource());
  pmr_hashmap_status s = pmr_hashmap_insert(m, &k, &v, nullptr);
  pmr_string_destroy(&k);
  if (st) *st = s;
  return s >= 0;
}
void FillString(pmr_hashmap* m) {
  for (int i = 0; i < 14; ++i) ASSERT_TRUE(InsertString(m, LongKey(i), i));
}

// A 64-slot table whose free slots are used up by keys and tombstones (from
// insert/erase churn at ~70% load) while it holds few enough keys to be
// rebuilt at the same capacity.
void TombstoneSetup(pmr_hashmap* m) {
  ASSERT_TRUE(pmr_hashmap_reserve(m, 56));
  ASSERT_EQ(pmr_hashmap_capacity(m), 64u);
  std::mt19937_64 rng(1);
  std::vector<uint64_t> keys;
  uint64_t next = 0;
  for (int step = 0; m->growth_left > 0; ++step) {
    ASSERT_LT(step, 100000);
    if (keys.size() < 44) {
      ASSERT_EQ(Insert(m, next, next), PMR_HASHMAP_INSERTED);
      keys.push_back(next++);
    } else {
      size_t i = rng() % keys.size();
      ASSERT_TRUE(pmr_hashmap_erase(m, &keys[i], nullptr));
      keys[i] = keys.back();
      keys.pop_back();
    }
  }
  ASSERT_EQ(pmr_hashmap_capacity(m), 64u);
  ASSERT_EQ(pmr_hashmap_size(m), 44u);  // 12 tombstones take the rest
}

// A key whose insertion after TombstoneSetup rebuilds the table (its probe
// finds an EMPTY slot, not a tombstone).
uint64_t RebuildingKey() {
  for (uint64_t c = 1000000;; ++c) {
    CountingResource up;
    pmr_hashmap m;
    InitU64(&m, up.get());
    TombstoneSetup(&m);
    size_t allocs = up.allocations();
    Insert(&m, c, 0);
    bool rebuilt = up.allocations() != allocs;
    EXPECT_EQ(pmr_hashmap_capacity(&m), 64u);  // same size: tombstones dropped
    pmr_hashmap_destroy(&m);
    if (rebuilt) return c;
  }
}

TEST(HashmapFailures, EveryAllocatingOperation) {
  auto has = [](uint64_t k, uint64_t v) {
    return [k, v](pmr_hashmap* m) {
      ASSERT_NE(Find(m, k), nullptr);
      EXPECT_EQ(*Find(m, k), v);
      EXPECT_EQ(pmr_hashmap_size(m), 15u);
    };
  };
  InjectFailures(
      InitU64Map, FillU64,
      [](pmr_hashmap* m) { return Insert(m, 100, 1) >= 0; }, has(100, 1));
  InjectFailures(
      InitU64Map, FillU64,
      [](pmr_hashmap* m) {
        uint64_t k = 100, v = 2;
        return pmr_hashmap_insert_or_assign(m, &k, &v) >= 0;
      },
      has(100, 2));
  InjectFailures(
      InitU64Map, FillU64,
      [](pmr_hashmap* m) {
        uint64_t k = 100;
        return pmr_hashmap_emplace(m, &k, nullptr) != nullptr;
      },
      has(100, 0));
  InjectFailures(
      InitU64Map, FillU64,
      [](pmr_hashmap* m) {  // value from the table being replaced
        uint64_t k = 100;
        return pmr_hashmap_insert(m, &k, Find(m, 3), nullptr) >= 0;
      },
      has(100, 3));
  InjectFailures(
      InitU64Map, FillU64,
      [](pmr_hashmap* m) { return pmr_hashmap_reserve(m, 1000); },
      [](pmr_hashmap* m) {
        EXPECT_EQ(pmr_hashmap_capacity(m), 2048u);
        EXPECT_EQ(Contents(m).size(), 14u);
      });
  InjectFailures(
      InitU64Map,
      [](pmr_hashmap* m) {
        FillU64(m);
        ASSERT_TRUE(pmr_hashmap_reserve(m, 1000));
      },
      [](pmr_hashmap* m) { return pmr_hashmap_shrink_to_fit(m); },
      [](pmr_hashmap* m) {
        EXPECT_EQ(pmr_hashmap_capacity(m), 16u);
        EXPECT_EQ(Contents(m).size(), 14u);
      });
  // Tombstones fill the table: the next insertion rebuilds at the same size.
  const uint64_t key = RebuildingKey();
  InjectFailures(
      InitU64Map, TombstoneSetup,
      [&](pmr_hashmap* m) { return Insert(m, key, 1) >= 0; },
      [&](pmr_hashmap* m) {
        EXPECT_EQ(*Find(m, key), 1u);
        EXPECT_EQ(pmr_hashmap_capacity(m), 64u);
        EXPECT_EQ(m->growth_left, 56u - 45u);  // no tombstones
      });
  // Copy-assign and move-assign from a map on another resource.
  auto source = [](pmr_hashmap* src) {
    InitU64(src, pmr_malloc_resource());
    for (uint64_t i = 0; i < 40; ++i) Insert(src, i + 500, i);
  };
  InjectFailures(
      InitU64Map, FillU64,
      [&](pmr_hashmap* m) {
        pmr_hashmap src;
        source(&src);
        bool ok = pmr_hashmap_copy_assign(m, &src);
        pmr_hashmap_destroy(&src);
        return ok;
      },
      [](pmr_hashmap* m) {
        EXPECT_EQ(pmr_hashmap_size(m), 40u);
        EXPECT_EQ(*Find(m, 539), 39u);
      });
  InjectFailures(
      InitU64Map, FillU64,
      [&](pmr_hashmap* m) {
        pmr_hashmap src;
        source(&src);
        bool ok = pmr_hashmap_move_assign(m, &src);
        EXPECT_EQ(pmr_hashmap_size(&src), ok ? 0u : 40u);
        pmr_hashmap_destroy(&src);
        return ok;
      },
      [](pmr_hashmap* m) { EXPECT_EQ(pmr_hashmap_size(m), 40u); });
}

TEST(HashmapFailures, StringKeysHaveTwoAllocationPoints) {
  // A record that does not fit in the last chunk's room (the 14 keys leave
  // 80 bytes) needs a new chunk, then the full table a new one; both must
  // fail cleanly.
  int rounds = 0;
  InjectFailures(
      InitStringMap, FillString,
      [&](pmr_hashmap* m) {
        ++rounds;
        return InsertString(m, std::string(100, 'n'), 7);
      },
      [](pmr_hashmap* m) {
        EXPECT_EQ(pmr_hashmap_size(m), 15u);
        EXPECT_EQ(pmr_hashmap_capacity(m), 32u);
      },
      true);
  EXPECT_EQ(rounds, 3);
  // An existing key needs no memory at all.
  InjectFailures(
      InitStringMap, FillString,
      [](pmr_hashmap* m) {
        pmr_hashmap_status st;
        return InsertString(m, LongKey(3), 9, &st) && st == PMR_HASHMAP_EXISTED;
      },
      [](pmr_hashmap* m) { EXPECT_EQ(pmr_hashmap_size(m), 14u); }, true);
  // Copy-assign copies the records chunk by chunk: the chunk list, the 3
  // chunks (records of 48 bytes, 256-byte chunks while the map is small),
  // the table.
  rounds = 0;
  InjectFailures(
      InitStringMap, [](pmr_hashmap*) {},
      [&](pmr_hashmap* m) {
        ++rounds;
        pmr_hashmap src;
        pmr_hashmap_init_string(&src, 8, 8, pmr_malloc_resource());
        FillString(&src);
        InsertString(&src, "short", 1);
        bool ok = pmr_hashmap_copy_assign(m, &src);
        pmr_hashmap_destroy(&src);
        return ok;
      },
      [](pmr_hashmap* m) {
        EXPECT_EQ(pmr_hashmap_size(m), 15u);
        pmr_hashmap_iter it = pmr_hashmap_iter_begin(m);
        while (pmr_hashmap_iter_next(&it))
          EXPECT_EQ(pmr_string_resource(static_cast<const pmr_string*>(it.key)),
                    pmr_hashmap_resource(m));
      },
      true);
  EXPECT_EQ(rounds, 6);  // 5 allocations, then success
}

TEST(HashmapFailures, InitCopyLeavesAValidEmptyMap) {
  pmr_hashmap src;
  ASSERT_TRUE(pmr_hashmap_init_string(&src, 8, 8, nullptr));
  FillString(&src);
  for (size_t k = 0;; ++k) {
    CountingResource up;
    pmr_hashmap dst;
    up.fail_after(k);
    bool ok = pmr_hashmap_init_copy(&dst, &src, up.get());
    up.never_fail();
    if (!ok) {
      EXPECT_TRUE(pmr_hashmap_empty(&dst));
      EXPECT_EQ(pmr_hashmap_capacity(&dst), 0u);
      EXPECT_EQ(pmr_hashmap_resource(&dst), up.get());
      EXPECT_TRUE(InsertString(&dst, "usable", 1));
    } else {
      EXPECT_TRUE(Capture(&dst, true) == Capture(&src, true));
    }
    pmr_hashmap_destroy(&dst);
    EXPECT_EQ(up.outstanding_blocks(), 0u);
    EXPECT_EQ(up.mismatches(), 0u);
    if (ok) break;
  }
  pmr_hashmap_destroy(&src);
}

// ---- Random operations against std::unordered_map
// ------------------------------

TEST(HashmapRandom, MatchesStdUnorderedMapUnderRandomFailures) {
  std::mt19937_64 rng(777);
  CountingResource up;
  pmr_hashmap m, w;
  ASSERT_TRUE(InitU64(&m, up.get()));
  ASSERT_TRUE(InitU64(&w, up.get()));
  std::unordered_map<uint64_t, uint64_t> oracle, oracle_w;
  size_t failures = 0;
  uint64_t key_space = 64;
  for (int step = 0; step < 8000; ++step) {
    if (step % 2000 == 0) key_space *= 4;
    bool arm = rng() % 6 == 0;
    if (arm) up.fail_after(0);
    State before = Capture(&m);
    auto want = oracle;
    uint64_t k = rng() % key_space, v = rng();
    bool ok = true;
    switch (rng() % 12) {
      case 0:
      case 1:
      case 2: {
        pmr_hashmap_status st = Insert(&m, k, v);
        ok = st >= 0;
        ASSERT_TRUE(!ok || (st == PMR_HASHMAP_INSERTED) == !oracle.count(k));
        want.emplace(k, v);
        break;
      }
      case 3: {
        pmr_hashmap_status st = pmr_hashmap_insert_or_assign(&m, &k, &v);
        ok = st >= 0;
        want[k] = v;
        break;
      }
      case 4: {
        bool inserted;
        uint64_t* slot =
            static_cast<uint64_t*>(pmr_hashmap_emplace(&m, &k, &inserted));
        ok = slot != nullptr;
        if (ok) {
          ASSERT_EQ(inserted, !oracle.count(k));
          *slot += 1;
        }
        want[k] += 1;
        break;
      }
      case 5: {
        uint64_t out = 0;
        bool erased = pmr_hashmap_erase(&m, &k, &out);
        ASSERT_EQ(erased, oracle.count(k) == 1);
        if (erased) {
          ASSERT_EQ(out, oracle[k]);
        }
        want.erase(k);
        break;
      }
      case 6: {
        ASSERT_EQ(pmr_hashmap_erase_u64(&m, k), oracle.count(k) == 1);
        want.erase(k);
        break;
      }
      case 7: {
        uint64_t* f = Find(&m, k);
        ASSERT_EQ(static_cast<void*>(f), pmr_hashmap_find_u64(&m, k));
        ASSERT_EQ(f != nullptr, oracle.count(k) == 1);
        if (f) {
          ASSERT_EQ(*f, oracle[k]);
        }
        break;
      }
      case 8: {  // erase a random fraction during iteration
        uint64_t mod = 2 + rng() % 5;
        pmr_hashmap_iter it = pmr_hashmap_iter_begin(&m);
        while (pmr_hashmap_iter_next(&it)) {
          uint64_t key;
          std::memcpy(&key, it.key, 8);
          if (key % mod == 0) {
            pmr_hashmap_iter_erase(&it);
            want.erase(key);
          }
        }
        break;
      }
      case 9:
        if (rng() % 4 == 0) {
          ok = pmr_hashmap_reserve(&m, rng() % (2 * key_space));
        } else {
          ok = pmr_hashmap_shrink_to_fit(&m);
        }
        break;
      case 10:
        if (rng() % 8 == 0) {
          pmr_hashmap_clear(&m);
          want.clear();
        } else {
          pmr_hashmap_swap(&m, &w);
          std::swap(want, oracle_w);
          before = Capture(&m);
        }
        break;
      case 11:
        ok = pmr_hashmap_copy_assign(&m, &w);
        want = oracle_w;
        break;
    }
    up.never_fail();
    if (ok) {
      oracle = want;
    } else {
      ASSERT_TRUE(arm) << "step " << step;
      ++failures;
      ASSERT_TRUE(Capture(&m) == before) << "step " << step;
    }
    ASSERT_EQ(pmr_hashmap_size(&m), oracle.size()) << "step " << step;
    if (step % 50 == 0 || !ok) {
      auto got = Contents(&m);
      ASSERT_EQ(got,
                (std::map<uint64_t, uint64_t>(oracle.begin(), oracle.end())))
          << "step " << step;
    }
  }
  EXPECT_GT(failures, 20u);
  pmr_hashmap_destroy(&m);
  pmr_hashmap_destroy(&w);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  EXPECT_EQ(up.mismatches(), 0u);
}

// ---- Inline insert_u64 and typed maps --------------------------------------

// The inline insertion leaves exactly the table the general one leaves, on
// every path (fast placement, present keys, growth, tombstones).
TEST(Hashmap, InlineU64InsertAgreesWithInsert) {
  pmr_hashmap a, b;
  ASSERT_TRUE(InitU64(&a, nullptr));
  ASSERT_TRUE(InitU64(&b, nullptr));
  std::mt19937_64 rng(11);
  for (int step = 0; step < 60000; ++step) {
    uint64_t k = rng() % 5000, v = rng();
    if (rng() % 3 != 0) {
      void *oa = nullptr, *ob = nullptr;
      const bool with_value = rng() % 4 != 0;
      pmr_hashmap_status sa =
          pmr_hashmap_insert_u64(&a, k, with_value ? &v : nullptr, &oa);
      pmr_hashmap_status sb =
          pmr_hashmap_insert(&b, &k, with_value ? &v : nullptr, &ob);
      ASSERT_EQ(sa, sb);
      ASSERT_EQ(memcmp(oa, ob, 8), 0);
      ASSERT_EQ(oa, pmr_hashmap_find(&a, &k));
    } else {
      ASSERT_EQ(pmr_hashmap_erase_u64(&a, k), pmr_hashmap_erase_u64(&b, k));
    }
    ASSERT_EQ(pmr_hashmap_size(&a), pmr_hashmap_size(&b));
    ASSERT_EQ(a.growth_left, b.growth_left);
  }
  EXPECT_TRUE(Capture(&a) == Capture(&b));
  pmr_hashmap_destroy(&a);
  pmr_hashmap_destroy(&b);
  // A set (no values), and a failure leaves the map unchanged.
  CountingResource up;
  ASSERT_TRUE(pmr_hashmap_init(&a, 8, 8, 0, 1, up.get()));
  up.fail_after(0);
  void* out = &a;
  EXPECT_EQ(pmr_hashmap_insert_u64(&a, 1, nullptr, &out), PMR_HASHMAP_NOMEM);
  EXPECT_EQ(out, nullptr);
  EXPECT_EQ(pmr_hashmap_capacity(&a), 0u);
  up.never_fail();
  EXPECT_EQ(pmr_hashmap_insert_u64(&a, 1, nullptr, nullptr),
            PMR_HASHMAP_INSERTED);
  EXPECT_EQ(pmr_hashmap_insert_u64(&a, 1, nullptr, nullptr),
            PMR_HASHMAP_EXISTED);
  pmr_hashmap_destroy(&a);
  // Other kinds of 8-byte keys go through the general insert; other sizes
  // fail.
  ASSERT_TRUE(pmr_hashmap_init_custom(&a, 8, 8, 8, 8, nullptr, nullptr, nullptr,
                                      nullptr));
  uint64_t v = 5;
  EXPECT_EQ(pmr_hashmap_insert_u64(&a, 42, &v, nullptr), PMR_HASHMAP_INSERTED);
  EXPECT_EQ(*Find(&a, 42), 5u);
  pmr_hashmap_destroy(&a);
  ASSERT_TRUE(pmr_hashmap_init(&a, 4, 4, 0, 1, nullptr));
  out = &a;
  errno = 0;
  EXPECT_EQ(pmr_hashmap_insert_u64(&a, 42, nullptr, &out), PMR_HASHMAP_BADARG);
  EXPECT_EQ(errno, EINVAL);  // a wrong key, not out of memory
  EXPECT_EQ(out, nullptr);
  EXPECT_EQ(pmr_hashmap_size(&a), 0u);
  pmr_hashmap_destroy(&a);
}

struct Point {
  int32_t x, y, z;
};
PMR_HASHMAP_TYPED(U64ToDouble, uint64_t, double)
PMR_HASHMAP_TYPED(PointToU16, Point, uint16_t)
PMR_HASHMAP_TYPED_STR(WordCount, uint32_t)

TEST(HashmapTyped, KeysAndValuesByType) {
  U64ToDouble m;
  ASSERT_TRUE(U64ToDouble_init(&m, nullptr));
  for (uint64_t i = 0; i < 1000; ++i)
    ASSERT_EQ(U64ToDouble_insert(&m, i, i / 2.0), PMR_HASHMAP_INSERTED);
  EXPECT_EQ(U64ToDouble_insert(&m, 3, 9.0), PMR_HASHMAP_EXISTED);
  EXPECT_EQ(*U64ToDouble_find(&m, 3), 1.5);
  EXPECT_EQ(U64ToDouble_insert_or_assign(&m, 3, 9.0), PMR_HASHMAP_EXISTED);
  EXPECT_EQ(*U64ToDouble_find(&m, 3), 9.0);
  bool inserted = false;
  double* d = U64ToDouble_emplace(&m, 5000, &inserted);
  ASSERT_NE(d, nullptr);
  EXPECT_TRUE(inserted);
  EXPECT_EQ(*d, 0.0);
  double out = 0;
  EXPECT_TRUE(U64ToDouble_erase(&m, 8, &out));
  EXPECT_EQ(out, 4.0);
  EXPECT_TRUE(U64ToDouble_erase(&m, 9, nullptr));
  EXPECT_FALSE(U64ToDouble_erase(&m, 9, nullptr));
  EXPECT_EQ(U64ToDouble_find(&m, 9), nullptr);
  EXPECT_EQ(U64ToDouble_size(&m), 999u);
  EXPECT_EQ(pmr_hashmap_capacity(U64ToDouble_base(&m)), 2048u);
  U64ToDouble_destroy(&m);

  PointToU16 p;
  ASSERT_TRUE(PointToU16_init(&p, nullptr));
  EXPECT_EQ(U64ToDouble_base(&m)->key_size, 8u);
  EXPECT_EQ(PointToU16_base(&p)->key_size, sizeof(Point));
  EXPECT_EQ(PointToU16_base(&p)->value_size, 2u);
  for (int32_t i = 0; i < 300; ++i)
    ASSERT_EQ(PointToU16_insert(&p, Point{i, -i, 7}, uint16_t(i)),
              PMR_HASHMAP_INSERTED);
  ASSERT_NE(PointToU16_find(&p, Point{17, -17, 7}), nullptr);
  EXPECT_EQ(*PointToU16_find(&p, Point{17, -17, 7}), 17);
  EXPECT_EQ(PointToU16_find(&p, Point{17, 17, 7}), nullptr);
  EXPECT_TRUE(PointToU16_erase(&p, Point{17, -17, 7}, nullptr));
  EXPECT_EQ(PointToU16_size(&p), 299u);
  PointToU16_destroy(&p);

  WordCount w;
  ASSERT_TRUE(WordCount_init(&w, nullptr));
  const std::string text = "the cat and the hat and the bat";
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(' ', pos);
    if (end == std::string::npos) end = text.size();
    uint32_t* c = WordCount_emplace(&w, text.data() + pos, end - pos, nullptr);
    ASSERT_NE(c, nullptr);
    ++*c;
    pos = end + 1;
  }
  EXPECT_EQ(WordCount_size(&w), 5u);
  EXPECT_EQ(*WordCount_find(&w, "the", 3), 3u);
  EXPECT_EQ(WordCount_insert(&w, "dog", 3, 1), PMR_HASHMAP_INSERTED);
  EXPECT_EQ(WordCount_insert_or_assign(&w, "dog", 3, 4), PMR_HASHMAP_EXISTED);
  uint32_t n = 0;
  EXPECT_TRUE(WordCount_erase(&w, "dog", 3, &n));
  EXPECT_EQ(n, 4u);
  EXPECT_EQ(WordCount_find(&w, "dog", 3), nullptr);
  WordCount_destroy(&w);
}

PMR_HASHMAP_TYPED(NameToId, const char*, int)

TEST(HashmapTyped, IteratorsAreTyped) {
  // The fields have the map's types: no cast in the caller.
  static_assert(
      std::is_same<decltype(U64ToDouble_iter::key), const uint64_t*>::value,
      "typed key");
  static_assert(std::is_same<decltype(U64ToDouble_iter::value), double*>::value,
                "typed value");
  static_assert(
      std::is_same<decltype(NameToId_iter::key), const char* const*>::value,
      "a pointer key: the pointer is const, not what it points to");
  static_assert(
      std::is_same<decltype(WordCount_iter::key), const pmr_string*>::value,
      "string key");

  U64ToDouble m;
  ASSERT_TRUE(U64ToDouble_init(&m, nullptr));
  U64ToDouble_iter it = U64ToDouble_iter_begin(&m);
  EXPECT_FALSE(U64ToDouble_iter_next(&it));  // empty map
  for (uint64_t i = 0; i < 100; ++i)
    ASSERT_EQ(U64ToDouble_insert(&m, i, i * 2.0), PMR_HASHMAP_INSERTED);
  std::set<uint64_t> seen;
  it = U64ToDouble_iter_begin(&m);
  while (U64ToDouble_iter_next(&it)) {
    EXPECT_EQ(*it.value, *it.key * 2.0);
    EXPECT_EQ(it.value, U64ToDouble_find(&m, *it.key));
    EXPECT_TRUE(seen.insert(*it.key).second);
    *it.value += 1;  // values are writable
    if (*it.key % 2 == 1) U64ToDouble_iter_erase(&it);
  }
  EXPECT_EQ(seen.size(), 100u);
  EXPECT_EQ(U64ToDouble_size(&m), 50u);
  EXPECT_EQ(*U64ToDouble_find(&m, 10), 21.0);
  EXPECT_EQ(U64ToDouble_find(&m, 11), nullptr);
  U64ToDouble_destroy(&m);

  WordCount w;
  ASSERT_TRUE(WordCount_init(&w, nullptr));
  ASSERT_EQ(WordCount_insert(&w, "one", 3, 1), PMR_HASHMAP_INSERTED);
  ASSERT_EQ(WordCount_insert(&w, "a longer key than fits inline", 29, 2),
            PMR_HASHMAP_INSERTED);
  std::map<std::string, uint32_t> words;
  WordCount_iter wi = WordCount_iter_begin(&w);
  while (WordCount_iter_next(&wi))
    words[std::string(pmr_string_c_str(wi.key), pmr_string_length(wi.key))] =
        *wi.value;
  EXPECT_EQ(words, (std::map<std::string, uint32_t>{
                       {"one", 1}, {"a longer key than fits inline", 2}}));
  WordCount_destroy(&w);
}

// ---- String keys: records ------------------------------------------------

// Keys of 40 chars with 8-byte values: 8 + 4 + 41 bytes, 56 with padding.
std::string RecKey(int i) {
  std::string k = std::to_string(i);
  return k + std::string(40 - k.size(), '.');
}

TEST(HashmapRecords, KeysAreStoredExactlySizedInTheMapsChunks) {
  CountingResource up;
  pmr_hashmap m;
  ASSERT_TRUE(pmr_hashmap_init_string(&m, 8, 8, up.get()));
  for (int i = 0; i < 1000; ++i) {
    uint64_t v = i;
    ASSERT_EQ(pmr_hashmap_insert_str(&m, RecKey(i).data(), 40, &v, nullptr),
              PMR_HASHMAP_INSERTED);
  }
  // 56 bytes a record, 4 + 1 a slot of the 2048-slot table; a pmr_string
  // key alone would take 32 bytes a slot, and a heap block of 41 + its
  // rounding per key.
  EXPECT_EQ(pmr_hashmap_capacity(&m), 2048u);
  EXPECT_LT(up.outstanding_bytes(), 1000u * 56 * 5 / 4 + 2048 * 5 + 2048);
  // Few allocations: a chunk holds a quarter of the live bytes.
  EXPECT_LT(up.outstanding_blocks(), 24u);
  // Erasing the last key gives every chunk back; the table stays.
  for (int i = 0; i < 1000; ++i)
    ASSERT_TRUE(pmr_hashmap_erase_str(&m, RecKey(i).data(), 40, nullptr));
  EXPECT_EQ(up.outstanding_blocks(), 1u);
  pmr_hashmap_destroy(&m);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  EXPECT_EQ(up.mismatches(), 0u);
}

TEST(HashmapRecords, ChurnIsBoundedByCompaction) {
  CountingResource up;
  pmr_hashmap m;
  ASSERT_TRUE(pmr_hashmap_init_string(&m, 8, 8, up.get()));
  // 200 live keys at any time; 20000 inserted and erased in all.
  for (int i = 0; i < 20000; ++i) {
    uint64_t v = i;
    ASSERT_EQ(pmr_hashmap_insert_str(&m, RecKey(i).data(), 40, &v, nullptr),
              PMR_HASHMAP_INSERTED);
    if (i >= 200) {
      ASSERT_TRUE(
          pmr_hashmap_erase_str(&m, RecKey(i - 200).data(), 40, nullptr));
    }
  }
  EXPECT_EQ(pmr_hashmap_size(&m), 200u);
  // Dead records never outweigh the live ones by more than a chunk's worth
  // (1.1 MiB of churn went through).
  EXPECT_LT(up.max_outstanding_bytes(), 64u * 1024);
  for (int i = 19800; i < 20000; ++i) {
    const uint64_t* v = static_cast<const uint64_t*>(
        pmr_hashmap_find_str(&m, RecKey(i).data(), 40));
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(*v, uint64_t(i));
  }
  pmr_hashmap_destroy(&m);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
}

TEST(HashmapRecords, ACompactionThatCannotGetMemoryChangesNothing) {
  // 10 keys erased of 14: dead bytes outweigh live ones, and a 100-char key
  // does not fit in the last chunk's room, so the insertion compacts: new
  // chunks, then a new table, each may fail.
  int rounds = 0;
  InjectFailures(
      InitStringMap,
      [](pmr_hashmap* m) {
        FillString(m);
        for (int i = 0; i < 10; ++i) {
          pmr_string k;
          pmr_string_init_cstr(&k, LongKey(i).c_str(), nullptr);
          ASSERT_TRUE(pmr_hashmap_erase(m, &k, nullptr));
          pmr_string_destroy(&k);
        }
      },
      [&](pmr_hashmap* m) {
        ++rounds;
        return InsertString(m, std::string(100, 'n'), 7);
      },
      [](pmr_hashmap* m) {
        EXPECT_EQ(pmr_hashmap_size(m), 5u);
        for (int i = 10; i < 14; ++i)
          EXPECT_NE(
              pmr_hashmap_find_str(m, LongKey(i).data(), LongKey(i).size()),
              nullptr);
      },
      true);
  EXPECT_GE(rounds, 3);
}

TEST(HashmapRecords, KeyViewsReadTheStoredBytes) {
  CountingResource up;
  pmr_hashmap m;
  ASSERT_TRUE(pmr_hashmap_init_string(&m, 0, 1, up.get()));  // a set
  const std::string with_nul("a\0b", 3);
  ASSERT_EQ(pmr_hashmap_insert_str(&m, with_nul.data(), 3, nullptr, nullptr),
            PMR_HASHMAP_INSERTED);
  ASSERT_EQ(pmr_hashmap_insert_str(&m, "", 0, nullptr, nullptr),
            PMR_HASHMAP_INSERTED);
  pmr_string k;
  ASSERT_TRUE(pmr_string_init_bytes(&k, with_nul.data(), 3, nullptr));
  const pmr_string* stored =
      static_cast<const pmr_string*>(pmr_hashmap_find_key(&m, &k));
  ASSERT_NE(stored, nullptr);
  EXPECT_EQ(std::string(pmr_string_c_str(stored), pmr_string_length(stored)),
            with_nul);
  EXPECT_EQ(pmr_string_c_str(stored)[3], '\0');
  EXPECT_TRUE(pmr_string_equal(stored, &k));
  EXPECT_EQ(pmr_string_resource(stored), up.get());
  pmr_string_destroy(&k);
  std::set<std::string> seen;
  pmr_hashmap_iter it = pmr_hashmap_iter_begin(&m);
  while (pmr_hashmap_iter_next(&it)) {
    const pmr_string* ks = static_cast<const pmr_string*>(it.key);
    seen.insert(std::string(pmr_string_c_str(ks), pmr_string_length(ks)));
  }
  EXPECT_EQ(seen, (std::set<std::string>{"", with_nul}));
  pmr_hashmap_destroy(&m);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
}

// ---- Text keys by (pointer, length) ----------------------------------------

TEST(HashmapText, StringMapsByPointerAndLength) {
  CountingResource up;
  pmr_hashmap m;
  ASSERT_TRUE(pmr_hashmap_init_string(&m, 8, 8, up.get()));
  const std::string long_text(40, 'L');
  uint64_t v = 7;
  void* slot = nullptr;
  EXPECT_EQ(pmr_hashmap_find_str(&m, "abc", 3), nullptr);
  EXPECT_EQ(pmr_hashmap_insert_str(&m, "abc", 3, &v, &slot),
            PMR_HASHMAP_INSERTED);
  EXPECT_EQ(slot, pmr_hashmap_find_str(&m, "abcdef", 3));  // only 3 bytes
  EXPECT_EQ(pmr_hashmap_find_str(&m, "ab", 2), nullptr);
  // The same key as a pmr_string.
  pmr_string k;
  ASSERT_TRUE(pmr_string_init_cstr(&k, "abc", nullptr));
  EXPECT_EQ(pmr_hashmap_find(&m, &k), slot);
  pmr_string_destroy(&k);
  // A present key: nothing allocated, nothing copied.
  ASSERT_EQ(pmr_hashmap_insert_str(&m, long_text.data(), 40, &v, nullptr),
            PMR_HASHMAP_INSERTED);
  const size_t allocs = up.allocations();
  bool inserted = true;
  uint64_t* got = static_cast<uint64_t*>(
      pmr_hashmap_emplace_str(&m, long_text.data(), 40, &inserted));
  ASSERT_NE(got, nullptr);
  EXPECT_FALSE(inserted);
  EXPECT_EQ(*got, 7u);
  uint64_t w = 9;
  EXPECT_EQ(pmr_hashmap_insert_or_assign_str(&m, long_text.data(), 40, &w),
            PMR_HASHMAP_EXISTED);
  EXPECT_EQ(*got, 9u);
  EXPECT_EQ(up.allocations(), allocs);
  // Embedded NULs and the empty text (p may be NULL when n is 0).
  EXPECT_EQ(pmr_hashmap_insert_str(&m, "a\0b", 3, &v, nullptr),
            PMR_HASHMAP_INSERTED);
  EXPECT_NE(pmr_hashmap_find_str(&m, "a\0b", 3), nullptr);
  EXPECT_EQ(pmr_hashmap_find_str(&m, "a\0c", 3), nullptr);
  EXPECT_EQ(pmr_hashmap_insert_str(&m, nullptr, 0, &v, nullptr),
            PMR_HASHMAP_INSERTED);
  EXPECT_EQ(pmr_hashmap_insert_str(&m, "", 0, &v, nullptr),
            PMR_HASHMAP_EXISTED);
  EXPECT_EQ(pmr_hashmap_insert_str(&m, nullptr, 1, &v, nullptr),
            PMR_HASHMAP_BADARG);
  EXPECT_EQ(pmr_hashmap_size(&m), 4u);
  uint64_t out = 0;
  EXPECT_TRUE(pmr_hashmap_erase_str(&m, long_text.data(), 40, &out));
  EXPECT_EQ(out, 9u);
  EXPECT_FALSE(pmr_hashmap_erase_str(&m, long_text.data(), 40, nullptr));
  EXPECT_TRUE(pmr_hashmap_erase_str(&m, nullptr, 0, nullptr));
  EXPECT_EQ(pmr_hashmap_size(&m), 2u);
  // A new key whose record needs a chunk that cannot be had leaves the map
  // unchanged (300 bytes do not fit in the first chunk's room).
  const std::string huge_text(300, 'H');
  up.fail_after(0);
  EXPECT_EQ(pmr_hashmap_insert_str(&m, huge_text.data(), 300, &v, &slot),
            PMR_HASHMAP_NOMEM);
  EXPECT_EQ(slot, nullptr);
  EXPECT_EQ(pmr_hashmap_emplace_str(&m, huge_text.data(), 300, &inserted),
            nullptr);
  EXPECT_FALSE(inserted);
  up.never_fail();
  EXPECT_EQ(pmr_hashmap_size(&m), 2u);
  EXPECT_EQ(pmr_hashmap_find_str(&m, huge_text.data(), 300), nullptr);
  pmr_hashmap_destroy(&m);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
}

TEST(HashmapText, CStringMapsByPointerAndLength) {
  pmr_hashmap m;
  ASSERT_TRUE(pmr_hashmap_init_cstr(&m, 8, 8, nullptr));
  const char* stored = "hello";
  const char* none = nullptr;
  uint64_t v = 1;
  ASSERT_EQ(pmr_hashmap_insert(&m, &stored, &v, nullptr), PMR_HASHMAP_INSERTED);
  ASSERT_EQ(pmr_hashmap_insert(&m, &none, &v, nullptr), PMR_HASHMAP_INSERTED);
  EXPECT_NE(pmr_hashmap_find_str(&m, "hello world", 5), nullptr);
  EXPECT_EQ(pmr_hashmap_find_str(&m, "hell", 4), nullptr);
  EXPECT_EQ(pmr_hashmap_find_str(&m, "hello!", 6), nullptr);
  EXPECT_EQ(pmr_hashmap_find_str(&m, "hel\0o", 5), nullptr);
  EXPECT_EQ(pmr_hashmap_find_str(&m, nullptr, 0), nullptr);  // "" is not NULL
  // Insertion stores the pointer itself, which must end at n.
  static const char text[] = "world";
  void* slot = nullptr;
  EXPECT_EQ(pmr_hashmap_insert_str(&m, text, 5, &v, &slot),
            PMR_HASHMAP_INSERTED);
  const char* other_copy = "world";  // found by text, not by address
  const char* const* key =
      static_cast<const char* const*>(pmr_hashmap_find_key(&m, &other_copy));
  ASSERT_NE(key, nullptr);
  EXPECT_EQ(*key, text);
  EXPECT_EQ(pmr_hashmap_insert_str(&m, "world!", 5, &v, nullptr),
            PMR_HASHMAP_BADARG);  // p[5] is not the end
  EXPECT_EQ(pmr_hashmap_insert_str(&m, "a\0b", 3, &v, nullptr),
            PMR_HASHMAP_BADARG);  // not a C string of length 3
  EXPECT_EQ(pmr_hashmap_insert_str(&m, nullptr, 0, &v, nullptr),
            PMR_HASHMAP_BADARG);
  EXPECT_EQ(pmr_hashmap_insert_str(&m, "", 0, &v, nullptr),
            PMR_HASHMAP_INSERTED);
  EXPECT_NE(pmr_hashmap_find_str(&m, nullptr, 0), nullptr);
  EXPECT_EQ(pmr_hashmap_size(&m), 4u);
  EXPECT_TRUE(pmr_hashmap_erase_str(&m, "hello", 5, nullptr));
  EXPECT_TRUE(pmr_hashmap_contains(&m, &none));
  EXPECT_EQ(pmr_hashmap_size(&m), 3u);
  pmr_hashmap_destroy(&m);
}

TEST(HashmapText, OtherKindsHaveNoTextKeys) {
  pmr_hashmap m;
  ASSERT_TRUE(pmr_hashmap_init(&m, 8, 8, 8, 8, nullptr));
  uint64_t k = 0x6f6c6c6568ull, v = 1;  // "hello" as bytes
  ASSERT_EQ(pmr_hashmap_insert(&m, &k, &v, nullptr), PMR_HASHMAP_INSERTED);
  EXPECT_EQ(pmr_hashmap_find_str(&m, "hello\0\0\0", 8), nullptr);
  EXPECT_FALSE(pmr_hashmap_erase_str(&m, "hello\0\0\0", 8, nullptr));
  // A wrong key kind is a caller error, told apart from out of memory by
  // its status and by errno.
  errno = 0;
  EXPECT_EQ(pmr_hashmap_insert_str(&m, "abc", 3, &v, nullptr),
            PMR_HASHMAP_BADARG);
  EXPECT_EQ(errno, EINVAL);
  errno = 0;
  EXPECT_EQ(pmr_hashmap_insert_or_assign_str(&m, "abc", 3, &v),
            PMR_HASHMAP_BADARG);
  EXPECT_EQ(errno, EINVAL);
  bool inserted = true;
  errno = 0;
  EXPECT_EQ(pmr_hashmap_emplace_str(&m, "abc", 3, &inserted), nullptr);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_FALSE(inserted);
  EXPECT_EQ(pmr_hashmap_size(&m), 1u);
  pmr_hashmap_destroy(&m);
}

TEST(HashmapRandom, StringKeysMatchStdUnorderedMap) {
  std::mt19937 rng(31337);
  CountingResource up;
  pmr_hashmap m;
  ASSERT_TRUE(pmr_hashmap_init_string(&m, sizeof(uint32_t), alignof(uint32_t),
                                      up.get()));
  std::unordered_map<std::string, uint32_t> oracle;
  size_t failures = 0;
  for (int step = 0; step < 5000; ++step) {
    std::string text = std::to_string(rng() % 400);
    if (rng() % 2) text += std::string(30, '#');
    // Huge keys fill chunks fast: new chunks, and compactions of the records
    // erased keys leave.
    if (rng() % 8 == 0) text += std::string(300 + rng() % 1000, '%');
    if (rng() % 8 == 0) text += std::string(1, '\0') + "nul";
    pmr_string k;
    pmr_string_init_bytes(&k, text.data(), text.size(), pmr_malloc_resource());
    // Compacting now and then starts the chunks small again: more chunks
    // to add, more allocations to fail.
    if (step % 25 == 0) {
      ASSERT_TRUE(pmr_hashmap_shrink_to_fit(&m));
    }
    bool arm = rng() % 2 == 0;
    if (arm) up.fail_after(rng() % 2);
    State before = Capture(&m, true);
    uint32_t v = rng();
    bool ok = true;
    auto want = oracle;
    // Half the operations take the key as (pointer, length).
    switch (rng() % 8) {
      case 0:
      case 1:
        ok = pmr_hashmap_insert_or_assign(&m, &k, &v) >= 0;
        want[text] = v;
        break;
      case 4:
        ok = pmr_hashmap_insert_or_assign_str(&m, text.data(), text.size(),
                                              &v) >= 0;
        want[text] = v;
        break;
      case 5: {
        bool inserted = false;
        void* slot =
            pmr_hashmap_emplace_str(&m, text.data(), text.size(), &inserted);
        ok = slot != nullptr;
        if (ok) {
          ASSERT_EQ(inserted, oracle.count(text) == 0);
          if (inserted) std::memcpy(slot, &v, 4);
          std::memcpy(&want[text], slot, 4);
        }
        break;
      }
      case 6:
        ASSERT_EQ(pmr_hashmap_erase_str(&m, text.data(), text.size(), nullptr),
                  oracle.count(text) == 1);
        want.erase(text);
        break;
      case 7: {
        uint32_t* f = static_cast<uint32_t*>(
            pmr_hashmap_find_str(&m, text.data(), text.size()));
        ASSERT_EQ(f != nullptr, oracle.count(text) == 1);
        if (f) {
          ASSERT_EQ(*f, oracle[text]);
        }
        break;
      }
      case 2:
        ASSERT_EQ(pmr_hashmap_erase(&m, &k, nullptr), oracle.count(text) == 1);
        want.erase(text);
        break;
      case 3: {
        uint32_t* f = static_cast<uint32_t*>(pmr_hashmap_find(&m, &k));
        ASSERT_EQ(f != nullptr, oracle.count(text) == 1);
        if (f) {
          ASSERT_EQ(*f, oracle[text]);
        }
        break;
      }
    }
    up.never_fail();
    pmr_string_destroy(&k);
    if (ok) {
      oracle = want;
    } else {
      ++failures;
      ASSERT_TRUE(arm);
      ASSERT_TRUE(Capture(&m, true) == before) << "step " << step;
    }
    ASSERT_EQ(pmr_hashmap_size(&m), oracle.size());
  }
  std::unordered_map<std::string, uint32_t> got;
  pmr_hashmap_iter it = pmr_hashmap_iter_begin(&m);
  while (pmr_hashmap_iter_next(&it)) {
    const pmr_string* ks = static_cast<const pmr_string*>(it.key);
    uint32_t v;
    std::memcpy(&v, it.value, 4);
    got[std::string(pmr_string_c_str(ks), pmr_string_length(ks))] = v;
  }
  EXPECT_EQ(got, oracle);
  EXPECT_GT(failures, 5u);  // records allocate by the chunk: few points
  pmr_hashmap_destroy(&m);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  EXPECT_EQ(up.mismatches(), 0u);
}

}  // namespace
