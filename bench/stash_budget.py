#!/usr/bin/env python3
"""Stash memory against gradient traffic for Llama-2-7B shapes (bench/README.md).

Generates the 32-layer Llama step (gen_llama_ir.py: hidden 4096, ffn 11008,
no embedding or output layer: the generator has no vocabulary) in zero2 and
zero3 at W = 8, compiles it with `--dist-no-sync-pipeline=stash-budget=<B>`
at a mid budget (halfway between the least stash memory and all-local, from
a first report of the module compiled without the option) and reads the
trade-off curve of `-dist-comm-report` (JSON, "stash_curve"): stash bytes
per rank against the gradient wire bytes each rank sends per window of K
micro-batches, with the point the budget chose. The report's own window
totals must save what that point saves (checked).

The seed's measured figures (Lightning Thunder's PR, Llama-2-7B on 8 H100s,
docs in /work/shared/BACKGROUND.md) are TOTAL memory per GPU, always-sync and
no_sync. Our prediction of a total: the seed's always-sync total + (our
stash at the point - our stash at the least-memory point, which is the
synced gradient shard every schedule holds). Our IR is f32 throughout, and
has no embedding or output layer.

This is a model's figures, not a measurement: nothing runs. Prints a table;
writes the curve and the comparison as JSON and a PNG (gnuplot).

Usage: bench/stash_budget.py [--build DIR] [--k 4] [--world 8] [--layers 32]
           [--json FILE] [--png FILE]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plotting import gnuplot  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GB = 1e9  # the seed's GB (torch.cuda.max_memory_allocated() / 1e9)

# BACKGROUND.md, "Headline numbers to beat": memory GB per GPU.
SEED = {
    "zero2": {"always_sync_gb": 40.3, "no_sync_gb": 65.6},
    "zero3": {"always_sync_gb": 27.1, "no_sync_gb": 52.5},
}


def report(dist_opt, ir, k, budget=None):
    pipeline = "--dist-no-sync-pipeline"
    if budget is not None:
        pipeline += "=stash-budget=%d" % budget
    cmd = [dist_opt, ir, pipeline,
           "--dist-comm-report=micro-batches=%d format=json" % k, "-o", "/dev/null"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode:
        sys.stderr.write(out.stderr)
        raise SystemExit("stash_budget: %s failed" % " ".join(cmd))
    return json.loads(out.stdout)


def measure(args, dist_opt, mode, tmp):
    ir = os.path.join(tmp, mode + ".mlir")
    with open(ir, "w") as f:
        subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gen_llama_ir.py"),
                        "--layers", str(args.layers), "--hidden", str(args.hidden),
                        "--ffn", str(args.ffn), "--world", str(args.world),
                        "--mode", mode], check=True, stdout=f)
    first = report(dist_opt, ir, args.k)["stash_curve"]
    if "skipped" in first:
        raise SystemExit("stash_budget: %s: no curve: %s" % (mode, first["skipped"]))
    low, high = first["points"][0]["stash_bytes"], first["points"][-1]["stash_bytes"]
    budget = (low + high) // 2
    full = report(dist_opt, ir, args.k, budget)
    curve = full["stash_curve"]
    if [(p["stash_bytes"], p["saved_wire_bytes_per_no_sync_micro_batch"])
            for p in curve["points"] if p["sampled"]] != \
       [(p["stash_bytes"], p["saved_wire_bytes_per_no_sync_micro_batch"])
            for p in first["points"] if p["sampled"]]:
        raise SystemExit("stash_budget: %s: the curve depends on the stash points the "
                         "module carries" % mode)
    chosen = curve["points"][curve["chosen"]]
    # The report's own window totals (all its collectives) save what the
    # chosen point saves: the curve is counted as the report counts.
    window = full["window"]
    saved = window["always_sync"]["wire_bytes_per_rank"] - window["no_sync"]["wire_bytes_per_rank"]
    expected = curve["always_sync_gradient_wire_bytes_per_rank"] - \
        chosen["gradient_wire_bytes_per_rank"]
    if abs(saved - expected) > 1e-9 * expected + 1:
        raise SystemExit("stash_budget: %s: the report's window saves %d wire bytes per rank, "
                         "the curve's chosen point %d" % (mode, saved, expected))
    least = curve["points"][0]
    local = curve["points"][-1]
    seed = SEED[mode]

    def total(point):
        return seed["always_sync_gb"] + (point["stash_bytes"] - least["stash_bytes"]) / GB

    return {
        "mode": mode, "world": args.world, "k": args.k, "layers": args.layers,
        "budget_bytes": budget,
        "tied_parameters": curve["tied_parameters"],
        "always_sync_gradient_wire_bytes_per_rank":
            curve["always_sync_gradient_wire_bytes_per_rank"],
        "report_window": full["window"],
        "points": curve["points"],
        "chosen": chosen,
        "least_stash_gb": least["stash_bytes"] / GB,
        "all_local_stash_gb": local["stash_bytes"] / GB,
        "chosen_stash_gb": chosen["stash_bytes"] / GB,
        "seed_always_sync_total_gb": seed["always_sync_gb"],
        "seed_no_sync_total_gb": seed["no_sync_gb"],
        "predicted_no_sync_total_gb": total(local),
        "predicted_chosen_total_gb": total(chosen),
        "measured_added_gb": seed["no_sync_gb"] - seed["always_sync_gb"],
        "predicted_added_gb": (local["stash_bytes"] - least["stash_bytes"]) / GB,
    }


def plot(results, png):
    z2, z3 = results
    offset = z2["seed_always_sync_total_gb"] - z2["least_stash_gb"]
    rows = []
    for r in results:  # index 0, 1: the curves (on-curve points only)
        rows += [[p["stash_bytes"] / GB, p["gradient_wire_bytes_per_rank"] / GB]
                 for p in r["points"] if p["sampled"]] + [[], []]
    for r in results:  # index 2, 3: the chosen points
        rows += [[r["chosen"]["stash_bytes"] / GB,
                  r["chosen"]["gradient_wire_bytes_per_rank"] / GB], [], []]
    for r in results:  # index 4, 5: the seed's totals, in stash coordinates
        off = r["seed_always_sync_total_gb"] - r["least_stash_gb"]
        rows += [[r["seed_always_sync_total_gb"] - off,
                  r["points"][0]["gradient_wire_bytes_per_rank"] / GB],
                 [r["seed_no_sync_total_gb"] - off,
                  r["points"][-1]["gradient_wire_bytes_per_rank"] / GB], [], []]
    local_y = z2["points"][-1]["gradient_wire_bytes_per_rank"] / GB
    top_y = z2["points"][0]["gradient_wire_bytes_per_rank"] / GB
    seed_x = z2["seed_no_sync_total_gb"] - offset
    gnuplot(png, rows, f"""
