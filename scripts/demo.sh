#!/usr/bin/env bash
# The main job on the bundled example: build, then run dist-opt on every
# example and print what it produces.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
"$root/scripts/build.sh" dist-opt >/dev/null

for example in "$root"/examples/*.mlir; do
  echo "===== $(basename "$example"): verified and printed by dist-opt ====="
  "$build/bin/dist-opt" "$example"
done
