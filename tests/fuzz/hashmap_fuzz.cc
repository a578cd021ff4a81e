// Fuzz target for pmr_hashmap: the input is decoded into a sequence of
// operations on three maps, each of one key kind (uint64_t keys; a uint64_t
// set; uint64_t keys with a custom hash that puts every key in the same probe
// sequence; pmr_string keys; C-string keys, NULL included; 12-byte keys with
// 2-byte values; 16-byte keys with a custom hash and the built-in equality, or
// the other way round), over its own resource. The oracle of each map is a
// std::unordered_map from the key's bytes to the value. After every operation:
//   - size agrees; the capacity is 0 or a power of two >= 16 holding at most
//     7/8 of it; every key of the oracle is found (find, contains, find_key,
//     find_u64) with its value; erase (and erase_u64) removes exactly it;
//     iteration visits every key exactly once;
//   - every counting resource has the blocks the maps on it own (one table
//     per map with capacity; a string map holding keys also a chunk list and
//     1 or more chunks of records, checked within a bound).
// Operations that must not move elements (insertion of a present key, find,
// erase, erase during iteration, clear, failed operations, insertions within
// a reserve but in a string map, whose records an insertion may compact)
// keep every key and value where it was and make no allocation;
// shrink_to_fit gives the smallest capacity; init_copy keeps the capacity and
// the iteration order. An operation may run with the counting resources told
// to fail after k allocations: when it reports failure the map must be
// exactly unchanged. One resource is a monotonic buffer over a counting
// resource. At the end every block must be back, with no mismatch.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "containers/pmr_hashmap.h"
#include "containers/pmr_string.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/fuzz_resources.h"
#include "tests/testkit/counting_resource.h"

namespace pmrfuzz {

void Fail(const char* what, size_t detail) {
  fprintf(stderr, "hashmap_fuzz: invariant broken: %s (%zu)\n", what, detail);
  abort();
}

namespace {

// The detail printed with a broken invariant is the line of the check.
#define CHECK(cond) PMR_FUZZ_CHECK(cond, __LINE__)

constexpr int kSlots = 3;
constexpr size_t kMaxSize = 700;  // keeps every input cheap
enum Kind {
  kU64,
  kU64Set,
  kBadHash,
  kString,
  kCstr,
  kBytes12,
  kHashOnly,   // 16-byte keys, custom hash, built-in equality
  kEqualOnly,  // 16-byte keys, built-in hash, custom equality
  kNumKinds
};
const size_t kValueSize[kNumKinds] = {8, 0, 8, 8, 8, 2, 8, 8};
// Plain keys of the kinds that are not u64, string or cstr.
size_t KeySize(int kind) { return kind == kBytes12 ? 12 : 16; }
constexpr size_t kTexts = 32;  // C-string keys: 32 texts and NULL

int ctx_tag;
uint64_t BadHash(const void* key, void* ctx) {
  CHECK(ctx == &ctx_tag);
  uint64_t u;
  memcpy(&u, key, 8);
  return u & 3;  // every probe starts at slot 0; 4 different control bytes
}
bool BadEqual(const void* a, const void* b, void* ctx) {
  CHECK(ctx == &ctx_tag);
  return memcmp(a, b, 8) == 0;
}
uint64_t Hash16(const void* key, void* ctx) {
  CHECK(ctx == &ctx_tag);
  return pmr_hash_bytes_with_seed(key, 16, 7);  // reproducible
}
bool Equal16(const void* a, const void* b, void* ctx) {
  CHECK(ctx == &ctx_tag);
  return memcmp(a, b, 16) == 0;
}

size_t MaxLoad(size_t c) { return c - c / 8; }
size_t CapacityFor(size_t n) {
  size_t c = 16;
  while (MaxLoad(c) < n) c *= 2;
  return c;
}
bool ValidCapacity(size_t c) {
  return c == 0 || (c >= 16 && (c & (c - 1)) == 0);
}

bool Trace() {
  static const bool on = getenv("PMRFUZZ_TRACE") != nullptr;
  return on;
}

using Oracle = std::unordered_map<std::string, uint64_t>;  // key bytes -> value

struct Slot {
  pmr_hashmap m;
  Oracle o;
  int kind = kU64;
  int res = kCountA;
  size_t reserved = 0;  // insertions up to this size may not rebuild
};

// Where every key and value of a map is (to check that they did not move).
using Places = std::map<std::string, std::pair<const void*, const void*>>;

class Fuzz;

// A key to pass to the map, made from its bytes (the oracle's key).
class Probe {
 public:
  Probe(int kind, const std::string& canon, pmr_mem_resource* tmp,
        bool long_form)
      : kind_(kind) {
    switch (kind) {
      case kU64:
      case kU64Set:
      case kBadHash:
        memcpy(&u_, canon.data(), 8);
        break;
      case kString:
        pmr_string_init(&s_, tmp);
        if (long_form) PMR_FUZZ_CHECK(pmr_string_reserve(&s_, 64), 0);
        PMR_FUZZ_CHECK(pmr_string_assign_bytes(&s_, canon.data(), canon.size()),
                       0);
        break;
      case kCstr:
        c_ = canon.size() == 1 && canon[0] == '\0' ? nullptr : canon.c_str();
        break;
      default:
        memcpy(b_, canon.data(), KeySize(kind));
        break;
    }
  }
  // A C-string key from a text kept alive elsewhere.
  explicit Probe(const char* text) : kind_(kCstr), c_(text) {}
  ~Probe() {
    if (kind_ == kString) pmr_string_destroy(&s_);
  }
  Probe(const Probe&) = delete;
  Probe& operator=(const Probe&) = delete;

