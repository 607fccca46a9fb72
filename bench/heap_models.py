#!/usr/bin/python3
"""Peak heap of a no_sync window: dist against PyTorch DDP (issue 34).

Both sides run with build/lib/heap_peak.so preloaded (bench/heap_peak.c: it
wraps malloc and its kin and counts the bytes live, whatever allocates
them), on the models and data of torch_models.py (the `bench`
configurations, W = 2, K = 4, one thread per rank, f32), and mark the start
and end of every no_sync window:
  dist     dist-run around its one-round window (its checks against
           always-sync run after the mark, outside the phase)
  PyTorch  torch_models.py's rank around the K micro-batches of each
           ddp.no_sync() window
Per rank and window: the bytes live when the window starts (parameters, the
data, each side's own state: PyTorch's DDP buckets and autograd, dist-run's
host copies and compiled code) and the peak inside it; the growth, peak
minus start, is what the window's forward and backward, gradients and stash
need. The first window also makes each side's one-time allocations (the
runtime's and OpenBLAS's state, PyTorch's autograd engine), so the steady
growth is the least over windows. Prints, per side, the most over ranks of:
the bytes live at a window's start, the peak, the steady growth and the
first window's growth; and --json.

Usage: /usr/bin/python3 bench/heap_models.py [--models gpt,llama] [--windows 3]
           [--json FILE]
"""

import argparse
import glob
import json
import os
import shlex
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "python"))
import torch_models  # noqa: E402
from dist_torch import run as dist_run  # noqa: E402

LIB = os.path.join(ROOT, "build", "lib", "heap_peak.so")


def read_phases(prefix, label):
    """Per process that marked `label`: (live at start, peak, most growth,
    least growth), each over that process's windows."""
    found = []
    for path in glob.glob(prefix + ".*"):
        for line in open(path):
            name, count, *figures = line.split()
            if name == label and int(count) > 0:
                found.append(tuple(int(f) for f in figures))
    return found


def dist_side(path, windows, workdir, prefix):
    mpirun = dist_run.mpirun_command() + ["-x", "LD_PRELOAD=" + LIB,
                                          "-x", "HEAP_PEAK_OUT=" + prefix]
    env = dict(os.environ, DIST_MPIRUN=" ".join(shlex.quote(a) for a in mpirun))
    out = subprocess.run([os.path.join(ROOT, "build", "bin", "dist-torch"), "train", path,
                          "--config", "bench", "--world", str(torch_models.W),
                          "--k", str(torch_models.K), "--windows", str(windows),
                          "--no-compare", "--workdir", workdir],
                         capture_output=True, text=True, env=env)
    if out.returncode:
        sys.exit("heap_models: dist-torch failed:\n" + out.stdout + out.stderr)
    return read_phases(prefix, "no_sync")


def torch_side(path, windows, prefix):
    # The spawned ranks inherit the environment; this process is not
    # preloaded.
    os.environ["LD_PRELOAD"], os.environ["HEAP_PEAK_OUT"] = LIB, prefix
    try:
        torch_models.torch_round(path, windows)
    finally:
        del os.environ["LD_PRELOAD"], os.environ["HEAP_PEAK_OUT"]
    return read_phases(prefix, "no_sync")


def summary(found):
    if len(found) != torch_models.W:
        sys.exit("heap_models: expected %d ranks' phases, found %d (is %s built?)"
                 % (torch_models.W, len(found), LIB))
    return {"live_at_start": max(f[0] for f in found), "peak": max(f[1] for f in found),
            "first_growth": max(f[2] for f in found), "growth": max(f[3] for f in found)}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--models", default="gpt,llama")
    p.add_argument("--windows", type=int, default=3)
    p.add_argument("--json", default=None)
    a = p.parse_args()
    results = []
    for name in a.models.split(","):
        path = os.path.join(ROOT, "examples", "torch", name + ".py")
        with tempfile.TemporaryDirectory() as tmp:
            d = summary(dist_side(path, a.windows, os.path.join(tmp, "work"),
                                  os.path.join(tmp, "dist")))
            t = summary(torch_side(path, a.windows, os.path.join(tmp, "torch")))
        row = {"model": name, "windows": a.windows, "dist": d, "torch": t,
               "dist_over_torch_growth": d["growth"] / t["growth"]}
        results.append(row)
        mib = 2.0 ** 20
        print("%s (bench config, W=%d, K=%d), most over ranks and %d no_sync windows:"
              % (name, torch_models.W, torch_models.K, a.windows))
        print("  %-12s %14s %14s %14s %14s" % ("", "live at start", "peak", "growth",
                                               "first window"))
        for side, v in (("dist", d), ("PyTorch DDP", t)):
            print("  %-12s %10.1f MiB %10.1f MiB %10.1f MiB %10.1f MiB"
                  % (side, v["live_at_start"] / mib, v["peak"] / mib, v["growth"] / mib,
                     v["first_growth"] / mib))
        print("  dist / PyTorch growth: %.2fx" % row["dist_over_torch_growth"])
        sys.stdout.flush()
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
