#!/usr/bin/python3
"""GPT and Llama from examples/torch: tokens/s of dist's no_sync window against
PyTorch DDP's no_sync window and against dist always-sync (issue 30).

Per model (the files' `bench` configurations), W = 2 ranks, K = 4, one
thread per rank, f32, the same BLAS (PyTorch's libblas.so.3 is Debian's
single-threaded OpenBLAS once libopenblas-serial-dev is installed, as
dist's distrt_matmul uses), --rounds rounds alternating:
  dist     `dist-torch train MODEL --config bench --no-compare`: dist-run's
           throughput line (micro-batches/s of the one-round no_sync
           window and of always-sync accumulation, over every window but
           the first; it includes dist-run's per-micro-step checks, so
           dist's figures are lower bounds)
  PyTorch  DistributedDataParallel over gloo on the same model, initial
           parameters and data: --windows windows of K micro-batches, the
           first K-1 under ddp.no_sync(), then K synced ones (always-sync);
           per window the slowest rank's time (barrier, time, all_reduce
           MAX), median over windows after the first
tokens/s = W * K * micro-batch * sequence / window time. Prints one table
per model with the medians over rounds and the ratios, and --json.

Usage: /usr/bin/python3 bench/torch_models.py [--models gpt,llama] [--rounds 3]
           [--windows 4] [--json FILE]
"""

import argparse
import json
import contextlib
import ctypes
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
from dist_torch import gloo, recipe as recipes  # noqa: E402

W, K = 2, 4


def _port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _heap_phase():
    """bench/heap_peak.c's phase mark when it is preloaded (heap_models.py),
    else a no-op."""
    try:
        mark = ctypes.CDLL(None).heap_peak_phase
    except AttributeError:
        return lambda label: None
    return lambda label: mark(label.encode())


def _torch_rank(rank, *args):
    gloo.run_rank(rank, _torch_rank_work, *args)


def _torch_rank_work(rank, port, path, windows, result):
    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    dist.init_process_group("gloo", rank=rank, world_size=W)
    r = recipes.load(path, "bench")
    model = r.build(0)
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    micro = r.default_micro_batch()
    batches = [[r.draw(micro, 0, w, k, rank) for k in range(K)] for w in range(windows)]
    times = {"no_sync": [], "always": []}
    heap_phase = _heap_phase()
    for schedule in ("no_sync", "always"):
        for w in range(windows):
            dist.barrier()
            heap_phase(schedule)
            start = time.perf_counter()
            for k in range(K):
                skip = schedule == "no_sync" and k < K - 1
                with (ddp.no_sync() if skip else contextlib.nullcontext()):
                    (r.loss(ddp, *batches[w][k]) / K).backward()
            t = torch.tensor([time.perf_counter() - start], dtype=torch.float64)
            heap_phase("between")
            dist.all_reduce(t, op=dist.ReduceOp.MAX)
            for p in model.parameters():
                p.grad = None
            if w > 0:
                times[schedule].append(float(t))
    if rank == 0:
        result.put({s: statistics.median(v) for s, v in times.items()})
    dist.barrier()  # leave together; gloo.run_rank ends the process


def torch_round(path, windows):
    ctx = mp.get_context("spawn")
    result = ctx.SimpleQueue()
    mp.start_processes(_torch_rank, args=(_port(), path, windows, result), nprocs=W,
                       join=True, start_method="spawn")
    return result.get()


def dist_round(path, windows, workdir):
    out = subprocess.run([os.path.join(ROOT, "build", "bin", "dist-torch"), "train", path,
                          "--config", "bench", "--world", str(W), "--k", str(K),
                          "--windows", str(windows), "--no-compare", "--workdir", workdir],
                         capture_output=True, text=True)
    m = re.search(r"throughput: ([0-9.]+) micro-batches/s with no_sync, ([0-9.]+) always-sync",
                  out.stdout)
    if out.returncode or not m:
        sys.exit("torch_models: dist-torch failed:\n" + out.stdout + out.stderr)
    # micro-batches/s counts one rank's micro-batches: a window is K of them.
    return {"no_sync": K / float(m.group(1)), "always": K / float(m.group(2))}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--models", default="gpt,llama")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--windows", type=int, default=4)
    p.add_argument("--json", default=None)
    a = p.parse_args()
    results = []
    for name in a.models.split(","):
        path = os.path.join(ROOT, "examples", "torch", name + ".py")
        r = recipes.load(path, "bench")
        model = r.build(0)
        micro = r.default_micro_batch()
        seq = r.draw(micro, 0, 0, 0, 0)[0].shape[1]
        tokens = W * K * micro * seq
        params = sum(p.numel() for p in model.parameters())
        rounds = {"dist": [], "torch": []}
        with tempfile.TemporaryDirectory() as workdir:
            for i in range(a.rounds):
                rounds["dist"].append(dist_round(path, a.windows, workdir))
                rounds["torch"].append(torch_round(path, a.windows))
        med = {side: {s: statistics.median(x[s] for x in rounds[side])
                      for s in ("no_sync", "always")} for side in rounds}
        row = {"model": name, "parameters": params, "tokens_per_window": tokens,
               "rounds": rounds,
               "dist_no_sync_tokens_s": tokens / med["dist"]["no_sync"],
               "dist_always_tokens_s": tokens / med["dist"]["always"],
               "torch_no_sync_tokens_s": tokens / med["torch"]["no_sync"],
               "torch_always_tokens_s": tokens / med["torch"]["always"]}
        row["dist_over_torch_no_sync"] = row["dist_no_sync_tokens_s"] / row["torch_no_sync_tokens_s"]
        row["dist_no_sync_over_always"] = row["dist_no_sync_tokens_s"] / row["dist_always_tokens_s"]
        results.append(row)
        print("%s (bench config, %d parameters, W=%d, K=%d, %d tokens per window), medians of "
              "%d rounds:" % (name, params, W, K, tokens, a.rounds))
        print("  %-26s %12s %12s" % ("", "no_sync", "always-sync"))
        print("  %-26s %12.0f %12.0f" % ("dist tokens/s", row["dist_no_sync_tokens_s"],
                                         row["dist_always_tokens_s"]))
        print("  %-26s %12.0f %12.0f" % ("PyTorch DDP tokens/s", row["torch_no_sync_tokens_s"],
                                         row["torch_always_tokens_s"]))
        print("  dist / PyTorch (no_sync window): %.2fx; dist no_sync / dist always-sync: %.2fx"
              % (row["dist_over_torch_no_sync"], row["dist_no_sync_over_always"]))
        sys.stdout.flush()
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
