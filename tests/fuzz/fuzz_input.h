// Decodes a fuzzer's bytes into operation codes and arguments. Running out of
// input yields zeros, so every input is a valid program.
#ifndef PMR_TESTS_FUZZ_FUZZ_INPUT_H
#define PMR_TESTS_FUZZ_FUZZ_INPUT_H

#include <cstddef>
#include <cstdint>

namespace pmrfuzz {

class Input {
 public:
  Input(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}
  bool done() const { return p_ >= end_; }
  uint8_t byte() { return p_ < end_ ? *p_++ : 0; }
  uint16_t u16() { return static_cast<uint16_t>(byte() | byte() << 8); }
  uint32_t u32() { return u16() | static_cast<uint32_t>(u16()) << 16; }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

// Aborts with a message: libFuzzer records the input as a crash, and the
// corpus replay test fails.
[[noreturn]] void Fail(const char* what, size_t detail = 0);

}  // namespace pmrfuzz

#define PMR_FUZZ_CHECK(cond, detail)               \
  do {                                             \
    if (!(cond)) ::pmrfuzz::Fail(#cond, (detail)); \
  } while (0)

#endif  // PMR_TESTS_FUZZ_FUZZ_INPUT_H
