// Fuzz target for pmr_vector: the input is decoded into a sequence of
// operations on three vectors (each with its own element type and resource),
// and the same operations are applied to std::vector<std::string> oracles
// (one std::string of elem_size bytes per element). After every operation:
//   - contents, size and capacity agree with the oracle and with the documented
//     growth policy (max(2 * capacity, needed, 4); reserve/resize exact;
//     shrink_to_fit == size; copy_assign reuses or takes exactly size);
//   - data() is NULL exactly when capacity is 0 and is aligned; at/front/back;
//   - storage does not move when the capacity does not change;
//   - every counting resource has exactly the blocks and bytes the vectors on
//     it own (nothing leaks, nothing is freed twice or with a wrong size).
// An operation may be run with the counting resources told to fail after k
// allocations: when it reports failure, the vector must be exactly unchanged
// (the oracle did not apply it), storage pointer included. One resource is a
// monotonic buffer over a counting resource, so growth in place
// (pmr_try_resize) is exercised. At the end everything is destroyed and each
// counting resource must have every block back, with no mismatch.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "containers/pmr_vector.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/fuzz_resources.h"
#include "tests/testkit/counting_resource.h"

namespace pmrfuzz {

void Fail(const char* what, size_t detail) {
  fprintf(stderr, "vector_fuzz: invariant broken: %s (%zu)\n", what, detail);
  abort();
}

namespace {

// The detail printed with a broken invariant is the line of the check.
#define CHECK(cond) PMR_FUZZ_CHECK(cond, __LINE__)

struct Type {
  size_t size, align;
};
const Type kTypes[] = {{1, 1},  {2, 2},   {3, 1},  {4, 4},  {8, 8},  {8, 4},
                       {12, 4}, {16, 16}, {24, 8}, {40, 8}, {64, 32}};
constexpr size_t kNumTypes = sizeof kTypes / sizeof kTypes[0];
constexpr size_t kMaxElems = 300;  // keeps every input cheap
constexpr int kSlots = 3;

struct Slot {
  pmr_vector v;
  std::vector<std::string> o;  // the oracle
  size_t cap = 0;              // the capacity the policy gives
  int res = kCountA;
  size_t type = 0;
};

struct Snap {
  void* data;
  size_t size, cap;
};

bool Trace() {
  static const bool on = getenv("PMRFUZZ_TRACE") != nullptr;
  return on;
}

class Fuzz {
 public:
  ~Fuzz() {
    for (Slot& s : slots_) {
      pmr_vector_destroy(&s.v);
      CHECK(pmr_vector_size(&s.v) == 0 && pmr_vector_capacity(&s.v) == 0);
      pmr_vector_destroy(&s.v);  // destroying again is allowed
    }
    // res_ then checks that nothing is outstanding upstream.
  }

  void Run(Input& in) {
    CheckBadInit();
    for (Slot& s : slots_) {
      s.type = in.byte() % kNumTypes;
      s.res = in.byte() % kNumRes;
      CHECK(pmr_vector_init(&s.v, kTypes[s.type].size, kTypes[s.type].align,
                            R(s.res)));
    }
    VerifyAll();
    while (!in.done()) {
      uint8_t op = in.byte();
      res_.Begin(op >= 0xC0, in);  // a quarter of the operations may fail
      for (int i = 0; i < kSlots; ++i) before_[i] = Take(slots_[i]);
      Step(op % 40, in);
      res_.End();
      VerifyAll();
    }
  }

 private:
  pmr_mem_resource* R(int res) { return res_.get(res); }

  static Snap Take(const Slot& s) {
    return {pmr_vector_data(&s.v), pmr_vector_size(&s.v),
            pmr_vector_capacity(&s.v)};
  }

  bool Expect(bool ok, bool invalid) const { return res_.Expect(ok, invalid); }

  // After a failed operation on slot i: exactly as before (the oracle was not
  // touched, VerifyAll compares contents; here the storage itself).
  void Unchanged(int i) {
    Snap now = Take(slots_[i]);
    CHECK(now.data == before_[i].data);
    CHECK(now.size == before_[i].size);
    CHECK(now.cap == before_[i].cap);
  }

