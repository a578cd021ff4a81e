#!/usr/bin/env bash
# Builds, runs and tests tests/consumer, a workspace that uses pmr-c with the
# README's two WORKSPACE lines, offline, in its own Bazel server (shut down at
# the end). Checks that:
#   - the program builds and runs (gcc), and its test passes;
#   - --@pmr_c//:debug turns the pools' checks on (the double free is reported);
#   - pmr-c's compile commands carry no -Werror (that is pmr-c's own
#     .bazelrc), and the library is optimised (-O2) in Bazel's default mode;
#   - with clang it builds (pmr-c's sources may warn there).
# Prints "consumer: ok" or the first failure; exits non-zero on failure.
set -uo pipefail
cd "$(dirname "$0")"
opts=(--symlink_prefix=/ --noshow_progress)
fail() { echo "consumer: FAIL: $*"; bazel shutdown >/dev/null 2>&1; exit 1; }

out=$(bazel run "${opts[@]}" //:hello 2>/dev/null) || fail "bazel run //:hello"
echo "consumer: $out"
grep -q "sum 500500, string length 60, misuse reports 0" <<<"$out" || fail "unexpected output"
bazel test "${opts[@]}" //:hello_test >/dev/null 2>&1 || fail "bazel test //:hello_test"

out=$(bazel run "${opts[@]}" --@pmr_c//:debug //:hello 2>/dev/null) || fail "bazel run --@pmr_c//:debug //:hello"
echo "consumer (--@pmr_c//:debug): $out"
grep -q "misuse reports 1" <<<"$out" || fail "the debug build did not report the double free"

cmds=$(bazel aquery "${opts[@]}" 'mnemonic("CppCompile", @pmr_c//mem_resource)' 2>/dev/null) ||
  fail "bazel aquery"
grep -q -- "-Werror" <<<"$cmds" && fail "-Werror reaches the consumer's build of pmr-c"
grep -q -- "-O2" <<<"$cmds" || fail "pmr-c is not optimised in fastbuild"
echo "consumer: pmr-c compiles with -O2 and without -Werror here"

out=$(bazel run "${opts[@]}" --repo_env=CC=clang //:hello 2>/dev/null) || fail "bazel run --repo_env=CC=clang //:hello"
echo "consumer (clang): $out"

bazel shutdown >/dev/null 2>&1
echo "consumer: ok"
