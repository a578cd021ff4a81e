// A C++ program in another workspace: std::pmr containers over a pmr-c pool,
// a C container over a std resource, and a round trip.
//   hello_cxx           prints what it did
//   hello_cxx --check   the same, exits non-zero if a result is wrong
#include <cstdio>
#include <cstring>
#include <memory_resource>
#include <string>
#include <vector>

// PMR_C_CXX_HEADER: the spelling under test, e.g. <pmr-c/cxx/pmr_cxx.hpp>
// for an installed pmr-c (tests/cmake/run.sh); "cxx/pmr_cxx.hpp" by default.
#ifdef PMR_C_CXX_HEADER
#include PMR_C_CXX_HEADER
#else
#include "cxx/pmr_cxx.hpp"
#endif

int main(int argc, char **argv) {
  const bool check = argc > 1 && std::strcmp(argv[1], "--check") == 0;
  pmrc::synchronized_pool pool;
  long sum = 0;
  std::size_t text = 0;
  {
    std::pmr::vector<int> v{&pool};
    for (int i = 1; i <= 1000; ++i) v.push_back(i);
    for (int x : v) sum += x;
    std::pmr::string s{"pooled from C++, ", &pool};
    for (int i = 0; i < 4; ++i) s += "and more ";
    text = s.size();
  }

  std::pmr::monotonic_buffer_resource arena;
  pmrc::c_resource c = pmrc::from_std(&arena);
  pmr_vector cv;
  bool ok = pmr_vector_init(&cv, sizeof(int), alignof(int), c.get());
  for (int i = 0; ok && i < 100; ++i) ok = pmr_vector_push_back(&cv, &i);
  const std::size_t c_size = pmr_vector_size(&cv);
  pmr_vector_destroy(&cv);

  pmrc::c_resource back = pmrc::from_std(&pool);
  const bool round_trip = back.get() == pool.c_resource();
  std::printf(
      "pmr-c %s from C++: sum %ld, string length %zu, C vector %zu, "
      "round trip %s\n",
      PMR_VERSION_STRING, sum, text, c_size, round_trip ? "yes" : "no");
  if (check && (sum != 500500 || text != 53 || c_size != 100 || !round_trip))
    return 1;
  return ok ? 0 : 1;
}
