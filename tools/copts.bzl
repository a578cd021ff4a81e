"""Compiler flags shared by every target of the project.

Warnings are errors only in this repository's own builds: .bazelrc adds
-Werror (a consumer does not inherit .bazelrc), so a newer compiler's new
warning never breaks a user's build of the library.
"""

# The library: strict C11, every warning on.
PMR_C_COPTS = [
    "-std=c11",
    "-Wall",
    "-Wextra",
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
] + select({
    # An allocator at -O0 is a different allocator: Bazel's default mode
    # (fastbuild) still optimises the library. -c dbg keeps -O0, -c opt its -O2.
    "//tools:fastbuild": ["-O2"],
    "//conditions:default": [],
})

# Tests and benchmarks (C++17).
PMR_CXX_COPTS = [
    "-Wall",
    "-Wextra",
    "-Wno-sign-compare",
]

# What the build settings of the root BUILD.bazel compile in (see README,
# "Use it from your build"). `defines` propagate to every dependent, so code
# that includes a header sees the same configuration as the library.
PMR_VARIANT_DEFINES = select({
    "//:debug_on": ["PMR_DEBUG=1"],
    "//conditions:default": [],
}) + select({
    "//:secure_on": ["PMR_SECURE=1"],
    "//conditions:default": [],
}) + select({
    "//:valgrind_on": ["PMR_VALGRIND=1"],
    "//conditions:default": [],
}) + select({
    "//:portable_tls_on": ["PMR_PORTABLE_TLS=1"],
    "//conditions:default": [],
})
