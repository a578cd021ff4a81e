// Fuzz target for pmr_string: the input is decoded into a sequence of
// operations on three strings (each over its own resource), and the same
// operations are applied to std::string oracles. Contents use a small
// alphabet with embedded NULs, so searches hit and the *_cstr variants stop
// early. After every operation:
//   - contents, length and capacity agree with the oracle and with the
//     documented policy (23 characters inline; growth to
//     max(2 * capacity, needed); reserve exact; shrink_to_fit to the length or
//     inline); c_str() is NUL-terminated; data() == c_str();
//   - the characters do not move when the capacity does not change;
//   - every counting resource has exactly the blocks and bytes (capacity + 1
//     per long string) the strings on it own.
// find/rfind (bytes, cstr, char) are compared with std::string's, compare with
// std::string::compare (exactly -1, 0 or 1), equal strings hash equally in
// either form. An operation may run with the counting resources told to fail
// after k allocations: when it reports failure the string must be exactly
// unchanged, storage included. One resource is a monotonic buffer over a
// counting resource, so growth in place (pmr_try_resize) is exercised.
// Sources that point into the string itself are used wherever allowed.
#include <algorithm>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cwchar>
#include <string>
#include <utility>

#include "containers/pmr_string.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/fuzz_resources.h"
#include "tests/testkit/counting_resource.h"

