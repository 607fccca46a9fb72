#!/usr/bin/env bash
# For a machine with a GPU (the `device` tool): builds the runtime alone
# (no MLIR needed), runs the NCCL tests with one rank per GPU, the runtime's
# own ctest suite, and an NCCL bandwidth sweep on device buffers. Finishes
# well within 5 minutes. Results land in ${OUT:-gpu-results}/. Every step
# runs; the script exits non-zero when any of them failed (and says which).
# What it does not do yet: compiled steps use host buffers, so no model
# runs on the GPU here (issue 36).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${OUT:-$root/gpu-results}
mkdir -p "$out"
exec > >(tee "$out/gpu-check.log") 2>&1

echo "== machine"; nvidia-smi || echo "nvidia-smi not available"
command -v mpirun >/dev/null || {
  apt-get update -qq && apt-get install -y -qq --no-install-recommends \
    cmake ninja-build g++ libopenmpi-dev openmpi-bin libgtest-dev; }
build=$out/build-runtime
cmake -G Ninja -S "$root/runtime" -B "$build" -DCMAKE_BUILD_TYPE=Release \
  >"$out/configure.log" 2>&1 || { cat "$out/configure.log"; exit 1; }
ninja -C "$build" || exit 1

mpirun_args=(--oversubscribe --bind-to none)
[ "$(id -u)" -eq 0 ] && mpirun_args+=(--allow-run-as-root)
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
[ "$gpus" -ge 1 ] || gpus=1

echo "== NCCL tests (1 rank per GPU, $gpus GPUs)"
failed=()
step() { # step NAME COMMAND...: runs it, records a failure
  local name=$1; shift
  "$@"; local rc=$?
  echo "$name: exit $rc"
  [ "$rc" -eq 0 ] || failed+=("$name (exit $rc)")
}
step "NCCL tests" timeout 120 mpirun "${mpirun_args[@]}" -np "$gpus" \
  "$build/test/RuntimeNcclTests" --gtest_output="json:$out/nccl_tests.json"
# A skip is no pass on the machine this check is for.
if grep -q '"result": "SKIPPED"' "$out/nccl_tests.json" 2>/dev/null ||
   [ ! -s "$out/nccl_tests.json" ]; then
  failed+=("NCCL tests skipped or wrote no report (no usable GPU?)")
fi
echo "== ctest"
step "ctest" bash -c "cd '$build' && timeout 120 ctest --output-on-failure"

echo "== NCCL bandwidth (runtime, device buffers)"
step "NCCL bandwidth" timeout 120 mpirun "${mpirun_args[@]}" -np "$gpus" \
  -x DIST_BACKEND=nccl "$build/test/NcclBandwidth" --json "$out/nccl_bandwidth.json"
if [ "${#failed[@]}" -gt 0 ]; then
  printf 'gpu-check FAILED: %s\n' "${failed[@]}"
  exit 1
fi
echo "gpu-check passed; results in $out"
