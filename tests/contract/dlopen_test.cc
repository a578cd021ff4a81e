// A shared library that contains pmr-c and is loaded with dlopen after
// start-up works: its thread-locals fit the static TLS reserve
// (resources/internal/platform.h), in the default build and with
// --config=portable_tls.
#include <dlfcn.h>
#include <gtest/gtest.h>

namespace {

TEST(Dlopen, ALibraryContainingPmrLoadsAndRunsThreads) {
  void* h = dlopen("tests/libpmr_dlopen_plugin.so", RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << dlerror();
  using Run = int (*)();
  Run run = reinterpret_cast<Run>(dlsym(h, "pmr_plugin_run"));
  ASSERT_NE(run, nullptr) << dlerror();
  EXPECT_EQ(run(), 0);
  // Not closed: a thread that used a thread cache runs the library's code
  // when it exits (resources/README.md).
}

}  // namespace
