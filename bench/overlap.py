#!/usr/bin/env python3
"""Buckets and the overlap schedule on and off, side by side in one run.

Issue 15's benchmark. Three DDP models on 2 ranks, K = 4, run by dist-run
(JIT; it checks every window's gradients against always-sync accumulation,
so a run that prints "0 failed" also computed the right gradients):
  toy    the ToyModel (examples/toy/toy_ddp_w2.mlir): 4 gradients, tiny
  wide   the wide MLP 256 -> 1024 -> 256 at micro-batch 1 (bench/README.md):
         4 gradients, 2 MiB, communication-heavy
  small  LAYERS Llama blocks of hidden 16 (bench/gen_llama_ir.py): 9 small
         gradients per block
in four configurations of -dist-no-sync-pipeline, alternated REPS times:
  none       bucket-cap-bytes=0, schedule off
  buckets    the default 25 MiB buckets, schedule off
  schedule   no buckets, schedule on
  both       the defaults (buckets and schedule)
It prints each run's window and always-sync throughput, then per model the
medians and the ratios to `none`. The sync step and its communication come
from the same runs: t_sync = 1 / always-sync throughput; a one-round window
of K = 4 takes 3 t_no_sync + t_sync, so t_no_sync = (4 / window - t_sync) / 3.

Then the compiled (AOT) steps of bench/step_throughput.cpp for the toy and
wide DDP models, built three ways (bench/CMakeLists.txt): plain (schedule
off, no buckets), ddp (schedule on: the pipeline's default, buckets pinned
off), overlap (schedule and buckets on): the one-round window and its ratio
to the ideal K * compute + one round of the four per-parameter collectives.

Then the compile time of -dist-schedule-collectives and
-dist-bucket-collectives (-mlir-timing) on the Llama step of 8 to 64 blocks,
per op of the step: flat when the passes are linear.

Usage: bench/overlap.py [--build build] [--reps 3] [--layers 32]
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIGS = {
    "none": ["--bucket-cap-bytes=0", "--schedule=false"],
    "buckets": ["--schedule=false"],
    "schedule": ["--bucket-cap-bytes=0", "--schedule=true"],
    "both": [],
}


def write_models(tmp, layers):
    small = os.path.join(tmp, "small.mlir")
    wide = os.path.join(tmp, "wide.mlir")
    with open(small, "w") as f:
        subprocess.run([sys.executable, f"{ROOT}/bench/gen_llama_ir.py", "--layers",
                        str(layers), "--hidden", "16", "--ffn", "16", "--tokens", "2",
                        "--mode", "ddp", "--world", "2"], stdout=f, check=True)
    with open(wide, "w") as f:
        subprocess.run([sys.executable, f"{ROOT}/examples/gen_toy.py", "--mode", "ddp",
                        "--world", "2", "--in", "256", "--hidden", "1024", "--out",
                        "256", "--batch", "1"], stdout=f, check=True)
    return {
        "toy": (f"{ROOT}/examples/toy/toy_ddp_w2.mlir", "step"),
        "wide": (wide, "step"),
        "small": (small, "backward"),
    }


def run(build, path, entry, flags, windows=6):
    """Runs dist-run on 2 ranks; its (window, always-sync) micro-batches/s."""
    mpi = ["mpirun", "--oversubscribe", "--bind-to", "none", "-np", "2"]
    if os.geteuid() == 0:
        mpi.insert(1, "--allow-run-as-root")
    out = subprocess.run(mpi + [f"{build}/bin/dist-run", path, "--entry", entry,
                                "--windows", str(windows)] + flags,
                         capture_output=True, text=True)
    text = out.stdout + out.stderr
    m = re.search(r"throughput: ([0-9.]+) micro-batches/s with no_sync, ([0-9.]+) "
                  r"always-sync", text)
    if out.returncode != 0 or " 0 failed" not in text or not m:
        sys.exit(f"dist-run {path} {' '.join(flags)} failed:\n{text}")
    return float(m.group(1)), float(m.group(2))


def steps(window, always):
    t_sync = 1 / always
    t_no_sync = (4 / window - t_sync) / 3
    return t_sync, t_sync - t_no_sync


def throughput(build, models, reps):
    runs = {(m, c): [] for m in models for c in CONFIGS}
    for rep in range(1, reps + 1):
        for model, (path, entry) in models.items():
            for config, flags in CONFIGS.items():
                w, a = run(build, path, entry, flags)
                runs[model, config].append((w, a))
                print(f"rep {rep} {model:5} {config:8} window {w:9.1f} "
                      f"micro-batches/s, always-sync {a:9.1f}", flush=True)
    print()
    print("median over reps; ratios are to `none` within each rep, then the median")
    print("model  config    window/s  always/s   window  always  sync step  its comm")
    for model in models:
        base = runs[model, "none"]
        for config in CONFIGS:
            mine = runs[model, config]
            med = lambda i: statistics.median(r[i] for r in mine)
            ratio = lambda f: statistics.median(f(x, y) for x, y in zip(mine, base))
            sync = ratio(lambda x, y: steps(*y)[0] / steps(*x)[0])
            comm = ratio(lambda x, y: steps(*y)[1] / steps(*x)[1]
                         if steps(*x)[1] > 0 else float("nan"))
            print(f"{model:6} {config:8} {med(0):9.1f} {med(1):9.1f}  "
                  f"x{ratio(lambda x, y: x[0] / y[0]):.2f}   "
                  f"x{ratio(lambda x, y: x[1] / y[1]):.2f}   x{sync:.2f}      x{comm:.2f}")
    print("(window, always: throughput over none's; sync step, its comm: none's time "
          "over this one's)")


def aot(build, reps):
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    from step_throughput import run as step_run
    print()
    print("compiled steps (bench/step_throughput.cpp, medians of --reps "
          f"{reps} on each of 3 alternations):")
    print("model  variant   window ms  always ms  compute ms  round ms  ratio to ideal")
    results = {}
    for _ in range(3):
        for model in ("toy", "wide"):
            for variant in ("ddp-plain", "ddp", "ddp-overlap"):
                r = step_run(build, model, variant, 2, reps)
                results.setdefault((model, variant), []).append(r)
    for (model, variant), rs in results.items():
        med = lambda f: statistics.median(f(r) for r in rs)
        print(f"{model:6} {variant:11} {med(lambda r: r['schemes']['one_round']['window_ms']):8.3f}"
              f" {med(lambda r: r['schemes']['always_sync']['window_ms']):9.3f}"
              f" {med(lambda r: r['compute_ms']):10.4f} {med(lambda r: r['comm_round_ms']):9.4f}"
              f" {med(lambda r: r['schemes']['one_round']['window_ms'] / r['ideal_window_ms']):12.3f}")


def compile_time(build, tmp):
    print()
    print("compile time (-mlir-timing, wall), Llama DDP step, W = 2:")
    print("blocks   ops   schedule ms  per op us   bucket ms  per op us")
    for layers in (8, 16, 32, 64):
        path = os.path.join(tmp, f"llama{layers}.mlir")
        with open(path, "w") as f:
            subprocess.run([sys.executable, f"{ROOT}/bench/gen_llama_ir.py", "--layers",
                            str(layers), "--mode", "ddp", "--world", "2"],
                           stdout=f, check=True)
        out = subprocess.run([f"{build}/bin/dist-opt", path, "--dist-no-sync-pipeline",
                              "-mlir-timing", "-o", os.devnull],
                             capture_output=True, text=True, check=True).stderr
        generic = subprocess.run(
            [f"{build}/bin/dist-opt", path, "--dist-no-sync-pipeline=schedule=false "
             "bucket-cap-bytes=0", "-mlir-print-op-generic"],
            capture_output=True, text=True, check=True).stdout
        ops = len(re.findall(r'"[a-z_]+\.[a-z_.]+"\(', generic))

        def ms(name):
            m = re.search(r"([0-9.]+) \([ 0-9.]+%\)\s+" + name, out)
            return float(m.group(1)) * 1e3 if m else float("nan")
        s, b = ms("DistScheduleCollectivesPass"), ms("DistBucketCollectivesPass")
        print(f"{layers:6} {ops:6} {s:12.2f} {s / ops * 1e3:10.2f} {b:11.2f} "
              f"{b / ops * 1e3:10.2f}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=os.environ.get("BUILD_DIR", f"{ROOT}/build"))
    p.add_argument("--reps", type=int, default=int(os.environ.get("REPS", "3")))
    p.add_argument("--layers", type=int, default=int(os.environ.get("LAYERS", "32")))
    p.add_argument("--skip-throughput", action="store_true")
    p.add_argument("--skip-aot", action="store_true")
    p.add_argument("--aot-reps", type=int, default=15)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if not args.skip_throughput:
            models = write_models(tmp, args.layers)
            print(f"DDP, W = 2, K = 4; small = {args.layers} Llama blocks of hidden 16 "
                  f"({args.layers * 9} gradients)")
            throughput(args.build, models, args.reps)
        if not args.skip_aot:
            aot(args.build, args.aot_reps)
        compile_time(args.build, tmp)


if __name__ == "__main__":
    main()
