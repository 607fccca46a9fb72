#!/usr/bin/env python3
"""Bytes and memory per window with and without keep-gathered (bench/README.md).

For each ZeRO-3 model, compiles the step with `--dist-no-sync-pipeline` and
with `--dist-no-sync-pipeline=keep-gathered` and reads `-dist-comm-report`
(JSON) of both: the all_gathers of a no_sync window of K micro-batches
(calls, bytes in nccl-tests' convention, bytes each rank sends on a ring),
the window's total bytes, and the price, the gathered bytes kept between
micro-batches (in all, and beyond this rank's shards). The report on the
kept module also gives the "without" figures; they are checked against the
module compiled without the option.

With --run (needs mpirun), the ToyModel is also run by dist-run on 2 ranks
with and without the option, and the runtime's per-window all_gather calls,
bytes and kept bytes must equal the report's.

Usage: bench/keep_gathered.py [--build DIR] [--k 4] [--json FILE] [--run]
"""

import argparse
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LLAMA = [sys.executable, os.path.join(ROOT, "bench", "gen_llama_ir.py")]
MODELS = [
    ("ToyModel (examples/toy/toy_zero3_w2.mlir)", 2,
     ["cat", os.path.join(ROOT, "examples", "toy", "toy_zero3_w2.mlir")]),
    ("Llama block (examples/llama/llama_block_zero3_w2.mlir)", 2,
     ["cat", os.path.join(ROOT, "examples", "llama", "llama_block_zero3_w2.mlir")]),
    ("Llama block, HSDP [2, 2] (examples/llama/llama_block_hsdp_w4.mlir)", 4,
     ["cat", os.path.join(ROOT, "examples", "llama", "llama_block_hsdp_w4.mlir")]),
    ("Llama-2-7B shapes, 32 layers (gen_llama_ir.py --layers 32 --hidden 4096 "
     "--ffn 11008 --world 8)", 8,
     LLAMA + ["--layers", "32", "--hidden", "4096", "--ffn", "11008", "--world", "8",
              "--mode", "zero3"]),
]


def report(build, source, k, keep):
    text = subprocess.run(source, check=True, capture_output=True, text=True).stdout
    pipeline = "--dist-no-sync-pipeline" + ("=keep-gathered" if keep else "")
    cmd = [os.path.join(build, "bin", "dist-opt"), "-", pipeline,
           "--dist-comm-report=micro-batches=%d format=json" % k, "-o", "/dev/null"]
    out = subprocess.run(cmd, input=text, capture_output=True, text=True)
    if out.returncode:
        sys.stderr.write(out.stderr)
        raise SystemExit("keep_gathered: %s failed" % " ".join(cmd))
    return json.loads(out.stdout)


def measure(build, name, world, source, k):
    plain, kept = report(build, source, k, False), report(build, source, k, True)
    pk, kk = plain["keep_gathered"], kept["keep_gathered"]
    if pk["all_gather_without"] != kk["all_gather_without"]:
        raise SystemExit("keep_gathered: %s: the kept module's 'without' figures %s differ "
                         "from the module compiled without the option %s"
                         % (name, kk["all_gather_without"], pk["all_gather_without"]))
    return {
        "model": name, "world": world, "k": k, "kept_parameters": kk["kept_parameters"],
        "gathers_without": kk["all_gather_without"], "gathers_with": kk["all_gather_with"],
        "window_without": plain["window"]["no_sync"], "window_with": kept["window"]["no_sync"],
        "held_bytes": kk["held_bytes"], "held_beyond_shards": kk["held_bytes_beyond_shards"],
    }


WINDOW = re.compile(r"window 1: no_sync window: (\d+) all_gather \((\d+) bytes\), (\d+) kept "
                    r"gathers reused \((\d+) bytes not gathered\), (\d+) bytes kept between")


def run_toy(build, k, row):
    """dist-run's per-window figures for the ToyModel, checked against the report."""
    toy = os.path.join(ROOT, "examples", "toy", "toy_zero3_w2.mlir")
    result = {}
    for keep in (False, True):
        cmd = ["mpirun", "--oversubscribe", "--bind-to", "none", "-np", "2"]
        if os.geteuid() == 0:
            cmd.insert(1, "--allow-run-as-root")
        cmd += [os.path.join(build, "bin", "dist-run"), toy, "--k", str(k), "--windows", "4"]
        if keep:
            cmd.append("--keep-gathered")
        out = subprocess.run(cmd, capture_output=True, text=True)
        m = WINDOW.search(out.stdout)
        if out.returncode or not m:
            sys.stderr.write(out.stdout + out.stderr)
            raise SystemExit("keep_gathered: dist-run failed (exit %d)" % out.returncode)
        calls, nbytes, hits, hit_bytes, held = map(int, m.groups())
        want = row["gathers_with" if keep else "gathers_without"]
        if (calls, nbytes) != (want["calls"], want["bytes"]) or \
                held != (row["held_bytes"] if keep else 0):
            raise SystemExit("keep_gathered: dist-run's window (%d calls, %d bytes, %d kept) "
                             "is not the report's (%d, %d, %d)"
                             % (calls, nbytes, held, want["calls"], want["bytes"],
                                row["held_bytes"] if keep else 0))
        result["keep" if keep else "plain"] = {
            "all_gather_calls": calls, "all_gather_bytes": nbytes, "kept_reused": hits,
            "kept_reused_bytes": hit_bytes, "kept_between": held}
    return result


def mib(n):
    return "%.1f MiB" % (n / 2**20) if n >= 2**20 else "{:,} B".format(n)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--json", default=None)
    parser.add_argument("--run", action="store_true", help="also run the ToyModel with dist-run")
    opts = parser.parse_args()
    rows = [measure(opts.build, name, world, source, opts.k) for name, world, source in MODELS]
    print("| model | W | K | kept params | all_gathers per window: without | with | gather "
          "bytes: without | with | window bytes (no_sync): without | with | kept between "
          "micro-batches | beyond the shards |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| %s | %d | %d | %d | %d | %d | %s | %s | %s | %s | %s | %s |" % (
            r["model"], r["world"], r["k"], r["kept_parameters"],
            r["gathers_without"]["calls"], r["gathers_with"]["calls"],
            mib(r["gathers_without"]["bytes"]), mib(r["gathers_with"]["bytes"]),
            mib(r["window_without"]["bytes"]), mib(r["window_with"]["bytes"]),
            mib(r["held_bytes"]), mib(r["held_beyond_shards"])))
    result = {"k": opts.k, "models": rows}
    if opts.run:
        result["toy_run"] = run_toy(opts.build, opts.k, rows[0])
        for mode, r in result["toy_run"].items():
            print("dist-run ToyModel %s: window 1: %d all_gathers (%d bytes), %d kept gathers "
                  "reused, %d bytes kept between micro-batches"
                  % (mode, r["all_gather_calls"], r["all_gather_bytes"], r["kept_reused"],
                     r["kept_between"]))
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump(result, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