namespace pmrfuzz {

void Fail(const char* what, size_t detail) {
  fprintf(stderr, "string_fuzz: invariant broken: %s (%zu)\n", what, detail);
  abort();
}

namespace {

// The detail printed with a broken invariant is the line of the check.
#define CHECK(cond) PMR_FUZZ_CHECK(cond, __LINE__)

constexpr size_t kInline = PMR_STRING_INLINE_CAPACITY;
constexpr size_t kNpos = PMR_STRING_NPOS;
constexpr size_t kMaxLen = 4000;  // keeps every input cheap
constexpr int kSlots = 3;

static_assert(kNpos == std::string::npos, "the same 'not found'");

struct Slot {
  pmr_string s;
  std::string o;         // the oracle
  size_t cap = kInline;  // the capacity the policy gives
  int res = kCountA;
};

struct Snap {
  const char* data;
  size_t len, cap;
};

// Bytes to write: mostly from a 4-letter alphabet with NULs.
char Letter(uint8_t b) {
  static const char kAlphabet[4] = {'a', 'b', '\0', 'c'};
  return b & 0x80 ? static_cast<char>(b) : kAlphabet[b & 3];
}

int Sign(int c) { return c < 0 ? -1 : c > 0 ? 1 : 0; }

std::string Fmt(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string Fmt(const char* format, ...) {
  va_list ap, again;
  va_start(ap, format);
  va_copy(again, ap);
  int n = vsnprintf(nullptr, 0, format, ap);
  va_end(ap);
  PMR_FUZZ_CHECK(n >= 0, 0);
  std::string r(static_cast<size_t>(n) + 1, '\0');
  vsnprintf(&r[0], r.size(), format, again);
  va_end(again);
  r.pop_back();
  return r;
}

// The capacity of a string initialised with n characters.
size_t InitCap(size_t n) {
  return n > kInline ? std::max(2 * kInline, n) : kInline;
}

bool Trace() {
  static const bool on = getenv("PMRFUZZ_TRACE") != nullptr;
  return on;
}

class Fuzz {
 public:
  ~Fuzz() {
    for (Slot& s : slots_) {
      pmr_string_destroy(&s.s);
      CHECK(pmr_string_length(&s.s) == 0 &&
            pmr_string_capacity(&s.s) == kInline);
      pmr_string_destroy(&s.s);  // destroying again is allowed
    }
    PMR_FUZZ_CHECK(tmp_.outstanding_blocks() == 0, tmp_.outstanding_blocks());
    PMR_FUZZ_CHECK(tmp_.mismatches() == 0, tmp_.mismatches());
    // res_ then checks the others.
  }

  void Run(Input& in) {
    CHECK(
        pmr_string_max_size() ==
        std::min<uint64_t>((uint64_t{1} << 48) - 2, uint64_t{PTRDIFF_MAX} - 1));
    for (Slot& s : slots_) {
      s.res = in.byte() % kNumRes;
      pmr_string_init(&s.s, R(s.res));
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
    return {pmr_string_c_str(&s.s), pmr_string_length(&s.s),
            pmr_string_capacity(&s.s)};
  }

  bool Expect(bool ok, bool invalid) const { return res_.Expect(ok, invalid); }

  void Unchanged(int i) {
    Snap now = Take(slots_[i]);
    CHECK(now.data == before_[i].data);
    CHECK(now.len == before_[i].len);
    CHECK(now.cap == before_[i].cap);
  }

  void SameStorageIfSameCapacity(int i) {
    Snap now = Take(slots_[i]);
    if (now.cap == before_[i].cap) CHECK(now.data == before_[i].data);
  }

  static void Grow(Slot& s, size_t needed) {
    if (needed > s.cap) s.cap = std::max(2 * s.cap, needed);
  }

  void Verify(Slot& s) {
    pmr_string* p = &s.s;
    const size_t len = pmr_string_length(p);
    if (Trace())
      fprintf(stderr, "  len %zu (oracle %zu) cap %zu (model %zu)\n", len,
              s.o.size(), pmr_string_capacity(p), s.cap);
    CHECK(pmr_string_resource(p) == R(s.res));
    CHECK(len == s.o.size());
    CHECK(pmr_string_empty(p) == s.o.empty());
    CHECK(pmr_string_capacity(p) == s.cap);
    CHECK(s.cap >= len && s.cap >= kInline);
    const char* d = pmr_string_c_str(p);
    CHECK(pmr_string_data(p) == d);
    CHECK(memcmp(d, s.o.data(), len) == 0);
    CHECK(d[len] == '\0');
  }

  void VerifyAll() {
    size_t blocks[2] = {0, 0}, bytes[2] = {0, 0};
    for (Slot& s : slots_) {
      Verify(s);
      if (s.res != kMono && s.cap > kInline) {
        ++blocks[s.res];
        bytes[s.res] += s.cap + 1;
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
    PMR_FUZZ_CHECK(tmp_.outstanding_blocks() == 0, tmp_.outstanding_blocks());
    CHECK(res_.a.mismatches() == 0 && res_.b.mismatches() == 0 &&
          res_.up.mismatches() == 0 && tmp_.mismatches() == 0);
  }

  static std::string Bytes(Input& in, size_t n) {
    std::string r(n, '\0');
    for (char& c : r) c = Letter(in.byte());
    return r;
  }

  static std::string Pattern(size_t n, uint8_t seed) {
    std::string r(n, '\0');
    for (size_t k = 0; k < n; ++k)
      r[k] = Letter(static_cast<uint8_t>(seed + k * 7 + k / 5));
    return r;
  }

  // A NUL-terminated text (the oracle of a C string argument).
  std::string Text(Input& in) {
    uint8_t sel = in.byte();
    if (sel & 0x80) {
      size_t n = in.u16() % 300;
      return Pattern(n, in.byte());
    }
    return Bytes(in, sel % 16);
  }

  // The bytes an edit of slot i takes: from the input, from a pattern, from
  // the string itself (aliasing, allowed), from another string, or NULL.
  struct Src {
    std::string bytes;  // what they are
    const char* p;
    size_t m;
    bool null_with_len;  // NULL with m > 0: the call must be refused
  };
  Src Source(Input& in, int i) {
    Src r;
    r.null_with_len = false;
    Slot& s = slots_[i];
    const size_t len = s.o.size();
    uint8_t sel = in.byte();
    switch (sel % 6) {
      case 0:
      case 1: {
        r.bytes = Bytes(in, in.byte() % 12);
        break;
      }
      case 2: {
        size_t n = in.u16() % 400;
        r.bytes = Pattern(n, in.byte());
        break;
      }
      case 3: {  // from the string itself
        size_t off = in.u16() % (len + 1);
        r.m = in.u16() % (len - off + 1);
        r.p = pmr_string_c_str(&s.s) + off;
        r.bytes = s.o.substr(off, r.m);
        return r;
      }
      case 4: {  // from another string (or itself)
        Slot& t = slots_[in.byte() % kSlots];
        size_t off = in.u16() % (t.o.size() + 1);
        r.m = in.u16() % (t.o.size() - off + 1);
        r.p = pmr_string_c_str(&t.s) + off;
        r.bytes = t.o.substr(off, r.m);
        return r;
      }
      default: {  // NULL
        r.p = nullptr;
        r.m = in.byte() % 2;
        r.null_with_len = r.m != 0;
        return r;
      }
    }
    r.p = r.bytes.data();
    r.m = r.bytes.size();
    return r;
  }

  // A needle for the searches: short, from the alphabet, or a piece of s.
  std::string Needle(Input& in, const std::string& hay) {
    uint8_t sel = in.byte();
    if (sel % 3 == 0 && !hay.empty()) {
      size_t off = in.u16() % hay.size();
      return hay.substr(off, in.byte() % 6);
    }
    return Bytes(in, sel % 5);
  }

  static size_t SearchPos(Input& in, size_t len) {
    uint8_t sel = in.byte();
    if (sel == 0xFF) return kNpos;
    if (sel == 0xFE) return len;
    return in.u16() % (len + 3);
  }

  void Step(int op, Input& in) {
    const int i = in.byte() % kSlots;
    Slot& s = slots_[i];
    pmr_string* p = &s.s;
    const size_t len = s.o.size();
    if (Trace())
      fprintf(stderr, "op %d slot %d len %zu cap %zu\n", op, i, len, s.cap);
    switch (op) {
      case 0:
      case 1: {  // push_back
        if (len >= kMaxLen) return;
        char c = Letter(in.byte());
        if (Expect(pmr_string_push_back(p, c), false)) {
          Grow(s, len + 1);
          s.o.push_back(c);
          SameStorageIfSameCapacity(i);
        } else {
          Unchanged(i);
        }
        break;
      }
      case 2:
      case 3: {  // append_bytes
        Src src = Source(in, i);
        if (len + src.m > kMaxLen) return;
        if (Expect(pmr_string_append_bytes(p, src.p, src.m),
                   src.null_with_len)) {
          Grow(s, len + src.m);
          s.o += src.bytes;
          SameStorageIfSameCapacity(i);
        } else {
          Unchanged(i);
        }
        break;
      }
      case 4: {  // append_cstr, maybe of a suffix of itself
        std::string t;
        const char* c;
        if (in.byte() & 1) {
          size_t off = in.u16() % (len + 1);
          c = pmr_string_c_str(p) + off;
          t = std::string(s.o.c_str() + off);
        } else {
          t = Text(in);
          c = t.c_str();
        }
        std::string want = std::string(c);
        if (len + want.size() > kMaxLen) return;
        if (Expect(pmr_string_append_cstr(p, c), false)) {
          Grow(s, len + want.size());
          s.o += want;
          SameStorageIfSameCapacity(i);
        } else {
          Unchanged(i);
        }
        break;
      }
      case 5: {  // append_string, also itself
        Slot& t = slots_[in.byte() % kSlots];
        std::string add = t.o;
        if (len + add.size() > kMaxLen) return;
        if (Expect(pmr_string_append_string(p, &t.s), false)) {
          Grow(s, len + add.size());
          s.o += add;
          SameStorageIfSameCapacity(i);
        } else {
          Unchanged(i);
        }
        break;
      }
      case 6:
      case 7: {  // append_format: short (one pass) and long (two passes)
        std::string t = Text(in), t2 = Text(in);
        unsigned num = in.u32();
        int width = in.u16() % 700;
        char c1 = Letter(in.byte()), c2 = Letter(in.byte());
        std::string want;
        bool ok = false;
        uint8_t f = in.byte() % 7;
        switch (f) {
          case 0:
            want = Fmt("%u:%s", num, t.c_str());
            break;
          case 1:
            want = Fmt("%*u", width, num);
            break;
          case 2:
            want = Fmt("%c%c", c1, c2);
            break;
          case 3:
            want = Fmt("%.*s|%s", width % 40, t.c_str(), t2.c_str());
            break;
          case 4:
            want = Fmt("%s", "");
            break;
          case 5:
            break;  // an encoding error: refused
          default:
            want = Fmt("%0*d%s", width, static_cast<int>(num), t.c_str());
            break;
        }
        if (len + want.size() > kMaxLen) return;
        switch (f) {
          case 0:
            ok = pmr_string_append_format(p, "%u:%s", num, t.c_str());
            break;
          case 1:
            ok = pmr_string_append_format(p, "%*u", width, num);
            break;
          case 2:
            ok = pmr_string_append_format(p, "%c%c", c1, c2);
            break;
          case 3:
            ok = pmr_string_append_format(p, "%.*s|%s", width % 40, t.c_str(),
                                          t2.c_str());
            break;
          case 4:
            ok = pmr_string_append_format(p, "%s", "");
            break;
          case 5:  // a wide character the C locale cannot encode
            ok = pmr_string_append_format(
                p, "%s%lc", t.c_str(),
                static_cast<wint_t>(0x100 + num % 0x1000));
            break;
          default:
            ok = pmr_string_append_format(p, "%0*d%s", width,
                                          static_cast<int>(num), t.c_str());
            break;
        }
        if (Expect(ok, f == 5)) {
          Grow(s, len + want.size());
          s.o += want;
          SameStorageIfSameCapacity(i);
        } else {
          Unchanged(i);
        }
        break;
      }
      case 8: {  // pop_back
        if (Expect(pmr_string_pop_back(p), len == 0)) {
          s.o.pop_back();
          CHECK(Take(s).data == before_[i].data);
        } else {
          Unchanged(i);
        }
        break;
      }
      case 9:
      case 10: {  // insert_bytes
        size_t pos = in.u16() % (len + 2);
        Src src = Source(in, i);
        if (len + src.m > kMaxLen) return;
        bool ok = pmr_string_insert_bytes(p, pos, src.p, src.m);
        if (Expect(ok, pos > len || src.null_with_len)) {
          Grow(s, len + src.m);
          s.o.insert(pos, src.bytes);
          SameStorageIfSameCapacity(i);
        } else {
          Unchanged(i);
        }
        break;
      }
      case 11: {  // insert_cstr
        size_t pos = in.u16() % (len + 2);
        std::string t = Text(in);
        std::string want(t.c_str());
        if (len + want.size() > kMaxLen) return;
        if (Expect(pmr_string_insert_cstr(p, pos, t.c_str()), pos > len)) {
          Grow(s, len + want.size());
          s.o.insert(pos, want);
          SameStorageIfSameCapacity(i);
        } else {
          Unchanged(i);
        }
        break;
      }
      case 12:
      case 13: {  // erase
        size_t pos = in.u16() % (len + 2);
        uint8_t sel = in.byte();
        size_t n = sel == 0xFF ? kNpos : sel & 0x80 ? in.u16() : sel % 8;
        if (Expect(pmr_string_erase(p, pos, n), pos > len)) {
          s.o.erase(pos, n);
          CHECK(Take(s).data == before_[i].data);
        } else {
          Unchanged(i);
        }
        break;
      }
      case 14:
      case 15: {  // replace
        size_t pos = in.u16() % (len + 2);
        uint8_t sel = in.byte();
        size_t n = sel == 0xFF ? kNpos : sel & 0x80 ? in.u16() : sel % 8;
        Src src = Source(in, i);
        size_t removed = pos <= len ? std::min(n, len - pos) : 0;
        if (len - removed + src.m > kMaxLen) return;
        bool ok = pmr_string_replace(p, pos, n, src.p, src.m);
        if (Expect(ok, pos > len || src.null_with_len)) {
          Grow(s, len - removed + src.m);
          s.o.replace(pos, removed, src.bytes);
          SameStorageIfSameCapacity(i);
        } else {
          Unchanged(i);
        }
        break;
      }
      case 16:
      case 17: {  // find, find_cstr, find_char
        std::string nd = Needle(in, s.o);
        size_t pos = SearchPos(in, len);
        CHECK(pmr_string_find(p, nd.data(), nd.size(), pos) ==
              s.o.find(nd.data(), pos, nd.size()));
        CHECK(pmr_string_find_cstr(p, nd.c_str(), pos) ==
              s.o.find(nd.c_str(), pos));
        char c = nd.empty() ? 'a' : nd[0];
        CHECK(pmr_string_find_char(p, c, pos) == s.o.find(c, pos));
        // A needle inside the string itself.
        if (len != 0) {
          size_t off = in.u16() % len, m = in.byte() % (len - off + 1);
          CHECK(pmr_string_find(p, pmr_string_c_str(p) + off, m, pos) ==
                s.o.find(s.o.data() + off, pos, m));
        }
        break;
      }
      case 18:
      case 19: {  // rfind, rfind_cstr, rfind_char
        std::string nd = Needle(in, s.o);
        size_t pos = SearchPos(in, len);
        CHECK(pmr_string_rfind(p, nd.data(), nd.size(), pos) ==
              s.o.rfind(nd.data(), pos, nd.size()));
        CHECK(pmr_string_rfind_cstr(p, nd.c_str(), pos) ==
              s.o.rfind(nd.c_str(), pos));
        char c = nd.empty() ? '\0' : nd[0];
        CHECK(pmr_string_rfind_char(p, c, pos) == s.o.rfind(c, pos));
        break;
      }
      case 20: {  // compare, compare_bytes, compare_cstr, equal, hash
        Slot& t = slots_[in.byte() % kSlots];
        int want = Sign(s.o.compare(t.o));
        CHECK(pmr_string_compare(p, &t.s) == want);
        CHECK(pmr_string_equal(p, &t.s) == (s.o == t.o));
        if (s.o == t.o) CHECK(pmr_string_hash(p) == pmr_string_hash(&t.s));
        std::string other;
        if (in.byte() & 1) {
          other = Bytes(in, in.byte() % 8);
        } else {
          other = s.o.substr(0, in.u16() % (len + 1));
          other += Bytes(in, in.byte() % 3);
        }
        CHECK(pmr_string_compare_bytes(p, other.data(), other.size()) ==
              Sign(s.o.compare(other)));
        CHECK(pmr_string_compare_cstr(p, other.c_str()) ==
              Sign(s.o.compare(other.c_str())));
        break;
      }
      case 21: {  // substr into slot j (destroyed first)
        int j = in.byte() % kSlots;
        int r = in.byte() % kNumRes;
        size_t pos = in.u16() % (len + 2);
        uint8_t sel = in.byte();
        size_t n = sel == 0xFF ? kNpos : sel & 0x80 ? in.u16() : sel % 32;
        if (j == i) return;
        Slot& d = slots_[j];
        pmr_string_destroy(&d.s);
        bool ok = pmr_string_substr(&d.s, p, pos, n, R(r));
        d.res = r;
        d.o.clear();
        d.cap = kInline;
        if (Expect(ok, pos > len)) {
          d.o = s.o.substr(pos, n);
          d.cap = InitCap(d.o.size());
        }
        Unchanged(i);
        break;
      }
      case 22: {  // reserve
        uint8_t sel = in.byte();
        size_t want = in.u16() % 2048;
        if (sel == 0xFF) want = pmr_string_max_size() + 1;
        if (sel == 0xFE) want = SIZE_MAX;
        bool ok = pmr_string_reserve(p, want);
        if (Expect(ok, want > pmr_string_max_size())) {
          if (want > s.cap) s.cap = want;
          SameStorageIfSameCapacity(i);
        } else {
          Unchanged(i);
        }
        break;
      }
      case 23: {  // shrink_to_fit
        if (Expect(pmr_string_shrink_to_fit(p), false)) {
          if (s.cap > kInline) s.cap = len <= kInline ? kInline : len;
          SameStorageIfSameCapacity(i);
        } else {
          CHECK(len > kInline);  // only a long string may need a block
          Unchanged(i);
        }
        break;
      }
      case 24:
      case 25: {  // resize
        size_t want = in.u16() % (kMaxLen + 1);
        uint8_t sel = in.byte();
        if (sel & 1) want %= 64;
        if (sel == 0xFF) want = pmr_string_max_size() + 1;
        if (sel == 0xFD) want = SIZE_MAX;
        char fill = Letter(in.byte());
        if (Expect(pmr_string_resize(p, want, fill),
                   want > pmr_string_max_size())) {
          Grow(s, want);
          s.o.resize(want, fill);
          SameStorageIfSameCapacity(i);
        } else {
          CHECK(want > len);
          Unchanged(i);
        }
        break;
      }
      case 26: {  // clear
        pmr_string_clear(p);
        s.o.clear();
        CHECK(Take(s).data == before_[i].data);
        break;
      }
      case 27: {  // assign_bytes (maybe from itself), assign_cstr
        if (in.byte() & 1) {
          Src src = Source(in, i);
          if (Expect(pmr_string_assign_bytes(p, src.p, src.m),
                     src.null_with_len)) {
            Grow(s, src.m);
            s.o = src.bytes;
            SameStorageIfSameCapacity(i);
          } else {
            Unchanged(i);
          }
        } else {
          std::string t = Text(in);
          std::string want(t.c_str());
          if (Expect(pmr_string_assign_cstr(p, t.c_str()), false)) {
            Grow(s, want.size());
            s.o = want;
            SameStorageIfSameCapacity(i);
          } else {
            Unchanged(i);
          }
        }
        break;
      }
      case 28: {  // copy_assign slot i into slot j (also itself)
        int j = in.byte() % kSlots;
        Slot& d = slots_[j];
        if (Expect(pmr_string_copy_assign(&d.s, p), false)) {
          if (j != i) {
            Grow(d, len);
            d.o = s.o;
          }
          SameStorageIfSameCapacity(j);
        } else {
          Unchanged(j);
        }
        Unchanged(i);
        break;
      }
      case 29: {  // move_assign slot i into slot j (also itself)
        int j = in.byte() % kSlots;
        Slot& d = slots_[j];
        if (Expect(pmr_string_move_assign(&d.s, p), false)) {
          if (j != i) {
            if (s.cap > kInline && s.res == d.res) {  // the block moves over
              d.cap = s.cap;
              CHECK(pmr_string_c_str(&d.s) == before_[i].data);
            } else {
              Grow(d, len);
            }
            d.o = std::move(s.o);
            s.o.clear();
            s.cap = kInline;
          }
        } else {
          Unchanged(i);
          Unchanged(j);
        }
        break;
      }
      case 30: {  // init_copy of slot i into slot j (destroyed first)
        int j = in.byte() % kSlots;
        int r = in.byte() % kNumRes;
        if (j == i) return;
        Slot& d = slots_[j];
        pmr_string_destroy(&d.s);
        bool ok = pmr_string_init_copy(&d.s, p, R(r));
        d.res = r;
        d.o.clear();
        d.cap = kInline;
        if (Expect(ok, false)) {
          d.o = s.o;
          d.cap = InitCap(len);
        }
        Unchanged(i);
        break;
      }
      case 31: {  // init_move of slot i into slot j (destroyed first)
        int j = in.byte() % kSlots;
        if (j == i) return;
        Slot& d = slots_[j];
        pmr_string_destroy(&d.s);
        pmr_string_init_move(&d.s, p);
        d.o = std::move(s.o);
        d.cap = s.cap;
        d.res = s.res;
        s.o.clear();
        s.cap = kInline;
        if (d.cap > kInline) CHECK(pmr_string_c_str(&d.s) == before_[i].data);
        break;
      }
      case 32: {  // swap (also with itself)
        int j = in.byte() % kSlots;
        pmr_string_swap(p, &slots_[j].s);
        if (j != i) {
          std::swap(s.o, slots_[j].o);
          std::swap(s.cap, slots_[j].cap);
          std::swap(s.res, slots_[j].res);
        }
        break;
      }
      case 33: {  // write through data()
        if (len == 0) return;
        size_t k = in.u16() % len;
        char c = Letter(in.byte());
        pmr_string_data(p)[k] = c;
        s.o[k] = c;
        break;
      }
      case 34: {  // destroy (twice) and init again
        pmr_string_destroy(p);
        s.o.clear();
        s.cap = kInline;
        Verify(s);
        pmr_string_destroy(p);
        uint8_t sel = in.byte();
        int r = in.byte() % kNumRes;
        switch (sel % 4) {
          case 0:  // reuse as it is
            break;
          case 1:
            pmr_string_init(p, R(r));
            s.res = r;
            break;
          case 2: {  // init_bytes, from another string, the input or NULL
            int j = in.byte() % kSlots;
            Src src = Source(in, j == i ? (i + 1) % kSlots : j);
            bool ok = pmr_string_init_bytes(p, src.p, src.m, R(r));
            s.res = r;
            if (Expect(ok, src.null_with_len)) {
              s.o = src.bytes;
              s.cap = InitCap(src.m);
            }
            break;
          }
          default: {  // init_cstr, also NULL
            std::string t = Text(in);
            const char* c = in.byte() % 4 == 0 ? nullptr : t.c_str();
            bool ok = pmr_string_init_cstr(p, c, R(r));
            s.res = r;
            if (Expect(ok, false)) {
              s.o = c != nullptr ? std::string(c) : std::string();
              s.cap = InitCap(s.o.size());
            }
            break;
          }
        }
        break;
      }
      case 35: {  // what must never allocate, even while allocations fail
        size_t attempts = res_.Attempts();
        CHECK(pmr_string_reserve(p, s.cap));
        CHECK(pmr_string_resize(p, len, 'x'));
        CHECK(pmr_string_append_bytes(p, nullptr, 0));
        CHECK(pmr_string_insert_bytes(p, len, "", 0));
        if (s.cap > len) {
          CHECK(pmr_string_push_back(p, 'q'));
          s.o.push_back('q');
        }
        size_t n = in.byte() % 4;
        CHECK(pmr_string_erase(p, 0, n));
        s.o.erase(0, n);
        if (!s.o.empty()) {
          CHECK(pmr_string_pop_back(p));
          s.o.pop_back();
        }
        CHECK(res_.Attempts() == attempts);
        CHECK(Take(s).data == before_[i].data && Take(s).cap == before_[i].cap);
        break;
      }
      case 36: {  // equal contents hash equally, inline or in a block
        std::string t = in.byte() & 1 ? s.o : Bytes(in, in.byte() % 30);
        pmr_string x, y;
        bool okx = pmr_string_init_bytes(&x, t.data(), t.size(), tmp_.get());
        pmr_string_init(&y, tmp_.get());
        bool oky = pmr_string_reserve(&y, 64) &&
                   pmr_string_assign_bytes(&y, t.data(), t.size());
        CHECK(okx && oky);
        CHECK(pmr_string_equal(&x, &y) &&
              pmr_string_hash(&x) == pmr_string_hash(&y));
        CHECK(pmr_string_equal(&x, p) == (t == s.o));
        if (t == s.o) CHECK(pmr_string_hash(&x) == pmr_string_hash(p));
        CHECK(pmr_string_compare(&x, p) == Sign(t.compare(s.o)));
        pmr_string_destroy(&x);
        pmr_string_destroy(&y);
        break;
      }
      default: {  // 37..39: a burst of appends and pushes to reach long strings
        size_t count = in.byte() % 40;
        uint8_t seed = in.byte();
        for (size_t k = 0; k < count && s.o.size() < kMaxLen; ++k) {
          std::string piece = Pattern(k % 7, static_cast<uint8_t>(seed + k));
          size_t before = s.o.size();
          if (!pmr_string_append_bytes(p, piece.data(), piece.size())) {
            CHECK(res_.FailedSinceBegin());
            break;
          }
          Grow(s, before + piece.size());
          s.o += piece;
        }
        break;
      }
    }
  }

  FuzzResources<257> res_;
  pmrtest::CountingResource tmp_;  // scratch strings, never failing
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