  const void* get() const {
    switch (kind_) {
      case kU64:
      case kU64Set:
      case kBadHash:
        return &u_;
      case kString:
        return &s_;
      case kCstr:
        return &c_;
      default:
        return b_;
    }
  }
  uint64_t u64() const { return u_; }

 private:
  int kind_;
  uint64_t u_ = 0;
  pmr_string s_;
  const char* c_ = nullptr;
  alignas(8) unsigned char b_[16] = {};
};

// The oracle's key of a key stored in (or passed to) a map of `kind`.
std::string Canon(int kind, const void* key) {
  switch (kind) {
    case kU64:
    case kU64Set:
    case kBadHash:
      return std::string(static_cast<const char*>(key), 8);
    case kString: {
      const pmr_string* s = static_cast<const pmr_string*>(key);
      return std::string(pmr_string_c_str(s), pmr_string_length(s));
    }
    case kCstr: {
      const char* c;
      memcpy(&c, key, sizeof c);
      return c == nullptr ? std::string(1, '\0') : std::string(c);
    }
    default:
      return std::string(static_cast<const char*>(key), KeySize(kind));
  }
}

uint64_t ReadValue(int kind, const void* v) {
  switch (kValueSize[kind]) {
    case 8: {
      uint64_t x;
      memcpy(&x, v, 8);
      return x;
    }
    case 2: {
      uint16_t x;
      memcpy(&x, v, 2);
      return x;
    }
    default:
      return 0;
  }
}

uint64_t Mask(int kind, uint64_t v) {
  switch (kValueSize[kind]) {
    case 8:
      return v;
    case 2:
      return v & 0xFFFF;
    default:
      return 0;
  }
}

class Fuzz {
 public:
  Fuzz() {
    for (size_t k = 0; k < kTexts; ++k) {
      std::string t;
      if (k != 0) {
        t = "k" + std::to_string(k);
        if (k % 5 == 0)
          t += std::string(20 + k, static_cast<char>('a' + k % 26));
      }
      texts_.push_back(t);
      texts2_.push_back(t);  // the same texts at other addresses
    }
  }

  ~Fuzz() {
    for (Slot& s : slots_) {
      pmr_hashmap_destroy(&s.m);
      CHECK(pmr_hashmap_size(&s.m) == 0 && pmr_hashmap_capacity(&s.m) == 0);
      pmr_hashmap_destroy(&s.m);  // destroying again is allowed
    }
    PMR_FUZZ_CHECK(tmp_.outstanding_blocks() == 0, tmp_.outstanding_blocks());
    PMR_FUZZ_CHECK(tmp_.mismatches() == 0, tmp_.mismatches());
    // res_ then checks the others.
  }

  void Run(Input& in) {
    CheckBadInit();
    for (Slot& s : slots_) {
      s.kind = in.byte() % kNumKinds;
      s.res = in.byte() % kNumRes;
      Init(s);
    }
    VerifyAll();
    while (!in.done()) {
      uint8_t op = in.byte();
      res_.Begin(op >= 0xC0, in);  // a quarter of the operations may fail
      for (bool& t : touched_) t = false;
      Step(op % 32, in);
      res_.End();
      VerifyAll();
    }
  }

 private:
  pmr_mem_resource* R(int res) { return res_.get(res); }