  // An operation on slot i that keeps the capacity keeps the storage.
  void SameStorageIfSameCapacity(int i) {
    Snap now = Take(slots_[i]);
    if (now.cap == before_[i].cap) CHECK(now.data == before_[i].data);
  }

  static void Grow(Slot& s, size_t needed) {
    if (needed > s.cap) s.cap = std::max({2 * s.cap, needed, size_t{4}});
  }

  std::string Elem(const Slot& s, uint8_t seed) {
    std::string e(kTypes[s.type].size, '\0');
    for (size_t j = 0; j < e.size(); ++j)
      e[j] = static_cast<char>(seed + j * 29);
    return e;
  }

  void CheckBadInit() {
    pmr_vector v;
    memset(&v, 0x5A, sizeof v);
    pmr_vector copy = v;
    CHECK(!pmr_vector_init(&v, 0, 1, res_.a.get()));
    CHECK(!pmr_vector_init(&v, 8, 3, res_.a.get()));
    CHECK(!pmr_vector_init(&v, 12, 8, res_.a.get()));
    CHECK(memcmp(&v, &copy, sizeof v) == 0);
  }

  void Verify(const Slot& s) {
    const pmr_vector* v = &s.v;
    const Type& t = kTypes[s.type];
    CHECK(pmr_vector_elem_size(v) == t.size);
    CHECK(pmr_vector_resource(v) == R(s.res));
    CHECK(pmr_vector_max_size(v) == static_cast<size_t>(PTRDIFF_MAX) / t.size);
    CHECK(pmr_vector_size(v) == s.o.size());
    CHECK(pmr_vector_empty(v) == s.o.empty());
    CHECK(pmr_vector_capacity(v) == s.cap);
    CHECK(s.cap >= s.o.size());
    const unsigned char* d =
        static_cast<const unsigned char*>(pmr_vector_data(v));
    CHECK((d == nullptr) == (s.cap == 0));
    CHECK(reinterpret_cast<uintptr_t>(d) % t.align == 0);
    for (size_t i = 0; i < s.o.size(); ++i) {
      CHECK(pmr_vector_at(v, i) == d + i * t.size);
      CHECK(memcmp(d + i * t.size, s.o[i].data(), t.size) == 0);
    }
    CHECK(pmr_vector_at(v, s.o.size()) == nullptr);
    CHECK(pmr_vector_at(v, SIZE_MAX) == nullptr);
    if (s.o.empty()) {
      CHECK(pmr_vector_front(v) == nullptr && pmr_vector_back(v) == nullptr);
    } else {
      CHECK(pmr_vector_front(v) == d);
      CHECK(pmr_vector_back(v) == d + (s.o.size() - 1) * t.size);
    }
  }

  void VerifyAll() {
    size_t blocks[2] = {0, 0}, bytes[2] = {0, 0};
    for (const Slot& s : slots_) {
      Verify(s);
      if (s.res != kMono && s.cap != 0) {
        ++blocks[s.res];
        bytes[s.res] += s.cap * kTypes[s.type].size;
      }
    }
    PMR_FUZZ_CHECK(res_.a.outstanding_blocks() == blocks[0],
                   res_.a.outstanding_blocks());
    PMR_FUZZ_CHECK(res_.a.outstanding_bytes() == bytes[0],
                   res_.a.outstanding_bytes());
    PMR_FUZZ_CHECK(res_.b.outstanding_blocks() == blocks[1],
                   res_.b.outstanding_blocks());
    PMR_FUZZ_CHECK(res_.b.outstanding_bytes() == bytes[1],
                   res_.b.outstanding_bytes());
    CHECK(res_.a.mismatches() == 0 && res_.b.mismatches() == 0 &&
          res_.up.mismatches() == 0);
  }

  // Reads a position in [0, size + 1]: size + 1 is out of range.
  static size_t Pos(Input& in, size_t size) { return in.u16() % (size + 2); }

