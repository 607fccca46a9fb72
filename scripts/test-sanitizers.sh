#!/usr/bin/env bash
# Builds dist with AddressSanitizer + UndefinedBehaviorSanitizer in
# build-asan/ (-DDIST_ENABLE_SANITIZERS=ON) and runs the whole test suite,
# mpirun tests included, under it. Any sanitizer report fails its test:
# UBSan is built with -fno-sanitize-recover, ASan and LSan exit non-zero.
# Suppressions (only libraries that are not ours) are in
# scripts/sanitizers/lsan.supp; docs/Reliability.md explains each.
# Arguments go to ctest (e.g. -R parity).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build-asan}
"$root/scripts/install-deps.sh" libclang-rt-22-dev
BUILD_DIR=$build DIST_CMAKE_ARGS="-DDIST_ENABLE_SANITIZERS=ON ${DIST_CMAKE_ARGS:-}" \
  "$root/scripts/build.sh"
# The slow unwinder: OpenMPI is built without frame pointers, and the fast
# one stops inside it, leaving stacks no suppression can match.
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:fast_unwind_on_malloc=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$root/scripts/sanitizers/lsan.supp:print_suppressions=0:fast_unwind_on_malloc=0
cd "$build"
ctest --output-on-failure "$@"