  void Init(Slot& s) {
    pmr_hashmap* m = &s.m;
    pmr_mem_resource* r = R(s.res);
    bool ok = false;
    switch (s.kind) {
      case kU64:
        ok = pmr_hashmap_init(m, 8, 8, 8, 8, r);
        break;
      case kU64Set:
        ok = pmr_hashmap_init(m, 8, 8, 0, 1, r);
        break;
      case kBadHash:
        ok = pmr_hashmap_init_custom(m, 8, 8, 8, 8, BadHash, BadEqual, &ctx_tag,
                                     r);
        break;
      case kString:
        ok = pmr_hashmap_init_string(m, 8, 8, r);
        break;
      case kCstr:
        ok = pmr_hashmap_init_cstr(m, 8, 8, r);
        break;
      case kBytes12:
        ok = pmr_hashmap_init(m, 12, 4, 2, 2, r);
        break;
      case kHashOnly:
        ok = pmr_hashmap_init_custom(m, 16, 8, 8, 8, Hash16, nullptr, &ctx_tag,
                                     r);
        break;
      default:
        ok = pmr_hashmap_init_custom(m, 16, 8, 8, 8, nullptr, Equal16, &ctx_tag,
                                     r);
        break;
    }
    CHECK(ok);
    // A fixed seed: an input replays the same layouts in every process.
    CHECK(pmr_hashmap_set_seed(m, static_cast<uint64_t>(s.kind)));
    s.o.clear();
    s.reserved = 0;
  }

  void CheckBadInit() {
    pmr_hashmap m;
    memset(&m, 0x5A, sizeof m);
    pmr_hashmap copy = m;
    CHECK(!pmr_hashmap_init(&m, 0, 1, 8, 8, res_.a.get()));
    CHECK(!pmr_hashmap_init(&m, 8, 3, 8, 8, res_.a.get()));
    CHECK(!pmr_hashmap_init(&m, 12, 8, 8, 8, res_.a.get()));
    CHECK(!pmr_hashmap_init(&m, 8, 8, 6, 4, res_.a.get()));
    CHECK(memcmp(&m, &copy, sizeof m) == 0);
  }

  // Keys of each kind, from the input. Small universes, so keys repeat.
  std::string KeyCanon(int kind, Input& in) {
    uint8_t sel = in.byte();
    switch (kind) {
      case kU64:
      case kU64Set:
      case kBadHash: {
        uint64_t u = sel < 0xC0 ? sel % 64 : in.u32() * 0x9E3779B97F4A7C15ull;
        return std::string(reinterpret_cast<const char*>(&u), 8);
      }
      case kString:
        return StringKey(sel % 48);
      case kCstr: {
        size_t id = sel % (kTexts + 1);
        return id == kTexts ? std::string(1, '\0') : texts_[id];
      }
      default:
        return KeyBytes(kind, sel % 64);
    }
  }

  static std::string StringKey(size_t id) {
    static const size_t kLens[12] = {0,  1,  3,  7,  15, 22,
                                     23, 24, 25, 31, 47, 100};
    std::string k(kLens[id % 12], '\0');
    for (size_t j = 0; j < k.size(); ++j)
      k[j] =
          (id + j) % 7 == 0 ? '\0' : static_cast<char>('a' + (id * 3 + j) % 26);
    return k;
  }

  static std::string KeyBytes(int kind, size_t id) {
    std::string k(KeySize(kind), '\0');
    for (size_t j = 0; j < k.size(); ++j)
      k[j] = static_cast<char>(id * (j + 1) * 37);
    return k;
  }

  // A C-string key to store: the pointer must stay valid while in the map.
  const char* StoredText(const std::string& canon, bool second) {
    if (canon.size() == 1 && canon[0] == '\0') return nullptr;
    for (size_t k = 0; k < kTexts; ++k)
      if (texts_[k] == canon)
        return second ? texts2_[k].c_str() : texts_[k].c_str();
    Fail("unknown text", 0);
  }

  // The key to pass for an insertion (C strings from the long-lived texts).
  std::unique_ptr<Probe> KeyFor(const Slot& s, const std::string& canon,
                                uint8_t sel) {
    if (s.kind == kCstr)
      return std::unique_ptr<Probe>(new Probe(StoredText(canon, sel & 1)));
    return std::unique_ptr<Probe>(
        new Probe(s.kind, canon, tmp_.get(), sel & 2));
  }