  void Step(int op, Input& in) {
    const int i = in.byte() % kSlots;
    Slot& s = slots_[i];
    pmr_vector* v = &s.v;
    const size_t n = s.o.size();
    const size_t es = kTypes[s.type].size;
    if (Trace())
      fprintf(stderr, "op %d slot %d size %zu cap %zu\n", op, i, n, s.cap);
    switch (op) {
      case 0:
      case 1:
      case 2:
      case 3: {  // push_back, maybe of its own element
        if (n >= kMaxElems) return;
        uint8_t sel = in.byte();
        std::string e;
        const void* src;
        if (n != 0 && sel % 3 == 0) {
          size_t k = in.u16() % n;
          e = s.o[k];
          src = pmr_vector_at(v, k);
        } else {
          e = Elem(s, sel);
          src = e.data();
        }
        bool ok;
        if (sel % 5 == 1 && es == 8 && kTypes[s.type].align == 8) {
          uint64_t x;
          memcpy(&x, e.data(), 8);
          ok = PMR_VECTOR_PUSH_T(v, uint64_t, x);
        } else {
          ok = pmr_vector_push_back(v, src);
        }
        if (Expect(ok, false)) {
          Grow(s, n + 1);
          s.o.push_back(e);
          SameStorageIfSameCapacity(i);
        } else {
          Unchanged(i);
        }
        break;
      }
      case 4:
      case 5: {  // pop_back, with or without out
        bool want = in.byte() & 1;
        std::string out(es, '\x77');
        bool ok = pmr_vector_pop_back(v, want ? &out[0] : nullptr);
        if (Expect(ok, n == 0)) {
          if (want) CHECK(out == s.o.back());
          s.o.pop_back();
          SameStorageIfSameCapacity(i);
          CHECK(pmr_vector_capacity(v) == before_[i].cap);
        } else {
          if (want) CHECK(out == std::string(es, '\x77'));
          Unchanged(i);
        }
        break;
      }
      case 6:
      case 7: {  // emplace_back
        if (n >= kMaxElems) return;
        void* p = pmr_vector_emplace_back(v);
        if (Expect(p != nullptr, false)) {
          CHECK(p == pmr_vector_back(v));
          CHECK(memcmp(p, std::string(es, '\0').data(), es) == 0);
          std::string e = Elem(s, in.byte());
          memcpy(p, e.data(), es);
          Grow(s, n + 1);
          s.o.push_back(e);
          SameStorageIfSameCapacity(i);
        } else {
          Unchanged(i);
        }
        break;
      }
      case 8:
      case 9:
      case 10: {  // insert, maybe of its own element
        if (n >= kMaxElems) return;
        size_t pos = Pos(in, n);
        uint8_t sel = in.byte();
        std::string e;
        const void* src;
        if (n != 0 && sel % 3 == 0) {
          size_t k = in.u16() % n;
          e = s.o[k];
          src = pmr_vector_at(v, k);
        } else {
          e = Elem(s, sel);
          src = e.data();
        }
        bool ok = pmr_vector_insert(v, pos, src);
        if (Expect(ok, pos > n)) {
          Grow(s, n + 1);
          s.o.insert(s.o.begin() + pos, e);
          SameStorageIfSameCapacity(i);
        } else {
          Unchanged(i);
        }
        break;
      }
      case 11:
      case 12:
      case 13: {  // insert_range: outside, own elements, NULL
        size_t pos = Pos(in, n);
        uint8_t sel = in.byte();
        std::vector<std::string> es_in;
        std::string flat;
        const void* src = nullptr;
        size_t count = 0;
        bool invalid = pos > n;
        if (sel % 4 == 0 && n != 0) {  // a range of its own elements
          size_t off = in.u16() % n;
          count = in.u16() % (n - off + 1);
          src = pmr_vector_at(v, off);
          es_in.assign(s.o.begin() + off, s.o.begin() + off + count);
        } else if (sel % 4 == 1) {  // NULL: only with count 0
          count = in.byte() % 2;
          invalid = invalid || count != 0;
        } else {
          count = sel % 4 == 2 ? in.byte() % 8 : in.u16() % 64;
          uint8_t seed = in.byte();
          for (size_t k = 0; k < count; ++k) {
            es_in.push_back(Elem(s, static_cast<uint8_t>(seed + k)));
            flat += es_in.back();
          }
          src = flat.data();
        }
        if (n + count > kMaxElems) return;
        bool ok = pmr_vector_insert_range(v, pos, src, count);
        if (Expect(ok, invalid)) {
          if (count != 0) Grow(s, n + count);
          s.o.insert(s.o.begin() + pos, es_in.begin(), es_in.end());
          SameStorageIfSameCapacity(i);
        } else {
          Unchanged(i);
        }
        break;
      }
      case 14:
      case 15: {  // erase
        size_t pos = in.u16() % (n + 1);
        if (in.byte() == 0xFF) pos = SIZE_MAX;
        bool ok = pmr_vector_erase(v, pos);
        if (Expect(ok, pos >= n)) {
          s.o.erase(s.o.begin() + pos);
          CHECK(Take(s).data == before_[i].data);
        } else {
          Unchanged(i);
        }
        break;
      }
      case 16:
      case 17: {  // erase_range
        size_t first = Pos(in, n), last = Pos(in, n);
        bool ok = pmr_vector_erase_range(v, first, last);
        if (Expect(ok, first > last || last > n)) {
          s.o.erase(s.o.begin() + first, s.o.begin() + last);
          CHECK(Take(s).data == before_[i].data);
        } else {
          Unchanged(i);
        }
        break;
      }
      case 18:
      case 19: {  // reserve
        uint8_t sel = in.byte();
        size_t want = in.u16() % 512;
        size_t max = pmr_vector_max_size(v);
        if (sel == 0xFF) want = max + 1;
        if (sel == 0xFE) want = SIZE_MAX;
        bool ok = pmr_vector_reserve(v, want);
        if (Expect(ok, want > max)) {
          if (want > s.cap) s.cap = want;
          SameStorageIfSameCapacity(i);
        } else {
          Unchanged(i);
        }
        break;
      }
      case 20:
      case 21: {  // resize
        uint8_t sel = in.byte();
        size_t want = in.u16() % (kMaxElems + 1);
        size_t max = pmr_vector_max_size(v);
        if (sel == 0xFF) want = max + 1;
        if (sel == 0xFE) want = SIZE_MAX;
        bool ok = pmr_vector_resize(v, want);
        if (Expect(ok, want > max)) {
          if (want > s.cap) s.cap = want;
          s.o.resize(want, std::string(es, '\0'));
          SameStorageIfSameCapacity(i);
        } else {
          Unchanged(i);
        }
        break;
      }
      case 22: {  // shrink_to_fit
        bool ok = pmr_vector_shrink_to_fit(v);
        if (Expect(ok, false)) {
          s.cap = n;
        } else {
          Unchanged(i);
        }
        break;
      }
      case 23: {  // clear
        pmr_vector_clear(v);
        s.o.clear();
        CHECK(Take(s).data == before_[i].data);
        break;
      }
      case 24:
      case 25: {  // write through at / data / the typed accessors
        if (n == 0) return;
        size_t k = in.u16() % n;
        std::string e = Elem(s, in.byte());
        memcpy(pmr_vector_at(v, k), e.data(), es);
        s.o[k] = e;
        if (es == 8 && kTypes[s.type].align == 8) {
          CHECK(PMR_VECTOR_AT_T(v, uint64_t, k) ==
                &PMR_VECTOR_GET_T(v, uint64_t, k));
          CHECK(PMR_VECTOR_FRONT_T(v, uint64_t) ==
                PMR_VECTOR_DATA_T(v, uint64_t));
        }
        break;
      }
      case 26:
      case 27: {  // swap (also with itself)
        int j = in.byte() % kSlots;
        pmr_vector_swap(v, &slots_[j].v);
        if (j != i) {
          std::swap(s.o, slots_[j].o);
          std::swap(s.cap, slots_[j].cap);
          std::swap(s.res, slots_[j].res);
          std::swap(s.type, slots_[j].type);
        }
        break;
      }
      case 28:
      case 29: {  // destroy slot j, init_copy of slot i into it
        int j = in.byte() % kSlots;
        int r = in.byte() % kNumRes;
        if (j == i) return;
        Slot& d = slots_[j];
        pmr_vector_destroy(&d.v);
        d.o.clear();
        d.cap = 0;
        bool ok = pmr_vector_init_copy(&d.v, v, R(r));
        d.res = r;
        d.type = s.type;
        if (Expect(ok, false)) {
          d.o = s.o;
          d.cap = n;
        }
        Unchanged(i);  // the source is untouched
        break;
      }
      case 30: {  // destroy slot j, init_move of slot i into it
        int j = in.byte() % kSlots;
        if (j == i) return;
        Slot& d = slots_[j];
        pmr_vector_destroy(&d.v);
        pmr_vector_init_move(&d.v, v);
        d.o = std::move(s.o);
        d.cap = s.cap;
        d.res = s.res;
        d.type = s.type;
        s.o.clear();
        s.cap = 0;
        CHECK(pmr_vector_data(&d.v) == before_[i].data);
        break;
      }
      case 31:
      case 32: {  // copy_assign slot i into slot j
        int j = in.byte() % kSlots;
        Slot& d = slots_[j];
        bool ok = pmr_vector_copy_assign(&d.v, v);
        if (Expect(ok, d.type != s.type && j != i)) {
          if (j != i) {
            if (n > d.cap) d.cap = n;
            d.o = s.o;
          }
          SameStorageIfSameCapacity(j);
        } else {
          Unchanged(j);
        }
        Unchanged(i);
        break;
      }
      case 33:
      case 34: {  // move_assign slot i into slot j
        int j = in.byte() % kSlots;
        Slot& d = slots_[j];
        bool ok = pmr_vector_move_assign(&d.v, v);
        if (Expect(ok, d.type != s.type && j != i)) {
          if (j != i) {
            if (d.res == s.res) {  // the same resource: the storage moves over
              d.cap = s.cap;
              CHECK(pmr_vector_data(&d.v) == before_[i].data);
            } else if (n > d.cap) {
              d.cap = n;
            }
            d.o = std::move(s.o);
            s.o.clear();
            s.cap = 0;
          }
        } else {
          Unchanged(i);
          Unchanged(j);
        }
        break;
      }
      case 35: {  // destroy (twice) and init again, maybe another type/resource
        pmr_vector_destroy(v);
        CHECK(pmr_vector_size(v) == 0 && pmr_vector_capacity(v) == 0);
        CHECK(pmr_vector_resource(v) == R(s.res) &&
              pmr_vector_elem_size(v) == es);
        s.o.clear();
        s.cap = 0;
        Verify(s);
        pmr_vector_destroy(v);
        uint8_t sel = in.byte();
        if (sel & 1) {  // reuse as it is
          Verify(s);
          break;
        }
        s.type = in.byte() % kNumTypes;
        s.res = in.byte() % kNumRes;
        CHECK(pmr_vector_init(v, kTypes[s.type].size, kTypes[s.type].align,
                              R(s.res)));
        break;
      }
      case 36: {  // operations that must never allocate
        size_t attempts = res_.Attempts();
        if (n != 0) {
          std::string out(es, '\0');
          CHECK(pmr_vector_pop_back(v, &out[0]));
          CHECK(out == s.o.back());
          s.o.pop_back();
        }
        if (s.o.size() > 1) {
          CHECK(pmr_vector_erase_range(v, 0, 1));
          s.o.erase(s.o.begin());
        }
        CHECK(pmr_vector_reserve(v, s.cap));
        CHECK(pmr_vector_resize(v, s.o.size()));
        CHECK(pmr_vector_insert_range(v, 0, nullptr, 0));
        CHECK(res_.Attempts() == attempts);
        CHECK(Take(s).data == before_[i].data && Take(s).cap == before_[i].cap);
        break;
      }
      default: {  // 37..39: a burst of appends to reach larger sizes
        size_t count = in.byte() % 48;
        uint8_t seed = in.byte();
        for (size_t k = 0; k < count && s.o.size() < kMaxElems; ++k) {
          std::string e = Elem(s, static_cast<uint8_t>(seed + k));
          size_t before = s.o.size();
          if (!pmr_vector_push_back(v, e.data())) {
            CHECK(res_.FailedSinceBegin());
            break;
          }
          Grow(s, before + 1);
          s.o.push_back(e);
        }
        break;
      }
    }
  }

  FuzzResources<513> res_;
  Slot slots_[kSlots];
  Snap before_[kSlots];
};

}  // namespace
}  // namespace pmrfuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  pmrfuzz::Input in(data, size);
  pmrfuzz::Fuzz f;
  f.Run(in);
  return 0;
}
