#!/usr/bin/env bash
# Builds, runs and tests tests/consumer, a workspace that uses pmr-c with the
# README's two WORKSPACE lines, offline, in its own Bazel server (shut down at
# the end). Checks that:
#   - the program builds and runs (gcc), and its test passes; so does the
#     C++ one over @pmr_c//cxx:pmr_cxx (hello_cxx.cc);
#   - --@pmr_c//:debug turns the pools' checks on (the double free is reported);
#   - the secure drop-in (@pmr_c//malloc:libpmr_malloc_secure) builds;
#   - pmr-c's compile commands carry no -Werror (that is pmr-c's own
#     .bazelrc), and the library is optimised (-O2) in Bazel's default mode;
#   - with clang it builds (pmr-c's sources may warn there), C and C++;
#   - with the .bazelrc line the README gives consumers, Bazel's stderr has no
#     linux-sandbox noise ("linux-sandbox-pid1.cc ... remount ro"): stderr is
#     kept, checked, and shown on failure, never thrown away.
# Prints "consumer: ok" or the first failure; exits non-zero on failure.
set -uo pipefail
cd "$(dirname "$0")"
opts=(--symlink_prefix=/ --noshow_progress)
err=$(mktemp)
trap 'rm -f "$err"' EXIT
fail() {
  echo "consumer: FAIL: $*"
  [ -s "$err" ] && tail -n 30 "$err"
  bazel shutdown >/dev/null 2>&1
  exit 1
}
# Bazel's stderr of the last command: no sandbox noise in it; what is not
# Bazel's own progress (compiler warnings, errors) is passed on.
quiet() {
  if grep -q 'linux-sandbox' "$err"; then
    fail "$1: Bazel printed $(grep -c 'linux-sandbox' "$err") linux-sandbox lines (.bazelrc)"
  fi
  grep -vE '^(INFO: |Loading|Analyzing|Target |  bazel-|  /)' "$err" >&2 || true
}
grep -qx 'build --spawn_strategy=processwrapper-sandbox' .bazelrc ||
  fail ".bazelrc lacks the README's line"
grep -qF 'build --spawn_strategy=processwrapper-sandbox' ../../README.md ||
  fail "the README does not give consumers the .bazelrc line"

out=$(bazel run "${opts[@]}" //:hello 2>"$err") || fail "bazel run //:hello"
quiet "bazel run //:hello"
echo "consumer: $out"
grep -q "sum 500500, string length 60, misuse reports 1" <<<"$out" || fail "unexpected output"
bazel test "${opts[@]}" //:hello_test >/dev/null 2>"$err" || fail "bazel test //:hello_test"
quiet "bazel test //:hello_test"

out=$(bazel run "${opts[@]}" //:hello_cxx 2>"$err") || fail "bazel run //:hello_cxx"
quiet "bazel run //:hello_cxx"
echo "consumer (@pmr_c//cxx:pmr_cxx): $out"
grep -q "sum 500500, string length 53, C vector 100, round trip yes" <<<"$out" ||
  fail "unexpected output of hello_cxx"
bazel test "${opts[@]}" //:hello_cxx_test >/dev/null 2>"$err" || fail "bazel test //:hello_cxx_test"
quiet "bazel test //:hello_cxx_test"

out=$(PMR_MALLOC=pool bazel run "${opts[@]}" --action_env=PMR_MALLOC //:dropin_hello 2>"$err") ||
  fail "bazel run //:dropin_hello"
quiet "bazel run //:dropin_hello"
echo "consumer (@pmr_c//malloc:dropin): $out"
grep -q "drop-in malloc: engine" <<<"$out" || fail "unexpected output of dropin_hello"

# The secure drop-in, built from here (its transition names pmr-c's flag).
bazel build "${opts[@]}" @pmr_c//malloc:libpmr_malloc_secure 2>"$err" ||
  fail "bazel build @pmr_c//malloc:libpmr_malloc_secure"
quiet "bazel build @pmr_c//malloc:libpmr_malloc_secure"
echo "consumer: @pmr_c//malloc:libpmr_malloc_secure builds"

out=$(bazel run "${opts[@]}" --@pmr_c//:debug //:hello 2>"$err") || fail "bazel run --@pmr_c//:debug //:hello"
quiet "bazel run --@pmr_c//:debug //:hello"
echo "consumer (--@pmr_c//:debug): $out"
grep -q "misuse reports 1" <<<"$out" || fail "the debug build did not report the double free"

cmds=$(bazel aquery "${opts[@]}" 'mnemonic("CppCompile", @pmr_c//mem_resource)' 2>"$err") ||
  fail "bazel aquery"
grep -q -- "-Werror" <<<"$cmds" && fail "-Werror reaches the consumer's build of pmr-c"
grep -q -- "-O2" <<<"$cmds" || fail "pmr-c is not optimised in fastbuild"
echo "consumer: pmr-c compiles with -O2 and without -Werror here"

out=$(bazel run "${opts[@]}" --repo_env=CC=clang //:hello 2>"$err") || fail "bazel run --repo_env=CC=clang //:hello"
quiet "bazel run --repo_env=CC=clang //:hello"
echo "consumer (clang): $out"
out=$(bazel run "${opts[@]}" --repo_env=CC=clang //:hello_cxx 2>"$err") ||
  fail "bazel run --repo_env=CC=clang //:hello_cxx"
quiet "bazel run --repo_env=CC=clang //:hello_cxx"
echo "consumer (clang, C++): $out"

bazel shutdown >/dev/null 2>&1
echo "consumer: ok"