  Places Where(const Slot& s) {
    Places p;
    pmr_hashmap_iter it =
        pmr_hashmap_iter_begin(const_cast<pmr_hashmap*>(&s.m));
    while (pmr_hashmap_iter_next(&it)) {
      // A string map's key is a view in the iterator: where its text is.
      const void* k =
          s.kind == kString
              ? pmr_string_c_str(static_cast<const pmr_string*>(it.key))
              : it.key;
      p[Canon(s.kind, it.key)] = {k, it.value};
    }
    return p;
  }

  // Every key still present is where it was.
  void Stayed(const Slot& s, const Places& before) {
    Places now = Where(s);
    for (const auto& kv : now) {
      auto it = before.find(kv.first);
      if (it != before.end()) CHECK(it->second == kv.second);
    }
  }

  void NoAllocation() { CHECK(res_.NoAllocationSinceBegin()); }

  // A result that may be a failure only when an allocation failed.
  void MayFailOnlyIfAllocFailed(bool ok) {
    if (!ok) CHECK(res_.FailedSinceBegin());
  }

  void Verify(const Slot& s) {
    const pmr_hashmap* m = &s.m;
    const size_t cap = pmr_hashmap_capacity(m);
    CHECK(pmr_hashmap_resource(m) == R(s.res));
    CHECK(pmr_hashmap_size(m) == s.o.size());
    CHECK(pmr_hashmap_empty(m) == s.o.empty());
    CHECK(ValidCapacity(cap));
    CHECK(s.o.size() <= MaxLoad(cap));
    // Iteration: every key once, each with its value.
    std::set<std::string> seen;
    pmr_hashmap_iter it = pmr_hashmap_iter_begin(const_cast<pmr_hashmap*>(m));
    while (pmr_hashmap_iter_next(&it)) {
      std::string k = Canon(s.kind, it.key);
      CHECK(seen.insert(k).second);
      auto o = s.o.find(k);
      CHECK(o != s.o.end());
      CHECK(ReadValue(s.kind, it.value) == o->second);
    }
    CHECK(it.key == nullptr && it.value == nullptr);
    CHECK(!pmr_hashmap_iter_next(&it));
    CHECK(seen.size() == s.o.size());
    // Lookup: every key is found, in either string form.
    bool long_form = false;
    for (const auto& kv : s.o) {
      Probe p(s.kind, kv.first, tmp_.get(), long_form = !long_form);
      void* v = pmr_hashmap_find(m, p.get());
      CHECK(v != nullptr);
      CHECK(ReadValue(s.kind, v) == kv.second);
      CHECK(pmr_hashmap_contains(m, p.get()));
      const void* k = pmr_hashmap_find_key(m, p.get());
      CHECK(k != nullptr && k != p.get() && Canon(s.kind, k) == kv.first);
      if (s.kind == kU64 || s.kind == kU64Set || s.kind == kBadHash)
        CHECK(pmr_hashmap_find_u64(m, p.u64()) == v);
      // By (pointer, length) text (the NULL C-string key has none).
      const bool null_key = s.kind == kCstr && kv.first == std::string(1, '\0');
      if ((s.kind == kString || s.kind == kCstr) && !null_key)
        CHECK(pmr_hashmap_find_str(m, kv.first.data(), kv.first.size()) == v);
    }
    if (s.kind == kString || s.kind == kCstr) {
      const std::string absent = "absent key \x01";
      CHECK((pmr_hashmap_find_str(m, absent.data(), absent.size()) !=
             nullptr) == (s.o.count(absent) != 0));
    }
    if (s.kind == kString || s.kind == kBytes12 ||
        s.kind >= kHashOnly)  // other key sizes
      CHECK(pmr_hashmap_find_u64(m, 0) == nullptr);
    if (s.kind == kCstr)  // 0 is the NULL key
      CHECK((pmr_hashmap_find_u64(m, 0) != nullptr) ==
            (s.o.count(std::string(1, '\0')) != 0));
  }

  void VerifyAll() {
    // A map holds its table; a string map that holds keys also its chunk
    // list and 1 or more chunks of records (how many depends on the sizes of
    // the keys inserted and erased since the last compaction: the fuzzer
    // does not model it, so only a bound is checked).
    size_t blocks[2] = {0, 0}, extra[2] = {0, 0};
    for (int i = 0; i < kSlots; ++i) {
      const Slot& s = slots_[i];
      if (touched_[i]) Verify(s);  // the others did not change
      if (s.res == kMono) continue;
      if (pmr_hashmap_capacity(&s.m) != 0) ++blocks[s.res];
      if (s.kind == kString && !s.o.empty()) {
        blocks[s.res] += 2;
        extra[s.res] += 64;
      }
    }
    for (int r = 0; r < 2; ++r) {
      const size_t got = (r == 0 ? res_.a : res_.b).outstanding_blocks();
      PMR_FUZZ_CHECK(got >= blocks[r] && got <= blocks[r] + extra[r], got);
    }
    PMR_FUZZ_CHECK(tmp_.outstanding_blocks() == 0, tmp_.outstanding_blocks());
    CHECK(res_.a.mismatches() == 0 && res_.b.mismatches() == 0 &&
          res_.up.mismatches() == 0 && tmp_.mismatches() == 0);
  }

