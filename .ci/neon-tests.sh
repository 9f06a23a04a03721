#!/usr/bin/env bash
# Cross-builds the kernels and their tests for aarch64 (NEON + dotprod) and runs them under
# qemu-user. Only the kernels: tests/kernels is configured as a project of its own, so
# fmt/spdlog/CLI11/xxhash (absent from a cross sysroot) are not needed.
#   .ci/neon-tests.sh            # build in build-neon/, run ctest
#   JOBS=2 .ci/neon-tests.sh     # parallel build
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v aarch64-linux-gnu-g++ >/dev/null || need+=(g++-aarch64-linux-gnu)
command -v qemu-aarch64-static >/dev/null || need+=(qemu-user-static)
[ -f /usr/src/googletest/CMakeLists.txt ] || need+=(googletest)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update
  $sudo apt-get install -y --no-install-recommends "${need[@]}"
fi

cmake -S tests/kernels -B build-neon \
  -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/toolchains/aarch64-linux-gnu.cmake" \
  -DCMAKE_BUILD_TYPE=Release
nice -n 10 cmake --build build-neon -j "${JOBS:-1}"
cd build-neon
# qemu is slow: generous timeouts. POCKET_SHARED (if set) passes through to the tests.
ctest --output-on-failure --timeout 600 "$@"
