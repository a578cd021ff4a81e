#!/usr/bin/env bash
# Installs what pmr-c needs to build, test and benchmark, from Debian packages.
# Idempotent: installs only what is missing and says what it installs; on a
# ready machine it installs nothing and returns in a second or two.
set -euo pipefail

# package -> a file it provides (checked instead of asking dpkg, which is slower
# and would miss equivalent installs).
PACKAGES=(
  "bazel-bootstrap:/usr/bin/bazel"
  "bazel-platforms:/usr/share/bazel/tools/platforms/BUILD"
  "g++:/usr/bin/g++"
  "libgtest-dev:/usr/include/gtest/gtest.h"
  "libgmock-dev:/usr/include/gmock/gmock.h"
  "libbenchmark-dev:/usr/include/benchmark/benchmark.h"
  "libabsl-dev:/usr/include/absl/container/flat_hash_map.h"
  "libglib2.0-dev:/usr/include/glib-2.0/glib.h"
  "libjemalloc-dev:/usr/include/jemalloc/jemalloc.h"
  "libgoogle-perftools-dev:/usr/include/gperftools/tcmalloc.h"
  "libmimalloc-dev:/usr/include/mimalloc.h"
  "valgrind:/usr/bin/valgrind"
  "clang-format:/usr/bin/clang-format"
  # CI builds and tests with clang too; examples/ links Lua, zlib and SQLite
  # (benchmark Q runs SQLite too); the CMake build is tested by configuring,
  # installing and consuming it.
  "clang:/usr/bin/clang"
  "liblua5.4-dev:/usr/include/lua5.4/lua.h"
  "zlib1g-dev:/usr/include/zlib.h"
  "libsqlite3-dev:/usr/include/sqlite3.h"
  "cmake:/usr/bin/cmake"
  "pkg-config:/usr/bin/pkg-config"
  # Benchmark SYS runs these programs unchanged under each malloc. It starts
  # its own redis-server on a free port; the service the package may start
  # (port 6379) is not used.
  "redis-server:/usr/bin/redis-server"
  "redis-tools:/usr/bin/redis-benchmark"
  "sqlite3:/usr/bin/sqlite3"
  "lua5.4:/usr/bin/lua5.4"
  "python3-minimal:/usr/bin/python3"
  "xz-utils:/usr/bin/xz"
)

missing=()
for entry in "${PACKAGES[@]}"; do
  pkg=${entry%%:*}
  file=${entry#*:}
  [ -e "$file" ] || missing+=("$pkg")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: everything pmr-c needs is installed."
  exit 0
fi

manual() {
  echo "setup: cannot install automatically: $1" >&2
  echo "setup: please install these Debian (bookworm) packages by hand:" >&2
  echo "         ${missing[*]}" >&2
  exit 1
}

[ -r /etc/debian_version ] || manual "this is not a Debian system"
command -v apt-get >/dev/null 2>&1 || manual "apt-get was not found"
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO=sudo
  else
    manual "not running as root (and no password-less sudo)"
  fi
else
  SUDO=
fi

echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq || manual "apt-get update failed"
$SUDO apt-get install -y -qq "${missing[@]}" >/dev/null ||
  manual "apt-get install failed"
echo "setup: done."
