// zlib compresses and decompresses real text (the GPL-3 from Debian's
// base-files) with zalloc/zfree served by every resource of pmr-c through a
// pmr_malloc_adapter: exact round trip, every byte given back.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "examples/example_resource.h"
#include "examples/zlib/zlib_roundtrip.h"

namespace {

std::vector<unsigned char> ReadFile(const char* path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<unsigned char>(std::istreambuf_iterator<char>(in), {});
}

class ZlibExampleTest : public ::testing::TestWithParam<const char*> {};

TEST_P(ZlibExampleTest, RoundTripOfTheGplLeavesNothing) {
  std::vector<unsigned char> text =
      ReadFile("/usr/share/common-licenses/GPL-3");
  ASSERT_GT(text.size(), 30000u) << "Debian's base-files installs the GPL-3";
  example_resource e;
  ASSERT_TRUE(example_resource_open(&e, GetParam()));
  size_t packed =
      zlib_roundtrip(example_resource_get(&e), text.data(), text.size());
  EXPECT_GT(packed, 0u);
  EXPECT_LT(packed, text.size() / 2);  // English text compresses well
  pmr_statistics_stats s = pmr_statistics_get_stats(&e.counter);
  // zlib's deflate state and window (hundreds of KiB) came through the
  // adapter, as well as the two buffers.
  EXPECT_GE(s.allocations, 6u);
  EXPECT_GT(s.peak_bytes_in_use, 256u * 1024);
  EXPECT_EQ(s.blocks_in_use, 0u);
  EXPECT_EQ(s.bytes_in_use, 0u);
  EXPECT_EQ(example_resource_close(&e), 0u);
}

TEST(ZlibExample, OutOfMemoryFailsCleanly) {
  pmr_debug_resource d;
  ASSERT_TRUE(pmr_debug_resource_init(&d, nullptr, pmr_malloc_resource()));
  std::vector<unsigned char> text(100000, 'a');
  for (uint64_t n = 1; n <= 6; ++n) {
    pmr_debug_resource_fail_nth(&d, n);
    EXPECT_EQ(zlib_roundtrip(&d.base, text.data(), text.size()), 0u) << n;
    EXPECT_EQ(pmr_debug_resource_get_stats(&d).blocks_in_use, 0u) << n;
  }
  pmr_debug_resource_stop_failing(&d);
  EXPECT_GT(zlib_roundtrip(&d.base, text.data(), text.size()), 0u);
  EXPECT_EQ(pmr_debug_resource_destroy(&d), 0u);
}

std::string Name(const ::testing::TestParamInfo<const char*>& info) {
  return info.param;
}

INSTANTIATE_TEST_SUITE_P(EveryResource, ZlibExampleTest,
                         ::testing::ValuesIn(example_resource_names,
                                             example_resource_names + 7),
                         Name);

}  // namespace
