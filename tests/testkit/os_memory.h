// What the OS holds of a range of memory, for tests of memory given back:
// resident pages by mincore (Linux and the BSDs).
#ifndef PMR_TESTS_TESTKIT_OS_MEMORY_H
#define PMR_TESTS_TESTKIT_OS_MEMORY_H

#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pmrtest {

// Resident OS pages in [p, p + n) (whole OS pages), -1 when some part of it
// is not mapped, -2 on another error. errno untouched.
inline long Resident(uintptr_t p, size_t n) {
  const uintptr_t os = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  uintptr_t lo = p & ~(os - 1), hi = (p + n + os - 1) & ~(os - 1);
  std::vector<unsigned char> v((hi - lo) / os);
  int saved = errno;
  int rc = mincore(reinterpret_cast<void*>(lo), hi - lo, v.data());
  int err = errno;
  errno = saved;
  if (rc != 0) return err == ENOMEM ? -1 : -2;
  long r = 0;
  for (unsigned char c : v) r += c & 1;
  return r;
}

inline long Resident(const void* p, size_t n) {
  return Resident(reinterpret_cast<uintptr_t>(p), n);
}

}  // namespace pmrtest

#endif  // PMR_TESTS_TESTKIT_OS_MEMORY_H
