// pmr_string through its C API: every operation, the inline form, binary
// safety, aliasing arguments, growth in place, failure injection at every
// allocation point, and random operation sequences checked against
// std::string.
#include "containers/pmr_string.h"

#include <gtest/gtest.h>

#include <cstdarg>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "tests/testkit/counting_resource.h"
#include "tests/testkit/test_resources.h"

namespace {

using pmrtest::Call;
using pmrtest::CountingResource;

std::string Str(const pmr_string* s) {
  return std::string(pmr_string_c_str(s), pmr_string_length(s));
}

// Everything observable about a string.
struct State {
  std::string contents;
  size_t length, capacity;
  const char* data;
  bool operator==(const State& o) const {
    return contents == o.contents && length == o.length &&
           capacity == o.capacity && data == o.data;
  }
};
State Capture(const pmr_string* s) {
  return {Str(s), pmr_string_length(s), pmr_string_capacity(s),
          pmr_string_c_str(s)};
}

// Checks the invariants: terminated, length within capacity.
void CheckInvariants(const pmr_string* s) {
  ASSERT_LE(pmr_string_length(s), pmr_string_capacity(s));
  ASSERT_EQ(pmr_string_c_str(s)[pmr_string_length(s)], '\0');
  ASSERT_GE(pmr_string_capacity(s), PMR_STRING_INLINE_CAPACITY);
}

using pmrtest::BumpResource;
using pmrtest::FriendlyResource;

const std::string kLong = "the quick brown fox jumps over the lazy dog";  // 43

// ---- The inline form ---------------------------------------------------

TEST(String, InlineCapacityIs23CharsIn32Bytes) {
  if (sizeof(void*) == 8 && sizeof(size_t) == 8) {
    EXPECT_EQ(sizeof(pmr_string), 32u);
    EXPECT_EQ(PMR_STRING_INLINE_CAPACITY, 23u);
  }
  CountingResource up;
  pmr_string s;
  pmr_string_init(&s, up.get());
  EXPECT_EQ(pmr_string_length(&s), 0u);
  EXPECT_TRUE(pmr_string_empty(&s));
  EXPECT_STREQ(pmr_string_c_str(&s), "");
  EXPECT_EQ(pmr_string_capacity(&s), PMR_STRING_INLINE_CAPACITY);
  for (size_t i = 0; i < PMR_STRING_INLINE_CAPACITY; ++i) {
    ASSERT_TRUE(pmr_string_push_back(&s, static_cast<char>('a' + i % 26)));
    CheckInvariants(&s);
  }
  EXPECT_EQ(pmr_string_length(&s), PMR_STRING_INLINE_CAPACITY);
  EXPECT_EQ(up.allocations(), 0u);  // all inline
  EXPECT_EQ(Str(&s), std::string("abcdefghijklmnopqrstuvw")
                         .substr(0, PMR_STRING_INLINE_CAPACITY));
  ASSERT_TRUE(pmr_string_push_back(&s, 'x'));  // the first allocation
  EXPECT_EQ(up.allocations(), 1u);
  CheckInvariants(&s);
  EXPECT_EQ(pmr_string_capacity(&s), 2 * PMR_STRING_INLINE_CAPACITY);
  EXPECT_EQ(up.calls()[0].bytes, 2 * PMR_STRING_INLINE_CAPACITY + 1);
  EXPECT_EQ(up.calls()[0].alignment, 1u);
  pmr_string_destroy(&s);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  EXPECT_EQ(up.mismatches(), 0u);
  pmr_string_destroy(&s);  // twice is fine
}

// push_back is inline while there is room (inline and long forms) and goes
// out of line to grow: every step agrees with std::string, terminator and
// capacity included, NULs too; a growth that fails changes nothing.
// The relocation contract: a string's bytes moved with memcpy are the
// string (short and long forms), and the copy alone is destroyed.
TEST(String, MovesWithMemcpy) {
  CountingResource up;
  for (size_t n : {size_t{5}, size_t{100}}) {
    alignas(pmr_string) unsigned char a[sizeof(pmr_string)];
    alignas(pmr_string) unsigned char b[sizeof(pmr_string)];
    pmr_string* s = reinterpret_cast<pmr_string*>(a);
    ASSERT_TRUE(
        pmr_string_init_bytes(s, std::string(n, 'x').data(), n, up.get()));
    std::memcpy(b, a, sizeof a);
    std::memset(a, 0xA5, sizeof a);  // the old bytes are gone
    pmr_string* t = reinterpret_cast<pmr_string*>(b);
    EXPECT_EQ(std::string(pmr_string_c_str(t), pmr_string_length(t)),
              std::string(n, 'x'));
    ASSERT_TRUE(pmr_string_append_cstr(t, "yz"));
    EXPECT_EQ(pmr_string_length(t), n + 2);
    EXPECT_EQ(pmr_string_resource(t), up.get());
    pmr_string_destroy(t);
    EXPECT_EQ(up.outstanding_blocks(), 0u);
  }
}

TEST(String, PushBackOneCharAtATime) {
  CountingResource up;
  pmr_string s;
  pmr_string_init(&s, up.get());
  std::string want;
  for (int i = 0; i < 1000; ++i) {
    const char c = i % 7 == 3 ? '\0' : static_cast<char>('a' + i % 26);
    const size_t cap = pmr_string_capacity(&s);
    if (pmr_string_length(&s) == cap && i % 2 == 0) {
      up.fail_after(0);  // the growth fails: nothing changes
      const char* before = pmr_string_c_str(&s);
      ASSERT_FALSE(pmr_string_push_back(&s, c));
      up.never_fail();
      ASSERT_EQ(pmr_string_c_str(&s), before);
      ASSERT_EQ(pmr_string_capacity(&s), cap);
      ASSERT_EQ(Str(&s), want);
    }
    ASSERT_TRUE(pmr_string_push_back(&s, c));
    want.push_back(c);
    ASSERT_EQ(Str(&s), want) << i;
    ASSERT_EQ(pmr_string_c_str(&s)[want.size()], '\0');
    ASSERT_EQ(pmr_string_capacity(&s) != cap, cap == want.size() - 1) << i;
    CheckInvariants(&s);
  }
  pmr_string_destroy(&s);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
}

TEST(String, InitVariantsAndDefaultResource) {
  CountingResource up;
  pmr_mem_resource* prev = pmr_set_default_resource(up.get());
  pmr_string a, b, c, d;
  ASSERT_TRUE(pmr_string_init_cstr(&a, kLong.c_str(), nullptr));
  pmr_set_default_resource(prev);
  EXPECT_EQ(pmr_string_resource(&a), up.get());
  EXPECT_EQ(Str(&a), kLong);
  EXPECT_EQ(up.allocations(), 1u);
  ASSERT_TRUE(pmr_string_init_bytes(&b, "a\0b", 3, up.get()));
  EXPECT_EQ(Str(&b), std::string("a\0b", 3));
  ASSERT_TRUE(pmr_string_init_cstr(&c, nullptr, up.get()));
  EXPECT_EQ(Str(&c), "");
  EXPECT_FALSE(pmr_string_init_bytes(&d, nullptr, 3, up.get()));
  EXPECT_EQ(Str(&d), "");
  for (pmr_string* s : {&a, &b, &c, &d}) pmr_string_destroy(s);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
}

// ---- Edits ---------------------------------------------------------------

TEST(String, AppendVariants) {
  pmr_string s, t;
  pmr_string_init(&s, nullptr);
  pmr_string_init(&t, nullptr);
  ASSERT_TRUE(pmr_string_append_cstr(&s, "abc"));
  ASSERT_TRUE(pmr_string_append_bytes(&s, "d\0e", 3));
  ASSERT_TRUE(pmr_string_push_back(&s, 'f'));
  ASSERT_TRUE(pmr_string_append_cstr(&t, "XYZ"));
  ASSERT_TRUE(pmr_string_append_string(&s, &t));
  ASSERT_TRUE(pmr_string_append_cstr(&s, nullptr));
  ASSERT_TRUE(pmr_string_append_bytes(&s, nullptr, 0));
  EXPECT_FALSE(pmr_string_append_bytes(&s, nullptr, 1));
  EXPECT_EQ(Str(&s), std::string("abcd\0efXYZ", 10));
  ASSERT_TRUE(pmr_string_append_string(&s, &s));  // itself
  EXPECT_EQ(Str(&s), std::string("abcd\0efXYZabcd\0efXYZ", 20));
  ASSERT_TRUE(pmr_string_append_string(&s, &s));  // itself, growing
  EXPECT_EQ(pmr_string_length(&s), 40u);
  CheckInvariants(&s);
  ASSERT_TRUE(pmr_string_pop_back(&s));
  EXPECT_EQ(pmr_string_length(&s), 39u);
  const size_t cap = pmr_string_capacity(&s);
  EXPECT_EQ(cap, 2 * PMR_STRING_INLINE_CAPACITY);  // growth factor 2
  pmr_string_clear(&s);
  EXPECT_FALSE(pmr_string_pop_back(&s));
  EXPECT_EQ(pmr_string_capacity(&s), cap);  // clear keeps capacity
  CheckInvariants(&s);
  pmr_string_destroy(&s);
  pmr_string_destroy(&t);
}

TEST(String, AppendFormat) {
  CountingResource up;
  pmr_string s;
  pmr_string_init(&s, up.get());
  ASSERT_TRUE(pmr_string_append_format(&s, "%d-%s-%c", 42, "ab", 'z'));
  EXPECT_EQ(Str(&s), "42-ab-z");
  std::string big(1000, 'q');
  ASSERT_TRUE(pmr_string_append_format(&s, "[%s]%05d", big.c_str(), 7));
  EXPECT_EQ(Str(&s), "42-ab-z[" + big + "]00007");
  CheckInvariants(&s);
  ASSERT_TRUE(pmr_string_append_format(&s, "%s", ""));
  EXPECT_EQ(pmr_string_length(&s), 7 + 1002 + 5u);
  pmr_string_destroy(&s);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
}

bool VFormatHelper(pmr_string* s, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  bool ok = pmr_string_append_vformat(s, fmt, ap);
  va_end(ap);
  return ok;
}

TEST(String, AppendVFormat) {
  pmr_string s;
  pmr_string_init(&s, nullptr);
  ASSERT_TRUE(VFormatHelper(&s, "%u+%u", 1u, 2u));
  std::string big(300, 'w');
  ASSERT_TRUE(VFormatHelper(&s, "%s%s", big.c_str(), big.c_str()));
  EXPECT_EQ(Str(&s), "1+2" + big + big);
  pmr_string_destroy(&s);
}

TEST(String, InsertEraseReplace) {
  pmr_string s;
  pmr_string_init(&s, nullptr);
  ASSERT_TRUE(pmr_string_assign_cstr(&s, "hello world"));
  ASSERT_TRUE(pmr_string_insert_cstr(&s, 5, ","));
  EXPECT_EQ(Str(&s), "hello, world");
  ASSERT_TRUE(pmr_string_insert_bytes(&s, 0, ">\0", 2));
  EXPECT_EQ(Str(&s), std::string(">\0hello, world", 14));
  ASSERT_TRUE(pmr_string_insert_cstr(&s, 14, "!"));
  EXPECT_FALSE(pmr_string_insert_cstr(&s, 16, "?"));
  ASSERT_TRUE(pmr_string_erase(&s, 0, 2));
  EXPECT_EQ(Str(&s), "hello, world!");
  ASSERT_TRUE(pmr_string_erase(&s, 5, 1));
  EXPECT_EQ(Str(&s), "hello world!");
  ASSERT_TRUE(pmr_string_erase(&s, 11, PMR_STRING_NPOS));
  EXPECT_EQ(Str(&s), "hello world");
  EXPECT_FALSE(pmr_string_erase(&s, 12, 1));
  ASSERT_TRUE(pmr_string_erase(&s, 11, 5));  // at the end: nothing
  ASSERT_TRUE(pmr_string_replace(&s, 0, 5, "goodbye", 7));
  EXPECT_EQ(Str(&s), "goodbye world");
  ASSERT_TRUE(pmr_string_replace(&s, 8, PMR_STRING_NPOS, "moon", 4));
  EXPECT_EQ(Str(&s), "goodbye moon");
  ASSERT_TRUE(pmr_string_replace(&s, 0, 8, "", 0));
  EXPECT_EQ(Str(&s), "moon");
  EXPECT_FALSE(pmr_string_replace(&s, 5, 0, "x", 1));
  EXPECT_FALSE(pmr_string_replace(&s, 0, 0, nullptr, 1));
  ASSERT_TRUE(pmr_string_replace(&s, 2, 1, kLong.data(), kLong.size()));
  EXPECT_EQ(Str(&s), "mo" + kLong + "n");
  CheckInvariants(&s);
  ASSERT_TRUE(pmr_string_resize(&s, 3, 'x'));
  EXPECT_EQ(Str(&s), "mot");
  ASSERT_TRUE(pmr_string_resize(&s, 6, 'x'));
  EXPECT_EQ(Str(&s), "motxxx");
  ASSERT_TRUE(pmr_string_resize(&s, 60, '\0'));
  EXPECT_EQ(Str(&s), "motxxx" + std::string(54, '\0'));
  pmr_string_destroy(&s);
}

// Every replace of a piece of the string by a piece of itself, inline and
// long, with and without spare capacity, against std::string.
TEST(String, ReplaceWithItsOwnCharacters) {
  for (std::string base : {std::string("0123456789"), kLong}) {
    const size_t len = base.size();
    for (int mode = 0; mode < 2; ++mode) {
      for (size_t pos = 0; pos <= len; pos += (len > 12 ? 3 : 1)) {
        for (size_t n = 0; pos + n <= len; n += (len > 12 ? 5 : 1)) {
          for (size_t off = 0; off <= len; off += (len > 12 ? 4 : 1)) {
            for (size_t m = 0; off + m <= len; m += (len > 12 ? 6 : 1)) {
              pmr_string s;
              ASSERT_TRUE(pmr_string_init_bytes(&s, base.data(), len, nullptr));
              if (mode == 1) {
                ASSERT_TRUE(pmr_string_reserve(&s, 200));
              }
              std::string want = base;
              want.replace(pos, n, base.substr(off, m));
              ASSERT_TRUE(pmr_string_replace(&s, pos, n,
                                             pmr_string_c_str(&s) + off, m));
              ASSERT_EQ(Str(&s), want) << pos << " " << n << " " << off << " "
                                       << m << " mode " << mode;
              CheckInvariants(&s);
              pmr_string_destroy(&s);
            }
          }
        }
      }
    }
  }
}

TEST(String, ArgumentsReachingPastTheCharactersAreRejected) {
  pmr_string s;
  ASSERT_TRUE(pmr_string_init_cstr(&s, "abcdef", nullptr));
  State before = Capture(&s);
  EXPECT_FALSE(pmr_string_replace(&s, 0, 1, pmr_string_c_str(&s) + 4, 3));
  EXPECT_TRUE(Capture(&s) == before);
  pmr_string_destroy(&s);
}

TEST(String, AssignAndCopyAssign) {
  CountingResource a_up, b_up;
  pmr_string a, b;
  ASSERT_TRUE(pmr_string_init_cstr(&a, kLong.c_str(), a_up.get()));
  pmr_string_init(&b, b_up.get());
  ASSERT_TRUE(pmr_string_copy_assign(&b, &a));
  EXPECT_EQ(Str(&b), kLong);
  EXPECT_EQ(pmr_string_resource(&b), b_up.get());
  EXPECT_TRUE(pmr_string_copy_assign(&b, &b));
  ASSERT_TRUE(pmr_string_assign_bytes(&b, "x\0y", 3));
  EXPECT_EQ(Str(&b), std::string("x\0y", 3));
  ASSERT_TRUE(pmr_string_assign_cstr(&b, nullptr));
  EXPECT_EQ(Str(&b), "");
  EXPECT_FALSE(pmr_string_assign_bytes(&b, nullptr, 2));
  // Assigning a piece of itself.
  ASSERT_TRUE(pmr_string_assign_cstr(&b, "0123456789"));
  ASSERT_TRUE(pmr_string_assign_bytes(&b, pmr_string_c_str(&b) + 3, 4));
  EXPECT_EQ(Str(&b), "3456");
  pmr_string_destroy(&a);
  pmr_string_destroy(&b);
  EXPECT_EQ(a_up.outstanding_blocks() + b_up.outstanding_blocks(), 0u);
  EXPECT_EQ(a_up.mismatches() + b_up.mismatches(), 0u);
}

// ---- Search and comparison -----------------------------------------------

TEST(String, FindAndRfindMatchStdString) {
  const std::string hay("abcabcab\0cab\0", 13);
  pmr_string s;
  ASSERT_TRUE(pmr_string_init_bytes(&s, hay.data(), hay.size(), nullptr));
  const std::vector<std::string> needles = {"",
                                            "a",
                                            "b",
                                            "c",
                                            "ab",
                                            "abc",
                                            "cab",
                                            "bca",
                                            std::string("\0", 1),
                                            std::string("b\0c", 3),
                                            std::string("ab\0", 3),
                                            "x",
                                            "abcabcabcabcabcabc"};
  for (const std::string& nd : needles) {
    for (size_t pos = 0; pos <= hay.size() + 2; ++pos) {
      EXPECT_EQ(pmr_string_find(&s, nd.data(), nd.size(), pos),
                hay.find(nd, pos))
          << "find '" << nd << "' from " << pos;
      EXPECT_EQ(pmr_string_rfind(&s, nd.data(), nd.size(), pos),
                hay.rfind(nd, pos))
          << "rfind '" << nd << "' from " << pos;
    }
    EXPECT_EQ(pmr_string_rfind(&s, nd.data(), nd.size(), PMR_STRING_NPOS),
              hay.rfind(nd));
  }
  EXPECT_EQ(pmr_string_find_cstr(&s, "ca", 0), 2u);
  EXPECT_EQ(pmr_string_find_cstr(&s, "zz", 0), PMR_STRING_NPOS);
  EXPECT_EQ(pmr_string_find_char(&s, '\0', 0), 8u);
  EXPECT_EQ(pmr_string_find_char(&s, 'c', 3), 5u);
  EXPECT_EQ(pmr_string_rfind_cstr(&s, "ab", PMR_STRING_NPOS), 10u);
  EXPECT_EQ(pmr_string_rfind_char(&s, 'a', 9), 6u);
  EXPECT_EQ(pmr_string_rfind_char(&s, 'z', PMR_STRING_NPOS), PMR_STRING_NPOS);
  EXPECT_EQ(pmr_string_find_cstr(&s, nullptr, 4), 4u);
  pmr_string_destroy(&s);
  pmr_string e;
  pmr_string_init(&e, nullptr);
  EXPECT_EQ(pmr_string_find_cstr(&e, "", 0), 0u);
  EXPECT_EQ(pmr_string_rfind_cstr(&e, "", 5), 0u);
  EXPECT_EQ(pmr_string_find_cstr(&e, "a", 0), PMR_STRING_NPOS);
  EXPECT_EQ(pmr_string_rfind_cstr(&e, "a", 0), PMR_STRING_NPOS);
  pmr_string_destroy(&e);
}

int Sign(int x) { return (x > 0) - (x < 0); }

TEST(String, CompareMatchesStdString) {
  const std::vector<std::string> words = {"",
                                          "a",
                                          "ab",
                                          "abc",
                                          "b",
                                          std::string("a\0", 2),
                                          std::string("a\0b", 3),
                                          "\xff",
                                          "\x7f",
                                          kLong,
                                          kLong + "!"};
  for (const std::string& x : words) {
    for (const std::string& y : words) {
      pmr_string a, b;
      ASSERT_TRUE(pmr_string_init_bytes(&a, x.data(), x.size(), nullptr));
      ASSERT_TRUE(pmr_string_init_bytes(&b, y.data(), y.size(), nullptr));
      int want = Sign(x.compare(y));
      EXPECT_EQ(pmr_string_compare(&a, &b), want);
      EXPECT_EQ(pmr_string_compare_bytes(&a, y.data(), y.size()), want);
      EXPECT_EQ(pmr_string_equal(&a, &b), x == y);
      if (y.find('\0') == std::string::npos) {
        EXPECT_EQ(pmr_string_compare_cstr(&a, y.c_str()), want);
      }
      pmr_string_destroy(&a);
      pmr_string_destroy(&b);
    }
  }
  pmr_string e;
  pmr_string_init(&e, nullptr);
  EXPECT_EQ(pmr_string_compare_cstr(&e, nullptr), 0);
  pmr_string_destroy(&e);
}

TEST(String, HashDependsOnlyOnTheContents) {
  pmr_string a, b, c;
  ASSERT_TRUE(pmr_string_init_cstr(&a, "short", nullptr));
  ASSERT_TRUE(pmr_string_init_cstr(&b, "short", nullptr));
  ASSERT_TRUE(pmr_string_reserve(&b, 100));  // long form, same contents
  ASSERT_TRUE(pmr_string_init_bytes(&c, "short\0", 6, nullptr));
  EXPECT_EQ(pmr_string_hash(&a), pmr_string_hash(&b));
  EXPECT_NE(pmr_string_hash(&a), pmr_string_hash(&c));
  for (pmr_string* s : {&a, &b, &c}) pmr_string_destroy(s);
}

// ---- Capacity ---------------------------------------------------------------

TEST(String, ReserveAndShrinkToFit) {
  CountingResource up;
  pmr_string s;
  pmr_string_init(&s, up.get());
  ASSERT_TRUE(pmr_string_reserve(&s, 10));  // fits inline
  EXPECT_EQ(up.allocations(), 0u);
  ASSERT_TRUE(pmr_string_reserve(&s, 100));
  EXPECT_EQ(pmr_string_capacity(&s), 100u);
  EXPECT_EQ(up.calls().back().bytes, 101u);
  ASSERT_TRUE(pmr_string_append_cstr(&s, kLong.c_str()));
  ASSERT_TRUE(pmr_string_shrink_to_fit(&s));
  EXPECT_EQ(pmr_string_capacity(&s), kLong.size());
  EXPECT_EQ(Str(&s), kLong);
  ASSERT_TRUE(pmr_string_erase(&s, 5, PMR_STRING_NPOS));
  ASSERT_TRUE(pmr_string_shrink_to_fit(&s));  // back inline, block returned
  EXPECT_EQ(pmr_string_capacity(&s), PMR_STRING_INLINE_CAPACITY);
  EXPECT_EQ(Str(&s), "the q");
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  ASSERT_TRUE(pmr_string_shrink_to_fit(&s));  // inline: nothing to do
  EXPECT_FALSE(pmr_string_reserve(&s, SIZE_MAX));
  EXPECT_FALSE(pmr_string_reserve(&s, pmr_string_max_size() + 1));
  size_t calls = up.calls().size();
  EXPECT_FALSE(pmr_string_resize(&s, SIZE_MAX, 'x'));
  EXPECT_FALSE(pmr_string_append_bytes(&s, "x", SIZE_MAX));
  EXPECT_EQ(up.calls().size(), calls);  // refused before the resource
  EXPECT_EQ(Str(&s), "the q");
  pmr_string_destroy(&s);
  EXPECT_EQ(up.mismatches(), 0u);
}

TEST(String, GrowsInPlaceWhenTheResourceCan) {
  BumpResource bump;
  pmr_string s;
  pmr_string_init(&s, &bump.base);
  ASSERT_TRUE(pmr_string_append_cstr(&s, kLong.c_str()));
  const char* first = pmr_string_c_str(&s);
  for (int i = 0; i < 2000; ++i) ASSERT_TRUE(pmr_string_push_back(&s, 'z'));
  EXPECT_EQ(pmr_string_c_str(&s), first);
  EXPECT_EQ(bump.allocates, 1);
  EXPECT_EQ(bump.deallocates, 0);
  EXPECT_GT(bump.resize_successes, 3);
  ASSERT_TRUE(pmr_string_shrink_to_fit(&s));
  EXPECT_EQ(pmr_string_c_str(&s), first);
  EXPECT_EQ(bump.last_bytes, kLong.size() + 2000 + 1);
  EXPECT_EQ(Str(&s), kLong + std::string(2000, 'z'));
  pmr_string_destroy(&s);
}

// ---- Copies, moves, swap -------------------------------------------------

TEST(String, SubstrCopyMoveSwap) {
  CountingResource a_up, b_up;
  pmr_string a, b, c, d;
  ASSERT_TRUE(pmr_string_init_cstr(&a, kLong.c_str(), a_up.get()));
  ASSERT_TRUE(pmr_string_substr(&b, &a, 4, 5, b_up.get()));
  EXPECT_EQ(Str(&b), "quick");
  EXPECT_EQ(pmr_string_resource(&b), b_up.get());
  pmr_string_destroy(&b);
  ASSERT_TRUE(pmr_string_substr(&b, &a, 10, PMR_STRING_NPOS, b_up.get()));
  EXPECT_EQ(Str(&b), kLong.substr(10));
  pmr_string_destroy(&b);
  ASSERT_TRUE(pmr_string_substr(&b, &a, kLong.size(), 3, b_up.get()));
  EXPECT_EQ(Str(&b), "");
  pmr_string_destroy(&b);
  EXPECT_FALSE(pmr_string_substr(&b, &a, kLong.size() + 1, 3, b_up.get()));
  EXPECT_EQ(Str(&b), "");
  pmr_string_destroy(&b);

  ASSERT_TRUE(pmr_string_init_copy(&c, &a, b_up.get()));
  EXPECT_EQ(Str(&c), kLong);
  EXPECT_EQ(pmr_string_resource(&c), b_up.get());
  const char* data = pmr_string_c_str(&a);
  size_t allocs = a_up.allocations();
  pmr_string_init_move(&d, &a);
  EXPECT_EQ(pmr_string_c_str(&d), data);
  EXPECT_EQ(pmr_string_resource(&d), a_up.get());
  EXPECT_EQ(a_up.allocations(), allocs);
  EXPECT_EQ(Str(&a), "");
  pmr_string_swap(&c, &d);
  EXPECT_EQ(pmr_string_c_str(&c), data);
  EXPECT_EQ(pmr_string_resource(&c), a_up.get());
  EXPECT_EQ(pmr_string_resource(&d), b_up.get());
  // Inline strings swap and move too.
  ASSERT_TRUE(pmr_string_assign_cstr(&a, "tiny"));
  pmr_string_swap(&a, &d);
  EXPECT_EQ(Str(&a), kLong);
  EXPECT_EQ(Str(&d), "tiny");
  for (pmr_string* s : {&a, &b, &c, &d}) pmr_string_destroy(s);
  EXPECT_EQ(a_up.outstanding_blocks() + b_up.outstanding_blocks(), 0u);
  EXPECT_EQ(a_up.mismatches() + b_up.mismatches(), 0u);
}

TEST(String, MoveAssignTakesTheBlockOnlyFromAnEqualResource) {
  CountingResource up1, up2;
  {
    FriendlyResource f1(&up1), f2(&up1);
    pmr_string a, b;
    ASSERT_TRUE(pmr_string_init_cstr(&a, kLong.c_str(), &f1.base));
    ASSERT_TRUE(
        pmr_string_init_cstr(&b, "old value that is long enough", &f2.base));
    const char* data = pmr_string_c_str(&a);
    ASSERT_TRUE(pmr_string_move_assign(&b, &a));
    EXPECT_EQ(pmr_string_c_str(&b), data);
    EXPECT_EQ(pmr_string_resource(&b), &f2.base);
    EXPECT_EQ(Str(&a), "");
    EXPECT_TRUE(pmr_string_move_assign(&b, &b));
    pmr_string_destroy(&a);
    pmr_string_destroy(&b);
  }
  {
    pmr_string a, b;
    ASSERT_TRUE(pmr_string_init_cstr(&a, kLong.c_str(), up1.get()));
    pmr_string_init(&b, up2.get());
    ASSERT_TRUE(pmr_string_move_assign(&b, &a));
    EXPECT_EQ(Str(&b), kLong);
    EXPECT_EQ(pmr_string_resource(&b), up2.get());
    EXPECT_EQ(Str(&a), "");
    EXPECT_EQ(up1.outstanding_blocks(), 0u);  // the source gave its block back
    ASSERT_TRUE(pmr_string_assign_cstr(&a, "short"));
    ASSERT_TRUE(pmr_string_move_assign(&b, &a));
    EXPECT_EQ(Str(&b), "short");
    pmr_string_destroy(&a);
    pmr_string_destroy(&b);
  }
  EXPECT_EQ(up1.outstanding_blocks() + up2.outstanding_blocks(), 0u);
  EXPECT_EQ(up1.mismatches() + up2.mismatches(), 0u);
}

// ---- Failure injection ----------------------------------------------------

void InjectFailures(const std::string& initial,
                    const std::function<bool(pmr_string*)>& op,
                    const std::string& want) {
  for (size_t k = 0;; ++k) {
    ASSERT_LT(k, 20u) << "never succeeded";
    CountingResource up;
    pmr_string s;
    ASSERT_TRUE(
        pmr_string_init_bytes(&s, initial.data(), initial.size(), up.get()));
    State before = Capture(&s);
    size_t failed_before = up.failed_allocations();
    up.fail_after(k);
    bool ok = op(&s);
    up.never_fail();
    bool injected = up.failed_allocations() != failed_before;
    if (ok) {
      EXPECT_EQ(Str(&s), want) << "k=" << k;
    } else {
      EXPECT_TRUE(injected) << "failed with no allocation failure, k=" << k;
      EXPECT_TRUE(Capture(&s) == before) << "changed by a failed op, k=" << k;
    }
    CheckInvariants(&s);
    pmr_string_destroy(&s);
    EXPECT_EQ(up.outstanding_blocks(), 0u);
    EXPECT_EQ(up.mismatches(), 0u);
    if (ok && !injected) return;
  }
}

TEST(StringFailures, EveryAllocatingOperation) {
  // From the inline form (full) and from the long form.
  const std::string full(PMR_STRING_INLINE_CAPACITY, 'i');
  for (const std::string& init : {full, kLong}) {
    SCOPED_TRACE(init);
    InjectFailures(
        init, [](pmr_string* s) { return pmr_string_push_back(s, '!'); },
        init + "!");
    InjectFailures(
        init,
        [](pmr_string* s) {
          return pmr_string_append_cstr(
              s, "0123456789abcdefghijklmnopqrstuvwxyz0123456789");
        },
        init + "0123456789abcdefghijklmnopqrstuvwxyz0123456789");
    InjectFailures(
        init, [](pmr_string* s) { return pmr_string_append_string(s, s); },
        init + init);
    InjectFailures(
        init,
        [](pmr_string* s) { return pmr_string_append_format(s, "%0100d", 5); },
        init + std::string(99, '0') + "5");
    std::string big(400, 'f');
    InjectFailures(
        init,
        [&](pmr_string* s) {
          return pmr_string_append_format(s, "%s", big.c_str());
        },
        init + big);
    InjectFailures(
        init,
        [](pmr_string* s) {
          return pmr_string_insert_bytes(s, 3, pmr_string_c_str(s), 20);
        },
        init.substr(0, 3) + init.substr(0, 20) + init.substr(3));
    InjectFailures(
        init,
        [&](pmr_string* s) {
          return pmr_string_replace(s, 1, 2, kLong.data(), kLong.size());
        },
        init.substr(0, 1) + kLong + init.substr(3));
    InjectFailures(
        init, [](pmr_string* s) { return pmr_string_reserve(s, 500); }, init);
    InjectFailures(
        init, [](pmr_string* s) { return pmr_string_resize(s, 200, '-'); },
        init + std::string(200 - init.size(), '-'));
    InjectFailures(
        init,
        [&](pmr_string* s) {
          return pmr_string_assign_bytes(s, big.data(), 100);
        },
        big.substr(0, 100));
    InjectFailures(
        init,
        [&](pmr_string* s) {
          pmr_string src;
          pmr_string_init_bytes(&src, big.data(), big.size(),
                                pmr_malloc_resource());
          bool ok = pmr_string_copy_assign(s, &src);
          pmr_string_destroy(&src);
          return ok;
        },
        big);
    InjectFailures(
        init,
        [&](pmr_string* s) {
          pmr_string src;
          pmr_string_init_bytes(&src, big.data(), big.size(),
                                pmr_malloc_resource());
          bool ok = pmr_string_move_assign(s, &src);
          EXPECT_EQ(pmr_string_length(&src), ok ? 0u : big.size());
          pmr_string_destroy(&src);
          return ok;
        },
        big);
  }
  // Shrinking a long string to a smaller block.
  InjectFailures(
      kLong.substr(0, 30),  // capacity 46
      [](pmr_string* s) {
        bool ok = pmr_string_shrink_to_fit(s);
        if (ok) {
          EXPECT_EQ(pmr_string_capacity(s), 30u);
        }
        return ok;
      },
      kLong.substr(0, 30));
}

TEST(StringFailures, InitAndSubstrLeaveAValidEmptyString) {
  for (size_t k = 0;; ++k) {
    CountingResource up;
    pmr_string a, b, c;
    up.fail_after(k);
    bool ok1 = pmr_string_init_cstr(&a, kLong.c_str(), up.get());
    bool ok2 = pmr_string_init_copy(&b, &a, up.get());
    bool ok3 = pmr_string_substr(&c, &a, 1, 40, up.get());
    up.never_fail();
    EXPECT_EQ(Str(&a), ok1 ? kLong : "");
    EXPECT_EQ(Str(&b), ok2 ? Str(&a) : "");
    EXPECT_EQ(Str(&c), ok3 ? Str(&a).substr(1, 40) : "");
    for (pmr_string* s : {&a, &b, &c}) pmr_string_destroy(s);
    EXPECT_EQ(up.outstanding_blocks(), 0u);
    if (ok1 && ok2 && ok3) break;
  }
}

// ---- Random operations against std::string ---------------------------------

TEST(StringRandom, MatchesStdStringUnderRandomFailures) {
  std::mt19937 rng(2024);
  CountingResource up;
  pmr_string s, t;
  pmr_string_init(&s, up.get());
  pmr_string_init(&t, up.get());
  std::string oracle, oracle_t;
  auto random_bytes = [&](size_t n) {
    std::string r(n, '\0');
    for (char& c : r) c = static_cast<char>("ab\0cdXY"[rng() % 7]);
    return r;
  };
  size_t failures = 0;
  for (int step = 0; step < 6000; ++step) {
    bool arm = rng() % 5 == 0;
    if (arm) up.fail_after(0);
    State before = Capture(&s);
    std::string want = oracle;
    const size_t n = pmr_string_length(&s);
    bool ok = true;
    switch (rng() % 15) {
      case 0: {
        char c = static_cast<char>('a' + rng() % 26);
        ok = pmr_string_push_back(&s, c);
        want.push_back(c);
        break;
      }
      case 1:
      case 2: {
        std::string r = random_bytes(rng() % 30);
        ok = pmr_string_append_bytes(&s, r.data(), r.size());
        want += r;
        break;
      }
      case 3: {
        size_t pos = rng() % (n + 1);
        std::string r = random_bytes(rng() % 10);
        ok = pmr_string_insert_bytes(&s, pos, r.data(), r.size());
        want.insert(pos, r);
        break;
      }
      case 4: {
        size_t pos = rng() % (n + 1), k = rng() % 8;
        ok = pmr_string_erase(&s, pos, k);
        want.erase(pos, k);
        break;
      }
      case 5: {
        size_t pos = rng() % (n + 1), k = rng() % 8;
        std::string r = random_bytes(rng() % 12);
        ok = pmr_string_replace(&s, pos, k, r.data(), r.size());
        want.replace(pos, k, r);
        break;
      }
      case 6: {  // replace with a piece of itself
        size_t pos = rng() % (n + 1), k = rng() % 8;
        size_t off = rng() % (n + 1), m = rng() % (n - off + 1);
        std::string piece = oracle.substr(off, m);
        ok = pmr_string_replace(&s, pos, k, pmr_string_c_str(&s) + off, m);
        want.replace(pos, k, piece);
        break;
      }
      case 7: {
        size_t k = rng() % 60;
        ok = pmr_string_resize(&s, k, 'r');
        want.resize(k, 'r');
        break;
      }
      case 8:
        ok = pmr_string_reserve(&s, rng() % 120);
        break;
      case 9:
        ok = pmr_string_shrink_to_fit(&s);
        break;
      case 10: {
        unsigned x = rng() % 1000;
        ok = pmr_string_append_format(&s, "<%u>", x);
        want += "<" + std::to_string(x) + ">";
        break;
      }
      case 11:
        if (rng() % 3 == 0) {
          pmr_string_clear(&s);
          want.clear();
        } else {
          pmr_string_swap(&s, &t);
          std::swap(want, oracle_t);
          before = Capture(&s);
        }
        break;
      case 12:
        ok = pmr_string_copy_assign(&s, &t);
        want = oracle_t;
        break;
      case 13:
        if (n != 0) {
          ok = pmr_string_pop_back(&s);
          want.pop_back();
        }
        break;
      case 14: {
        std::string r = random_bytes(rng() % 3);
        size_t pos = rng() % (n + 2);
        ASSERT_EQ(pmr_string_find(&s, r.data(), r.size(), pos),
                  oracle.find(r, pos));
        ASSERT_EQ(pmr_string_rfind(&s, r.data(), r.size(), pos),
                  oracle.rfind(r, pos));
        break;
      }
    }
    up.never_fail();
    if (ok) {
      oracle = want;
    } else {
      ASSERT_TRUE(arm) << "step " << step;
      ++failures;
      ASSERT_TRUE(Capture(&s) == before) << "step " << step;
    }
    ASSERT_EQ(Str(&s), oracle) << "step " << step;
    CheckInvariants(&s);
  }
  EXPECT_GT(failures, 20u);
  pmr_string_destroy(&s);
  pmr_string_destroy(&t);
  EXPECT_EQ(up.outstanding_blocks(), 0u);
  EXPECT_EQ(up.mismatches(), 0u);
}

}  // namespace

namespace {

// Found by the string fuzz target: a long formatted append reserved exactly,
// so repeated long appends reallocated every time. It grows like any edit.
TEST(StringFormatGrowth, LongFormattedAppendsDoubleTheCapacity) {
  pmr_string s;
  pmr_string_init(&s, nullptr);
  ASSERT_TRUE(pmr_string_reserve(&s, 422));
  ASSERT_TRUE(pmr_string_append_format(&s, "%*u", 600, 1u));
  EXPECT_EQ(pmr_string_length(&s), 600u);
  EXPECT_EQ(pmr_string_capacity(&s), 844u);  // max(2 x 422, 600)
  ASSERT_TRUE(pmr_string_append_format(&s, "%*u", 300, 2u));
  EXPECT_EQ(pmr_string_capacity(&s), 1688u);  // 900 needed: doubled again
  pmr_string_destroy(&s);
}

}  // namespace
