#!/usr/bin/env bash
# Installs missing packages, configures (once) and builds dist.
# Environment: BUILD_DIR (default build), BUILD_TYPE (default Release),
# DIST_CMAKE_ARGS (extra cmake arguments, e.g. -DDIST_ENABLE_UNITTESTS=OFF).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}

"$root/scripts/install-deps.sh"

if [ ! -f "$build/build.ninja" ]; then
  # shellcheck disable=SC2086
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DMLIR_LINK_MLIR_DYLIB=ON -DLLVM_USE_LINKER=lld \
    ${DIST_CMAKE_ARGS:-} >"$build.configure.log" 2>&1 ||
    { cat "$build.configure.log"; exit 1; }
fi
ninja -C "$build" "$@"
