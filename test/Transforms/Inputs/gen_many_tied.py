#!/usr/bin/env python3
"""Writes a backward returning N gradients tied to N parameters, for the
diagnostics-at-scale test (apply-no-sync-many-tied.test).

Every result is a separate op's value, so the return op has N (or 2N)
operands: a diagnostic that printed it would repeat ~25 N bytes.
  local     each gradient is local (nothing to skip: one warning each)
  twice     each gradient is synced and returned twice, once untied (one
            error each: the second return is a use besides the tied one)
  bad-tie   the last result is tied with the wrong type (one verifier error
            on the function)
"""

import argparse


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--params", type=int, default=2000)
    ap.add_argument("--mode", choices=["local", "twice", "bad-tie"], default="local")
    args = ap.parse_args()
    n, t = args.params, "tensor<4xf32>"
    print("dist.mesh @world shape = [2]")
    for i in range(n):
        print(f"dist.parameter @p{i} : {t} replicated on @world")
    results = [f"{t} {{dist.grad = @p{i}}}" for i in range(n)]
    if args.mode == "bad-tie":
        results[-1] = f"tensor<5xf32> {{dist.grad = @p{n - 1}}}"
    if args.mode == "twice":
        results += [t] * n
    print(f"func.func @step(%x: {t}) -> ({', '.join(results)}) {{")
    values = []
    for i in range(n):
        print(f"  %g{i} = arith.mulf %x, %x : {t}")
        values.append(f"%g{i}")
        if args.mode == "twice":
            print(f"  %s{i} = dist.grad_sync %g{i} for @p{i} : {t} -> {t}")
            values[-1] = f"%s{i}"
    types = [t] * n
    if args.mode == "bad-tie":
        print(f"  %bad = tensor.empty() : tensor<5xf32>")
        values[-1], types[-1] = "%bad", "tensor<5xf32>"
    if args.mode == "twice":
        values, types = values * 2, types * 2
    print(f"  return {', '.join(values)} : {', '.join(types)}")
    print("}")


if __name__ == "__main__":
    main()