set terminal png size 960,640 noenhanced
set output '{{png}}'
set title "Llama-2-7B shapes (32 layers, f32), W = {z2['world']}, K = {z2['k']}: stash memory against gradient traffic\\n(ZeRO-2 and ZeRO-3 coincide: the stash does not depend on the gather mode)"
set xlabel 'stash memory per rank (GB)'
set ylabel 'gradient bytes on the wire per rank per window (GB)'
set x2label 'predicted ZeRO-2 total per GPU (GB) = seed always-sync {z2['seed_always_sync_total_gb']} + stash - {z2['least_stash_gb']:.2f} (ZeRO-3: {z3['seed_always_sync_total_gb'] - z3['least_stash_gb']:.2f} + stash)'
set link x2 via x+{offset} inverse x-{offset}
set x2tics 40, 5
set format x2 '%.0f'
set xtics nomirror
set xrange [0:31]
set key top right
set grid
set yrange [0:100]
set label 1 sprintf("predicted, all local: ZeRO-2 %.1f GB, ZeRO-3 %.1f GB total", {z2['predicted_no_sync_total_gb']}, {z3['predicted_no_sync_total_gb']}) at {z2['all_local_stash_gb'] - 0.3}, {local_y - 6} right
set label 2 sprintf("seed measured no_sync: %.1f, %.1f GB", {z2['seed_no_sync_total_gb']}, {z3['seed_no_sync_total_gb']}) at {seed_x + 0.3}, {local_y - 12} right
set label 3 sprintf("always-sync (seed %.1f, %.1f GB)", {z2['seed_always_sync_total_gb']}, {z3['seed_always_sync_total_gb']}) at {z2['least_stash_gb'] + 0.8}, {top_y + 2} left
plot '{{data}}' index 0 using 1:2 with linespoints lw 2 pt 7 title 'ZeRO-2 curve', \\
     '' index 1 using 1:2 with linespoints dt 2 pt 6 ps 2 title 'ZeRO-3 curve', \\
     '' index 2 using 1:2 with points pt 9 ps 3 title 'chosen at the mid budget (ZeRO-2)', \\
     '' index 3 using 1:2 with points pt 8 ps 3 title 'chosen (ZeRO-3)', \\
     '' index 4 using 1:2 with points pt 5 ps 2 title 'seed ZeRO-2 measured totals (40.3, 65.6 GB) on the x2 scale', \\
     '' index 5 using 1:2 with points pt 4 ps 2 title 'seed ZeRO-3 measured totals (27.1, 52.5 GB), shifted to ZeRO-3'
