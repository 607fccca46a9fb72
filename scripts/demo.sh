#!/usr/bin/env bash
# The main job on the bundled example: build, then for every example print
# what the no_sync pipeline makes of it and what it saves in communication.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
"$root/scripts/build.sh" dist-opt >/dev/null

for example in "$root"/examples/*.mlir; do
  name=$(basename "$example")
  echo "===== $name: dist-opt --dist-no-sync-pipeline ====="
  "$build/bin/dist-opt" "$example" --dist-no-sync-pipeline
  echo "===== $name: dist-opt --dist-no-sync-pipeline --dist-comm-report ====="
  "$build/bin/dist-opt" "$example" --dist-no-sync-pipeline \
    --dist-comm-report -o /dev/null
done
