#!/usr/bin/env bash
# Installs the Debian packages dist needs, only when something is missing.
# Idempotent: a second run on a provisioned machine does no apt work at all.
set -euo pipefail

# Arguments name extra packages (e.g. scripts/fuzz.sh's sanitizer runtimes).
# python3-torch (Debian's PyTorch 1.13, CPU) is the PyTorch front door's
# tracer and its reference (test/Torch, docs/PyTorch.md).
pkgs=(cmake ninja-build g++ python3 lld llvm-22-dev llvm-22-tools libmlir-22-dev
      mlir-22-tools clang-22 libopenmpi-dev openmpi-bin libgtest-dev python3-psutil python3-numpy
      libopenblas-serial-dev python3-torch "$@")

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
    missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
