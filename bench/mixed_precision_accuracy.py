#!/usr/bin/python3
"""What reducing in f32 buys FSDP2-style mixed precision, against float64.

bench/bf16_accuracy.py runs a model written wholly in bf16, whose error is
dominated by its own bf16 arithmetic. This one isolates the accumulation:
f32 parameters with param_dtype = bf16 (FSDP2's MixedPrecisionPolicy), the
model computing in f32 on the bf16-rounded parameters and handing back each
micro-batch's gradient rounded to bf16, as a bf16 backward's output would be.
The window's K gradients of every rank are then stashed, pre-averaged and
reduced either in bf16 (reduce_dtype = bf16, FSDP2's default) or in f32
(reduce_dtype = f32), and the synced gradient is handed back in f32.

The model and the reference are the differential tester's
(test/Differential: gen_case's dataclasses, emit_mlir, reference.py, run by
dist-run under mpirun with .npy inputs and outputs): an MLP 64 -> 256 (gelu)
-> 64, batch 32, W = 2, one window of K = 8, DDP and ZeRO-2. Two references
in float64: "exact", the synced gradient of the model on the rounded
parameters with unrounded micro-batch gradients; "floor", the exact sum of
the bf16-rounded micro-batch gradients, the best any accumulation of them can
do. Errors are max |dist - ref| / max |ref| per gradient (the max over the
four) and the norm ||dist - ref|| / ||ref|| over all four; the ratio is bf16
reduce / f32 reduce. Gradient bytes per window: the arrays the one-round sync
communicates, in the reduce type.

Usage: /usr/bin/python3 bench/mixed_precision_accuracy.py [--build build]
       [--seed 0] [--json FILE]        (about 20 s on 2 cores)
Exits non-zero if a run fails or if the f32 reduce is not closer to "exact"
than the bf16 one.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import types

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "test", "Differential"))
import difftest  # noqa: E402
import gen_case  # noqa: E402
import reference  # noqa: E402

W, K, BATCH = 2, 8, 32
SIZES = (64, 256, 64)


def make(mode, reduce, seed, compute="bf16"):
    """The case: every parameter held in f32, computed in `compute`,
    reduced in `reduce`."""
    shards = W if mode == "zero2" else 1
    kind = "zero2" if mode == "zero2" else "ddp"
    d0, h, d1 = SIZES
    params = {}
    for name, shape in (("fc1.w", (h, d0)), ("fc1.b", (h,)), ("fc2.w", (d1, h)), ("fc2.b", (d1,))):
        params[name] = gen_case.Param(name, shape, kind, "world", None, [], shards, False,
                                      compute=compute, reduce=reduce, held="f32")
    layers = [gen_case.Layer(d0, h, "gelu", "fc1.w", "fc1.b", True),
              gen_case.Layer(h, d1, "identity", "fc2.w", "fc2.b", True)]
    case = gen_case.Case(seed=seed, meshes={"world": (W,)}, world=W, k=K, batch=BATCH, windows=1,
                         lr=0.05, hsdp_partial=False, layers=layers, params=params, dx=False,
                         gradnorm=None, unused=None, loss_rank0=False, style="generic")
    case.args = [("param", n) for n in params] + [("x",), ("y",)]
    case.results = [("loss",)] + [("grad", n) for n in params]
    case.lowp = compute != "f32"
    return case


def run(case, build, directory):
    """dist-run's synced gradients {(rank, name): array} and the inputs."""
    params, data = difftest.write_case(case, directory)
    opts = types.SimpleNamespace(
        mpirun="mpirun --allow-run-as-root --oversubscribe --bind-to none",
        dist_run=os.path.join(build, "bin", "dist-run"))
    cmd = difftest.dist_run_command(case, directory, opts)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True)
    if p.returncode != 0:
        sys.exit("mixed_precision_accuracy: dist-run failed:\n" + p.stdout[-3000:])
    got = {}
    for i, res in enumerate(case.results):
        if res[0] == "grad":
            for r in range(case.world):
                got[(r, res[1])] = np.load(os.path.join(
                    directory, "out", "w0_r%d_grad%d.npy" % (r, i))).astype(np.float64)
    return got, params, data


def errors(case, got, want):
    """(max over gradients of max|err| / max|ref|, norm error over all)."""
    worst, num, den = 0.0, 0.0, 0.0
    for n in case.params:
        d = np.concatenate([np.ravel(got[(r, n)] - want[(r, n)]) for r in range(case.world)])
        ref = np.concatenate([np.ravel(want[(r, n)]) for r in range(case.world)])
        worst = max(worst, np.max(np.abs(d)) / np.max(np.abs(ref)))
        num += np.sum(d * d)
        den += np.sum(ref * ref)
    return worst, float(np.sqrt(num / den))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json")
    args = parser.parse_args()
    rows, ok = [], True
    for mode in ("ddp", "zero2"):
        results = {}
        for reduce in ("bf16", "f32"):
            case = make(mode, reduce, args.seed)
            with tempfile.TemporaryDirectory() as directory:
                got, params, data = run(case, args.build, directory)
            floor = reference.expected_outputs(case, params, data)[0]["grad"]
            # The exact reference: the same rounded parameters, gradients
            # unrounded (an f32 case given the parameters rounded already).
            plain = make(mode, "f32", args.seed, compute="f32")
            rounded = {n: reference.round_to(v, "bf16").astype(np.float32)
                       for n, v in params.items()}
            exact = reference.expected_outputs(plain, rounded, data)[0]["grad"]
            numel = sum(int(np.prod(p.padded_shape)) for p in case.params.values())
            results[reduce] = {
                "exact": errors(case, got, exact), "floor": errors(case, got, floor),
                "bytes": numel * (2 if reduce == "bf16" else 4)}
        floor_self = errors(case, {key: v for key, v in floor.items()}, exact)
        ratio = results["bf16"]["exact"][0] / results["f32"]["exact"][0]
        ok = ok and results["f32"]["exact"][0] < results["bf16"]["exact"][0]
        rows.append({"mode": mode, "results": results, "floor_vs_exact": floor_self,
                     "ratio_max_error": ratio})
        print("%s: MLP %d -> %d -> %d, batch %d, W = %d, K = %d, seed %d"
              % (mode, SIZES[0], SIZES[1], SIZES[2], BATCH, W, K, args.seed))
        print("  %-12s %12s %12s %14s %14s %10s" % ("reduce", "max vs exact", "norm vs exact",
                                                    "max vs floor", "norm vs floor", "bytes"))
        for reduce in ("bf16", "f32"):
            res = results[reduce]
            print("  %-12s %12.3g %12.3g %14.3g %14.3g %10d"
                  % (reduce, res["exact"][0], res["exact"][1], res["floor"][0],
                     res["floor"][1], res["bytes"]))
        print("  %-12s %12.3g %12.3g" % ("floor", floor_self[0], floor_self[1]))
        print("  bf16 / f32 reduce (max vs exact): %.2f" % ratio)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"seed": args.seed, "rows": rows}, f, indent=1)
    if not ok:
        sys.exit("mixed_precision_accuracy: the f32 reduce is not closer than the bf16 one")


if __name__ == "__main__":
    main()
