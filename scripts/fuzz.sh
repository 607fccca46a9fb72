#!/usr/bin/env bash
# Builds fuzz/dist-fuzz (libFuzzer + ASan + UBSan, clang-22; the dist
# libraries are instrumented too) and fuzzes the dist dialect, passes, report
# and lowering for SECONDS (default 600), seeded with every lit input split
# at `// -----` and the regression seeds in fuzz/corpus/. Crashes land in
# fuzz/crashes/. The corpus (BUILD/fuzz-corpus) keeps what earlier runs
# found; FUZZ_FRESH=1 starts from the seeds alone (comparable figures).
# Usage: [FUZZ_BUILD_DIR=DIR] [FUZZ_FRESH=1] scripts/fuzz.sh [SECONDS]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${1:-600}
build=${FUZZ_BUILD_DIR:-$root/build-fuzz}
"$root/scripts/install-deps.sh"
"$root/scripts/install-deps.sh" libclang-rt-22-dev libfuzzer-22-dev
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir -DLLVM_USE_LINKER=lld \
    -DMLIR_LINK_MLIR_DYLIB=ON -DDIST_ENABLE_FUZZER=ON >/dev/null
fi
ninja -C "$build" dist-fuzz
corpus=$build/fuzz-corpus
[ "${FUZZ_FRESH:-0}" = 1 ] && rm -rf "$corpus"
mkdir -p "$corpus" "$root/fuzz/crashes"
python3 - "$root" "$corpus" <<'PY'
import pathlib, sys
root, corpus = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
n = 0
for f in list((root / "test").rglob("*.mlir")) + list((root / "examples").rglob("*.mlir")):
    # Bytes, not text: regression inputs need not be UTF-8.
    for i, part in enumerate(f.read_bytes().split(b"// -----")):
        (corpus / f"{f.stem}-{i}.mlir").write_bytes(part)
        n += 1
for f in (root / "fuzz" / "corpus").glob("*.mlir"):
    (corpus / f"regression-{f.name}").write_bytes(f.read_bytes())
    n += 1
print(f"fuzz.sh: {n} seeds")
PY
"$build/fuzz/dist-fuzz" "$corpus" -max_total_time="$seconds" -max_len=65536 \
  -dict="$root/fuzz/dist.dict" -artifact_prefix="$root/fuzz/crashes/" -print_final_stats=1 -timeout=30 2>&1 |
  tee "$build/fuzz.log" | grep -E "^#[0-9]+[[:space:]]+(INITED|DONE)|stat::|ERROR|SUMMARY" || true
