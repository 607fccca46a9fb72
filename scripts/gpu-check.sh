#!/usr/bin/env bash
# For a machine with a GPU (the `device` tool): builds the runtime alone
# (no MLIR needed), runs the NCCL tests and the runtime-vs-MPI benchmark,
# and an NCCL bandwidth sweep. Finishes well within 5 minutes.
# Results land in ${OUT:-gpu-results}/.
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
timeout 120 mpirun "${mpirun_args[@]}" -np "$gpus" \
  "$build/test/RuntimeNcclTests"; echo "nccl test exit: $?"
echo "== ctest"
(cd "$build" && timeout 120 ctest --output-on-failure)

echo "== NCCL bandwidth (runtime, device buffers)"
timeout 120 mpirun "${mpirun_args[@]}" -np "$gpus" -x DIST_BACKEND=nccl \
  "$build/test/NcclBandwidth" --json "$out/nccl_bandwidth.json"
echo "gpu-check done; results in $out"