  uint64_t Value(Input& in) {
    return in.u32() | static_cast<uint64_t>(in.byte()) << 40;
  }

  // The insertions: insert (0), insert_or_assign (1), emplace (2).
  void Insert(int i, int how, Input& in) {
    Slot& s = slots_[i];
    pmr_hashmap* m = &s.m;
    std::string canon = KeyCanon(s.kind, in);
    uint8_t sel = in.byte();
    uint64_t value = Mask(s.kind, Value(in));
    auto key = KeyFor(s, canon, sel);
    const bool present = s.o.count(canon) != 0;
    if (!present && s.o.size() >= kMaxSize) return;
    const size_t size = s.o.size(), cap = pmr_hashmap_capacity(m);
    Places before = Where(s);
    // The value: from the input, NULL (zeros), or another element's value in
    // the table itself (which a rebuild may move).
    const void* vp = &value;
    unsigned char small[8];
    if (kValueSize[s.kind] == 2) {
      uint16_t x = static_cast<uint16_t>(value);
      memcpy(small, &x, 2);
      vp = small;
    }
    if (sel & 4) {
      vp = nullptr;
      value = 0;
    } else if ((sel & 8) && !s.o.empty() && kValueSize[s.kind] != 0) {
      size_t k = in.byte() % s.o.size();
      auto it = before.begin();
      std::advance(it, static_cast<long>(k));
      vp = it->second.second;
      value = s.o.at(it->first);
    }
    if (kValueSize[s.kind] == 0) value = 0;

    bool ok;
    bool inserted;
    void* out = reinterpret_cast<void*>(1);
    if (how == 2) {
      bool* ins = sel & 16 ? nullptr : &inserted;
      inserted = !present;
      void* v = pmr_hashmap_emplace(m, key->get(), ins);
      ok = v != nullptr;
      if (ins != nullptr && ok) CHECK(inserted == !present);
      if (ok && !present) {
        CHECK(ReadValue(s.kind, v) == 0);  // zero-filled
        uint64_t w = Mask(s.kind, value);
        memcpy(v, &w, kValueSize[s.kind]);  // little-endian: the low bytes
        value = w;
      }
      if (ok && present) value = s.o[canon];
      out = v;
    } else {
      pmr_hashmap_status st =
          how == 0 ? pmr_hashmap_insert(m, key->get(), vp,
                                        (sel & 16) ? nullptr : &out)
                   : pmr_hashmap_insert_or_assign(m, key->get(), vp);
      CHECK(st == PMR_HASHMAP_NOMEM ||
            st == (present ? PMR_HASHMAP_EXISTED : PMR_HASHMAP_INSERTED));
      ok = st != PMR_HASHMAP_NOMEM;
      if (how == 0 && present)
        value = s.o[canon];  // insert keeps the old value
      if (how == 0 && !(sel & 16)) CHECK((out != nullptr) == ok);
    }
    if (present) {
      CHECK(ok);
      NoAllocation();
      CHECK(pmr_hashmap_capacity(m) == cap);
      if (how == 1) s.o[canon] = value;  // assigned
      Stayed(s, before);
    } else {
      MayFailOnlyIfAllocFailed(ok);
      if (ok) {
        s.o[canon] = value;
        size_t now = pmr_hashmap_capacity(m);
        CHECK(cap == 0 ? now == 16 : (now == cap || now == 2 * cap));
        if (size < s.reserved) {
          CHECK(now == cap);
          // A string map may still compact its records (needing a chunk,
          // with as many erased bytes as live ones): they move then.
          if (s.kind != kString) Stayed(s, before);
        }
      } else {
        CHECK(pmr_hashmap_capacity(m) == cap);
        Stayed(s, before);
      }
    }
    if (ok && out != reinterpret_cast<void*>(1) && out != nullptr) {
      CHECK(out == pmr_hashmap_find(m, key->get()));
      CHECK(ReadValue(s.kind, out) == s.o[canon]);
    }
  }