""")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--world", type=int, default=8)
    ap.add_argument("--layers", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--ffn", type=int, default=11008)
    ap.add_argument("--json", help="write the curves and the comparison here")
    ap.add_argument("--png", help="plot the curves here (gnuplot)")
    args = ap.parse_args()
    dist_opt = os.path.join(args.build, "bin", "dist-opt")
    with tempfile.TemporaryDirectory() as tmp:
        results = [measure(args, dist_opt, mode, tmp) for mode in ("zero2", "zero3")]
    same = [(p["stash_bytes"], p["gradient_wire_bytes_per_rank"]) for p in results[0]["points"]] \
        == [(p["stash_bytes"], p["gradient_wire_bytes_per_rank"]) for p in results[1]["points"]]

    print("Llama-2-7B shapes, %d layers, W = %d, K = %d, f32 (GB = 1e9 bytes)"
          % (args.layers, args.world, args.k))
    print("the curves of ZeRO-2 and ZeRO-3 are %s" % (
        "identical: the stash and the gradient syncs do not depend on the gather mode"
        if same else "DIFFERENT"))
    r = results[0]
    print("\n%14s %26s %6s %6s %6s" % ("stash GB/rank", "gradient GB/rank/window",
                                       "local", "shard", "synced"))
    for p in r["points"]:
        print("%14.3f %26.3f %6d %6d %6d%s" % (
            p["stash_bytes"] / GB, p["gradient_wire_bytes_per_rank"] / GB, p["local"],
            p["shard"], p["synced"], "  chosen (budget %.3f GB)" % (r["budget_bytes"] / GB)
            if p["chosen"] else ""))
    a = r["always_sync_gradient_wire_bytes_per_rank"]
    lo, hi = r["points"][0], r["points"][-1]
    c = r["chosen"]
    print("\nalways-sync %.3f GB/rank/window; all-local %.3f (%.2fx less) for %.3f GB more "
          "stash; the mid budget's point %.3f (%.2fx less) for %.3f GB more"
          % (a / GB, hi["gradient_wire_bytes_per_rank"] / GB,
             a / hi["gradient_wire_bytes_per_rank"],
             (hi["stash_bytes"] - lo["stash_bytes"]) / GB,
             c["gradient_wire_bytes_per_rank"] / GB, a / c["gradient_wire_bytes_per_rank"],
             (c["stash_bytes"] - lo["stash_bytes"]) / GB))
    print("\nTotal memory per GPU. The seed: Llama-2-7B with its embedding and output "
          "layer, dtypes not stated; ours: f32 gradients, syncs and stash, no embedding or "
          "output layer (gen_llama_ir.py has no vocabulary):")
    print("| mode | seed always-sync GB | seed no_sync GB | measured added | our added "
          "(all-local - least stash) | predicted no_sync GB | predicted - measured | "
          "predicted at the mid budget GB |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        print("| %s | %.1f | %.1f | %.1f | %.2f | %.2f | %+.2f | %.2f |" % (
            "ZeRO-2" if r["mode"] == "zero2" else "ZeRO-3",
            r["seed_always_sync_total_gb"], r["seed_no_sync_total_gb"],
            r["measured_added_gb"], r["predicted_added_gb"],
            r["predicted_no_sync_total_gb"],
            r["predicted_no_sync_total_gb"] - r["seed_no_sync_total_gb"],
            r["predicted_chosen_total_gb"]))
    # What the missing vocabulary would add, by hand (not compiled): Llama-2's
    # embedding and output layer, 32000 x hidden each, f32, stashed unsharded
    # beyond this rank's shard.
    vocab_added = 2 * 32000 * args.hidden * 4 * (args.world - 1) / args.world / GB
    for r in results:
        r["vocab_added_gb_by_hand"] = vocab_added
    print("\nThe embedding and output layer (2 x 32000 x %d, f32) would add %.2f GB: "
          "predicted no_sync %.2f (ZeRO-2), %.2f (ZeRO-3) against 65.6, 52.5 measured. "
          "A bf16 stash would add about half of ours (%.1f GB), far below the "
          "measured %.1f: the seed's stash looks f32 (or f32-sized)."
          % (args.hidden, vocab_added,
             results[0]["predicted_no_sync_total_gb"] + vocab_added,
             results[1]["predicted_no_sync_total_gb"] + vocab_added,
             (results[0]["predicted_added_gb"] + vocab_added) / 2,
             results[0]["measured_added_gb"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"gb": GB, "curves_identical": same, "results": results}, f, indent=1)
    if args.png:
        plot(results, args.png)


if __name__ == "__main__":
    main()
