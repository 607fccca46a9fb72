#!/usr/bin/env bash
# Builds everything and runs every test (lit suite, unit tests, doc check)
# through ctest, whose closing line reports the totals.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
"$root/scripts/build.sh"
cd "$build"
ctest --output-on-failure "$@"
