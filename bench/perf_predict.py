#!/usr/bin/python3
"""Llama-2-7B where no one here can measure: 8, 64 and 512 H100s.

For each configuration and stash budget, the step (gen_llama_ir.py with
Llama-2-7B's shapes, FSDP mixed precision) is compiled by the no_sync
pipeline and its comm report read by perf_model.py, with the calibration of
the published 8-GPU run, computed here as `perf_model.py published` does
(MFU of the IR's FLOPs and the exposed share of the communication from
ZeRO-3's two tokens/s figures, the activation term from its memory without
no_sync; micro-batch 1, 4096 tokens): memory per rank and tokens/s of always-sync against no_sync for K
from 1 to 16. Budgets: every parameter at its least-memory point (the
stash-budget's least), 10 GiB, and no budget (every parameter `local`).

  perf_predict.py --dist-opt build/bin/dist-opt [--json out.json]

Prints a markdown table (bench/README.md, section 14). The network link of
bench/hardware/h100-sxm-nvlink4.json is an assumption, not a measurement;
so is that the published run's MFU and exposed share carry over to other
scales.
"""

import argparse
import json
import os
import subprocess
import sys

import perf_model

HERE = os.path.dirname(os.path.abspath(__file__))
SHAPES = ["--layers", "32", "--hidden", "4096", "--ffn", "11008", "--tokens", "4096",
          "--vocab", "32000", "--param-dtype", "bf16"]
CONFIGS = [  # label, world, generator mode arguments, memory mode
    ("8 GPUs, ZeRO-3", 8, ["--mode", "zero3"], "zero3"),
    ("64 GPUs, ZeRO-3", 64, ["--mode", "zero3"], "zero3"),
    ("512 GPUs, HSDP (8 x 64)", 512, ["--mode", "hsdp", "--shard-size", "8"], "zero3"),
]
KS = [1, 2, 4, 8, 16]
GIB = 1 << 30


def report(dist_opt, world, mode_args, options):
    ir = subprocess.run([sys.executable, os.path.join(HERE, "gen_llama_ir.py"),
                         "--world", str(world)] + SHAPES + mode_args,
                        check=True, capture_output=True, text=True).stdout
    compiled = subprocess.run([dist_opt, "--dist-no-sync-pipeline=" + options],
                              input=ir, check=True, capture_output=True,
                              text=True).stdout
    out = subprocess.run([dist_opt, "--dist-comm-report=format=json", "-o", "/dev/null"],
                         input=compiled, check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dist-opt", required=True)
    parser.add_argument("--hardware",
                        default=os.path.join(HERE, "hardware", "h100-sxm-nvlink4.json"))
    parser.add_argument("--json")
    opts = parser.parse_args()
    with open(opts.hardware) as f:
        hardware = json.load(f)
    peak = hardware["peak_tflops"]["bf16"]
    # The published run: 8 GPUs, K = 4, every parameter local; its table
    # predicted (perf_model.py published) and its calibration.
    reports = {mode: report(opts.dist_opt, 8, ["--mode", mode], "bucket-cap-bytes=0")
               for mode in ("zero2", "zero3")}
    published = perf_model.published_comparison(reports, 2, hardware)
    CALIBRATION = {"mfu": published["mfu"], "exposed": published["exposed"],
                   "activations_gib": published["activations_gib"]}
    print("calibration (the published run): MFU %.3f, exposed %.3f, "
          "activations %.2f GiB" % (CALIBRATION["mfu"], CALIBRATION["exposed"],
                                    CALIBRATION["activations_gib"]))
    print()
    rows = []
    print("| configuration | stash budget | stash GiB | K | memory GiB always-sync / no_sync "
          "| tokens/s always-sync | tokens/s no_sync | no_sync gain |")
    print("|---|---|---|---|---|---|---|---|")
    for label, world, mode_args, mode in CONFIGS:
        base = report(opts.dist_opt, world, mode_args, "bucket-cap-bytes=0")
        least = base["stash_curve"]["points"][0]["stash_bytes"]
        budgets = [("least", least), ("10 GiB", 10 * GIB), ("none (all local)", None)]
        for name, budget in budgets:
            r = base if budget is None else report(
                opts.dist_opt, world, mode_args,
                "bucket-cap-bytes=0 stash-budget=%d" % budget)
            stash = sum(s["bytes"] for s in r["stashes"]) / GIB
            memory = [perf_model.memory_gib(r, mode, ns, 2,
                                            CALIBRATION["activations_gib"])
                      for ns in (False, True)]
            for k in KS:
                tokens = world * k * 4096
                rates = [tokens / perf_model.window_model(
                    r, k, ns, hardware, peak, CALIBRATION["mfu"],
                    CALIBRATION["exposed"]) for ns in (False, True)]
                rows.append({"configuration": label, "budget": name,
                             "stash_gib": stash, "k": k,
                             "memory_gib": memory, "tokens_per_s": rates})
                print("| %s | %s | %.2f | %d | %.1f / %.1f | %.0f | %.0f | %+.1f%% |" % (
                    label, name, stash, k, memory[0], memory[1], rates[0], rates[1],
                    100 * (rates[1] / rates[0] - 1)))
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump({"calibration": CALIBRATION, "hardware": hardware["name"],
                       "published": {"memory": published["memory"],
                                     "tokens": published["tokens"]},
                       "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
