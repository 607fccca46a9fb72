#!/usr/bin/python3
"""Accuracy of f32 exp, erf and tanh as a lowered step computes them.

For each function, two loops over 2^24 evenly spaced f32 inputs are built
from MLIR with Debian's tools: one lowered the way -dist-lower-to-llvm
lowers math ops today (LLVM intrinsics, else libm calls), one through
upstream's polynomial approximations (mlir-opt's
-test-math-polynomial-approximation: straight-line f32 code that LLVM can
vectorize). Both, and PyTorch's own f32 function, are compared with
PyTorch's f64 result, in units in the last place of the f32 result.

    /usr/bin/python3 bench/math_accuracy.py [--bin /usr/lib/llvm-22/bin]
"""

import argparse
import ctypes
import os
import subprocess
import tempfile

import numpy as np
import torch

N = 1 << 24
RANGES = {
    "exp": [(-87.0, 0.0), (-87.0, 88.0), (-1.0, 1.0)],
    "erf": [(-6.0, 6.0), (-1.0, 1.0)],
    "tanh": [(-10.0, 10.0), (-1.0, 1.0)],
}
REFERENCE = {"exp": torch.exp, "erf": torch.erf, "tanh": torch.tanh}

LOOP = """func.func @f(%a: memref<{n}xf32>, %b: memref<{n}xf32>)
    attributes {{llvm.bareptr}} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant {n} : index
  scf.for %i = %c0 to %n step %c1 {{
    %v = memref.load %a[%i] : memref<{n}xf32>
    %e = math.{fn} %v : f32
    memref.store %e, %b[%i] : memref<{n}xf32>
  }}
  return
}}
"""


def build(bin_dir, work, fn, approximate):
    """The loop as a shared library with one function, f(in, out)."""
    stem = os.path.join(work, f"{fn}-{'approx' if approximate else 'libm'}")
    with open(stem + ".mlir", "w") as f:
        f.write(LOOP.format(n=N, fn=fn))
    passes = ["--test-math-polynomial-approximation"] if approximate else []
    passes += ["--convert-math-to-llvm", "--convert-math-to-libm",
               "--convert-scf-to-cf", "--convert-to-llvm",
               "--reconcile-unrealized-casts"]
    subprocess.run([f"{bin_dir}/mlir-opt", stem + ".mlir", *passes,
                    "-o", stem + ".llvm.mlir"], check=True)
    subprocess.run([f"{bin_dir}/mlir-translate", "--mlir-to-llvmir",
                    stem + ".llvm.mlir", "-o", stem + ".ll"], check=True)
    subprocess.run([f"{bin_dir}/clang", "-O2", "-march=native", "-shared",
                    "-fPIC", "-Wno-override-module", stem + ".ll", "-o",
                    stem + ".so", "-lm"], check=True)
    lib = ctypes.CDLL(stem + ".so")
    lib.f.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    return lib.f


def ulps(y, exact):
    """|y - exact| in units in the last place of exact rounded to f32."""
    unit = np.spacing(np.abs(exact.astype(np.float32)))
    unit = np.where(unit == 0, np.spacing(np.float32(0)), unit)
    return np.abs(y.astype(np.float64) - exact) / unit


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default="/usr/lib/llvm-22/bin")
    opts = parser.parse_args()
    print("| function | inputs | lowering today: max / mean ulp "
          "| polynomial: max / mean ulp | PyTorch f32: max / mean ulp |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as work:
        for fn, ranges in RANGES.items():
            kernels = [build(opts.bin, work, fn, a) for a in (False, True)]
            for lo, hi in ranges:
                x = np.linspace(lo, hi, N, dtype=np.float32)
                exact = REFERENCE[fn](torch.from_numpy(x.astype(np.float64)))
                exact = exact.numpy()
                cells = []
                for kernel in kernels:
                    y = np.empty_like(x)
                    kernel(x.ctypes.data, y.ctypes.data)
                    e = ulps(y, exact)
                    cells.append(f"{e.max():.2f} / {e.mean():.3f}")
                e = ulps(REFERENCE[fn](torch.from_numpy(x)).numpy(), exact)
                cells.append(f"{e.max():.2f} / {e.mean():.3f}")
                print(f"| {fn} | [{lo:g}, {hi:g}] | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
