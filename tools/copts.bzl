"""Compiler flags shared by every target of the project."""

# The library: strict C11, every warning an error.
PMR_C_COPTS = [
    "-std=c11",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-Wpedantic",
    "-Wshadow",
    "-Wstrict-prototypes",
    "-Wmissing-prototypes",
    "-Wcast-align",
    "-Wpointer-arith",
    "-Wvla",
    # Leaf fast paths (pool and arena hooks) skip the frame-pointer set-up;
    # other functions keep frame pointers for profilers.
    "-momit-leaf-frame-pointer",
    # POSIX (posix_memalign, pthreads) on top of strict C11.
    "-D_POSIX_C_SOURCE=200809L",
]

# Tests and benchmarks (C++17).
PMR_CXX_COPTS = [
    "-Wall",
    "-Wextra",
    "-Werror",
    "-Wno-sign-compare",
]