  void Step(int op, Input& in) {
    const int i = in.byte() % kSlots;
    touched_[i] = true;
    Slot& s = slots_[i];
    pmr_hashmap* m = &s.m;
    if (Trace())
      fprintf(stderr, "op %d slot %d kind %d size %zu cap %zu\n", op, i, s.kind,
              s.o.size(), pmr_hashmap_capacity(m));
    switch (op) {
      case 0:
      case 1:
      case 2:
      case 3:
      case 4:
        Insert(i, 0, in);
        break;
      case 5:
      case 6:
        Insert(i, 1, in);
        break;
      case 7:
      case 8:
        Insert(i, 2, in);
        break;
      case 9:
      case 10: {  // lookups of a key that may be absent
        std::string canon = KeyCanon(s.kind, in);
        Probe p(s.kind, canon, tmp_.get(), in.byte() & 1);
        Places before = Where(s);
        auto o = s.o.find(canon);
        void* v = pmr_hashmap_find(m, p.get());
        CHECK((v != nullptr) == (o != s.o.end()));
        CHECK(pmr_hashmap_contains(m, p.get()) == (o != s.o.end()));
        CHECK((pmr_hashmap_find_key(m, p.get()) != nullptr) ==
              (o != s.o.end()));
        if (v != nullptr) CHECK(ReadValue(s.kind, v) == o->second);
        if (s.kind == kU64 || s.kind == kU64Set || s.kind == kBadHash)
          CHECK(pmr_hashmap_find_u64(m, p.u64()) == v);
        NoAllocation();
        Stayed(s, before);
        break;
      }
      case 11:
      case 12:
      case 13: {  // erase, maybe with the value
        std::string canon = KeyCanon(s.kind, in);
        Probe p(s.kind, canon, tmp_.get(), in.byte() & 1);
        bool want_value = in.byte() & 1;
        Places before = Where(s);
        const size_t cap = pmr_hashmap_capacity(m);
        auto o = s.o.find(canon);
        uint64_t out = 0x5555555555555555ull;
        const bool by_u64 =
            !want_value && (in.byte() & 2) &&
            (s.kind == kU64 || s.kind == kU64Set || s.kind == kBadHash);
        bool ok =
            by_u64 ? pmr_hashmap_erase_u64(m, p.u64())
                   : pmr_hashmap_erase(m, p.get(), want_value ? &out : nullptr);
        CHECK(ok == (o != s.o.end()));
        if (ok) {
          if (want_value && kValueSize[s.kind] != 0)
            CHECK(Mask(s.kind, out) == o->second);
          s.o.erase(o);
        }
        if (!ok || kValueSize[s.kind] == 0) CHECK(out == 0x5555555555555555ull);
        CHECK(pmr_hashmap_capacity(m) == cap);
        NoAllocation();
        Stayed(s, before);
        s.reserved = 0;
        break;
      }
      case 14:
      case 15: {  // iteration, erasing some elements on the way
        uint32_t bits = in.u32();
        uint8_t mode = in.byte() % 3;
        Places before = Where(s);
        const size_t cap = pmr_hashmap_capacity(m);
        Oracle was = s.o;
        std::set<std::string> seen;
        pmr_hashmap_iter it = pmr_hashmap_iter_begin(m);
        size_t n = 0;
        while (pmr_hashmap_iter_next(&it)) {
          std::string k = Canon(s.kind, it.key);
          CHECK(seen.insert(k).second);  // never twice
          CHECK(was.count(k) == 1);
          CHECK(ReadValue(s.kind, it.value) == was[k]);
          bool drop = mode == 2 || (mode == 1 && ((bits >> (n++ % 32)) & 1));
          if (drop) {
            pmr_hashmap_iter_erase(&it);
            CHECK(it.key == nullptr);
            s.o.erase(k);
            CHECK(pmr_hashmap_size(m) == s.o.size());
          }
        }
        CHECK(seen.size() == was.size());  // none skipped
        CHECK(pmr_hashmap_capacity(m) == cap);
        NoAllocation();
        Stayed(s, before);
        if (mode != 0) s.reserved = 0;
        break;
      }
      case 16: {  // reserve
        uint8_t sel = in.byte();
        size_t n = sel & 1 ? sel >> 1 : in.u16() % (kMaxSize + 1);
        if (sel == 0xFF) n = SIZE_MAX;
        if (sel == 0xFD) n = PTRDIFF_MAX;
        const size_t cap = pmr_hashmap_capacity(m);
        Places before = Where(s);
        bool ok = pmr_hashmap_reserve(m, n);
        if (sel == 0xFF || sel == 0xFD) {
          CHECK(!ok);
        } else {
          MayFailOnlyIfAllocFailed(ok);
        }
        size_t now = pmr_hashmap_capacity(m);
        if (ok) {
          CHECK(now >= cap && MaxLoad(now) >= n);
          s.reserved = n;
        } else {
          CHECK(now == cap);
          Stayed(s, before);
        }
        break;
      }
      case 17: {  // shrink_to_fit
        const size_t cap = pmr_hashmap_capacity(m);
        Places before = Where(s);
        bool ok = pmr_hashmap_shrink_to_fit(m);
        MayFailOnlyIfAllocFailed(ok);
        if (ok) {
          CHECK(pmr_hashmap_capacity(m) ==
                (s.o.empty() ? 0 : CapacityFor(s.o.size())));
          s.reserved = 0;
        } else {
          CHECK(pmr_hashmap_capacity(m) == cap);
          Stayed(s, before);
        }
        break;
      }
      case 18: {  // clear
        const size_t cap = pmr_hashmap_capacity(m);
        pmr_hashmap_clear(m);
        s.o.clear();
        CHECK(pmr_hashmap_capacity(m) == cap);
        NoAllocation();
        break;
      }
      case 19: {  // swap (also with itself)
        int j = in.byte() % kSlots;
        touched_[j] = true;
        pmr_hashmap_swap(m, &slots_[j].m);
        if (j != i) {
          std::swap(s.o, slots_[j].o);
          std::swap(s.kind, slots_[j].kind);
          std::swap(s.res, slots_[j].res);
          std::swap(s.reserved, slots_[j].reserved);
        }
        NoAllocation();
        break;
      }
      case 20: {  // init_copy of slot i into slot j (destroyed first)
        int j = in.byte() % kSlots;
        touched_[j] = true;
        int r = in.byte() % kNumRes;
        if (j == i) return;
        Slot& d = slots_[j];
        Places before = Where(s);
        pmr_hashmap_destroy(&d.m);
        bool ok = pmr_hashmap_init_copy(&d.m, m, R(r));
        MayFailOnlyIfAllocFailed(ok);
        d.kind = s.kind;
        d.res = r;
        d.reserved = 0;
        if (ok) {
          d.o = s.o;
          CHECK(pmr_hashmap_capacity(&d.m) == pmr_hashmap_capacity(m));
          // The same iteration order.
          pmr_hashmap_iter a = pmr_hashmap_iter_begin(m),
                           b = pmr_hashmap_iter_begin(&d.m);
          while (pmr_hashmap_iter_next(&a)) {
            CHECK(pmr_hashmap_iter_next(&b));
            CHECK(Canon(s.kind, a.key) == Canon(s.kind, b.key));
          }
          CHECK(!pmr_hashmap_iter_next(&b));
        } else {
          d.o.clear();
          CHECK(pmr_hashmap_capacity(&d.m) == 0);
        }
        Stayed(s, before);
        break;
      }
      case 21: {  // init_move of slot i into slot j (destroyed first)
        int j = in.byte() % kSlots;
        touched_[j] = true;
        if (j == i) return;
        Slot& d = slots_[j];
        Places before = Where(s);
        pmr_hashmap_destroy(&d.m);
        pmr_hashmap_init_move(&d.m, m);
        d.o = std::move(s.o);
        d.kind = s.kind;
        d.res = s.res;
        d.reserved = s.reserved;
        s.o.clear();
        s.reserved = 0;
        CHECK(pmr_hashmap_capacity(m) == 0);
        CHECK(Where(d) == before);  // the table itself moved
        NoAllocation();
        break;
      }
      case 22: {  // copy_assign slot i into slot j (also itself)
        int j = in.byte() % kSlots;
        touched_[j] = true;
        Slot& d = slots_[j];
        Places before_s = Where(s), before_d = Where(d);
        const size_t cap_d = pmr_hashmap_capacity(&d.m);
        bool ok = pmr_hashmap_copy_assign(&d.m, m);
        if (j != i && d.kind != s.kind) {
          CHECK(!ok);
        } else {
          MayFailOnlyIfAllocFailed(ok);
        }
        if (ok) {
          if (j != i) {
            d.o = s.o;
            d.reserved = 0;
          }
        } else {
          CHECK(pmr_hashmap_capacity(&d.m) == cap_d);
          Stayed(d, before_d);
        }
        Stayed(s, before_s);
        break;
      }
      case 23: {  // move_assign slot i into slot j (also itself)
        int j = in.byte() % kSlots;
        touched_[j] = true;
        Slot& d = slots_[j];
        Places before_s = Where(s), before_d = Where(d);
        const size_t cap_s = pmr_hashmap_capacity(m),
                     cap_d = pmr_hashmap_capacity(&d.m);
        bool ok = pmr_hashmap_move_assign(&d.m, m);
        if (j != i && d.kind != s.kind) {
          CHECK(!ok);
        } else {
          MayFailOnlyIfAllocFailed(ok);
        }
        if (ok) {
          if (j != i) {
            if (d.res == s.res) {  // the table moves over
              CHECK(pmr_hashmap_capacity(&d.m) == cap_s);
              CHECK(Where(d) == before_s);
            }
            d.o = std::move(s.o);
            s.o.clear();
            d.reserved = 0;
            s.reserved = 0;
            CHECK(pmr_hashmap_capacity(m) == 0);
          }
        } else {
          CHECK(pmr_hashmap_capacity(m) == cap_s &&
                pmr_hashmap_capacity(&d.m) == cap_d);
          Stayed(s, before_s);
          Stayed(d, before_d);
        }
        break;
      }
      case 24: {  // destroy (twice) and init again, maybe another kind/resource
        pmr_hashmap_destroy(m);
        CHECK(pmr_hashmap_size(m) == 0 && pmr_hashmap_capacity(m) == 0);
        s.o.clear();
        s.reserved = 0;
        Verify(s);
        pmr_hashmap_destroy(m);
        uint8_t sel = in.byte();
        if (sel & 1) break;  // reuse as it is
        s.kind = in.byte() % kNumKinds;
        s.res = in.byte() % kNumRes;
        Init(s);
        break;
      }
      case 25:
      case 26:
      case 27: {  // a burst of new keys, to reach larger tables
        size_t count = in.byte() % 64;
        uint32_t base = in.u16();
        for (size_t k = 0; k < count && s.o.size() < kMaxSize; ++k) {
          std::string canon;
          switch (s.kind) {
            case kU64:
            case kU64Set:
            case kBadHash: {
              uint64_t u = base + k;
              canon.assign(reinterpret_cast<const char*>(&u), 8);
              break;
            }
            case kString:
              canon = StringKey(base + k) + std::to_string(base + k);
              break;
            case kCstr:
              canon = texts_[(base + k) % kTexts];
              break;
            default:
              canon = KeyBytes(s.kind, base + k);
              canon[0] = static_cast<char>(k);
              break;
          }
          if (s.o.count(canon) != 0) continue;
          auto key = KeyFor(s, canon, static_cast<uint8_t>(k));
          uint64_t v = Mask(s.kind, base * 1000003ull + k);
          pmr_hashmap_status st =
              pmr_hashmap_insert(m, key->get(), &v, nullptr);
          if (st == PMR_HASHMAP_NOMEM) {
            CHECK(res_.FailedSinceBegin());
            break;
          }
          CHECK(st == PMR_HASHMAP_INSERTED);
          s.o[canon] = v;
        }
        break;
      }
      default: {  // 28..31: erase a run of present keys
        if (s.o.empty()) return;
        size_t count = in.byte() % 16;
        size_t skip = in.byte();
        std::vector<std::string> keys;
        for (const auto& kv : s.o) keys.push_back(kv.first);
        std::sort(keys.begin(), keys.end());
        for (size_t k = 0; k < count && k < keys.size(); ++k) {
          const std::string& canon = keys[(skip + k * 7) % keys.size()];
          if (s.o.count(canon) == 0) continue;
          Probe p(s.kind, canon, tmp_.get(), k & 1);
          CHECK(pmr_hashmap_erase(m, p.get(), nullptr));
          s.o.erase(canon);
        }
        NoAllocation();
        s.reserved = 0;
        break;
      }
    }
  }

  FuzzResources<1025> res_;
  pmrtest::CountingResource tmp_;            // probe keys, never failing
  std::vector<std::string> texts_, texts2_;  // C-string keys point here
  Slot slots_[kSlots];
  bool touched_[kSlots] = {true, true, true};
};

}  // namespace
}  // namespace pmrfuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  pmrfuzz::Input in(data, size);
  pmrfuzz::Fuzz f;
  f.Run(in);
  return 0;
}
