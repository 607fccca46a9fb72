#!/usr/bin/env python3
"""Compile-time scaling of the dist passes on Llama-shaped training steps.

For each layer count, bench/gen_llama_ir.py writes the frontend IR (ZeRO-3
by default); the benchmark times, with dist-opt from the build:
  parse+print       dist-opt in.mlir                     (the yardstick)
  apply-no-sync     dist-opt synced.mlir -apply-no-sync  (synced = after
                    -dist-expand-synchronize -dist-insert-grad-sync)
  pipeline          dist-opt in.mlir --dist-no-sync-pipeline
  mlir-opt -cse     upstream mlir-opt on the generic form of synced.mlir
Medians over repeats after one warm-up, wall time of the whole process, each
tool on one thread (--mlir-disable-threading).
Reports the pass's cost over parse+print of the same file, and the exponent
of time ~ layers^e fitted (least squares, log-log) over 8..max layers.

The lowering, --dist-lower-to-llvm, on one function with N collectives
(bench/gen_collectives_ir.py: N/2 gathered parameters used, N/2 gradient
shards returned), for each N of --collectives, and on the frontend step
of --lower-layers Llama layers (ZeRO-3, after --dist-no-sync-pipeline):
the whole process (printing to /dev/null included) and its passes, with
the exponent of time ~ N^e. --layers '' skips the passes' section.

Usage: bench/compile_time.py [--layers 1,8,32,128,1024] [--reps 5]
                             [--mode zero3] [--json FILE]
                             [--collectives 1000,2000,4000,8000]
                             [--lower-layers 80]
"""

import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

from plotting import gnuplot

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# One thread: on a small shared machine MLIR's thread pool makes whole-process
# times swing by tens of percent from run to run, for both sides alike.
SERIAL = ["--mlir-disable-threading"]


def timed(cmd, reps):
    cmd = cmd + SERIAL
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)  # warm-up
    samples = []
    for _ in range(reps):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def timers(entries, times):
    """Adds the wall seconds of every timer of MLIR's JSON timing report to
    `times`, by name: the parser, each pass (nested ones too) and the printer;
    not the analyses ("(A) ..."), Rest or Total. A pass that runs twice is
    the sum of its runs."""
    for entry in entries:
        name = entry.get("name")  # each "passes" list ends with an empty {}
        if name is None or name in ("Total", "Rest") or name.startswith("(A) "):
            continue
        times[name] = times.get(name, 0.0) + entry["wall"]["duration"]
        timers(entry.get("passes", []), times)


def pass_times(cmd, reps):
    """Median wall seconds of each timer of the -mlir-timing report
    (--mlir-output-format=json, on stderr after any diagnostics) over `reps`
    runs after one warm-up."""
    samples = {}
    for i in range(reps + 1):
        err = subprocess.run(cmd + SERIAL + ["-mlir-timing", "--mlir-output-format=json",
                                             "-o", os.devnull],
                             check=True, capture_output=True, text=True).stderr
        if i == 0:
            continue
        start = re.search(r"^\[$", err, re.MULTILINE)
        if not start:
            raise SystemExit(f"compile_time: no JSON timing report from {' '.join(cmd)}:\n{err}")
        times = {}
        timers(json.JSONDecoder().raw_decode(err[start.start():])[0], times)
        for name, value in times.items():
            samples.setdefault(name, []).append(value)
    return {k: statistics.median(v) for k, v in samples.items()}


def timed_with_passes(cmd, reps):
    """Median wall seconds of the whole process and of each timer of its
    -mlir-timing report (as pass_times), from the same `reps` runs after
    one warm-up: for commands too slow to run twice as often."""
    walls, samples = [], {}
    for i in range(reps + 1):
        start = time.perf_counter()
        err = subprocess.run(cmd + SERIAL + ["-mlir-timing", "--mlir-output-format=json",
                                             "-o", os.devnull],
                             check=True, capture_output=True, text=True).stderr
        wall = time.perf_counter() - start
        if i == 0:
            continue
        walls.append(wall)
        start = re.search(r"^\[$", err, re.MULTILINE)
        times = {}
        timers(json.JSONDecoder().raw_decode(err[start.start():])[0], times)
        for name, value in times.items():
            samples.setdefault(name, []).append(value)
    return statistics.median(walls), {k: statistics.median(v) for k, v in samples.items()}


def lowering_row(dist_opt, src, reps):
    """Times --dist-lower-to-llvm on `src`; the passes alone exclude parsing
    and printing."""
    wall, passes = timed_with_passes([dist_opt, src, "--dist-lower-to-llvm"], reps)
    alone = sum(v for k, v in passes.items() if k not in ("Parser", "Output"))
    slowest = max((k for k in passes if k not in ("Parser", "Output")), key=passes.get)
    return {"bytes": os.path.getsize(src), "lower_s": wall, "passes_s": alone,
            "print_s": passes.get("Output", 0.0), "slowest_pass": slowest,
            "slowest_pass_s": passes[slowest], "passes": passes}


def lowering_scaling(args, dist_opt, tmp):
    """The lowering's scaling in collectives per function, and a Llama step."""
    result = {"rows": []}
    for n in map(int, filter(None, args.collectives.split(","))):
        src = os.path.join(tmp, f"c{n}.mlir")
        with open(src, "w") as f:
            subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gen_collectives_ir.py"),
                            "--collectives", str(n)], check=True, stdout=f)
        row = dict(collectives=n, **lowering_row(dist_opt, src, args.lower_reps))
        result["rows"].append(row)
        print(f"{n:6d} collectives in one function: --dist-lower-to-llvm {row['lower_s']:7.2f} s "
              f"(passes {row['passes_s']:6.2f} s, printing {row['print_s']:5.2f} s; slowest "
              f"{row['slowest_pass']} {row['slowest_pass_s']:.2f} s)", flush=True)
    rows = result["rows"]
    if len(rows) >= 2:
        ns = [r["collectives"] for r in rows]
        result["exponent_lower"] = fit_exponent(ns, [r["lower_s"] for r in rows])
        result["exponent_passes"] = fit_exponent(ns, [r["passes_s"] for r in rows])
        print("fitted exponent of --dist-lower-to-llvm in collectives per function: "
              "whole process %.3f, passes %.3f" % (result["exponent_lower"],
                                                   result["exponent_passes"]))
    if args.lower_layers:
        src = os.path.join(tmp, f"llama{args.lower_layers}.mlir")
        synced = os.path.join(tmp, f"llama{args.lower_layers}.no_sync.mlir")
        with open(src, "w") as f:
            subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gen_llama_ir.py"),
                            "--layers", str(args.lower_layers), "--hidden", str(args.hidden),
                            "--mode", "zero3", "--world", "4"], check=True, stdout=f)
        subprocess.run([dist_opt, src, "--dist-no-sync-pipeline", "-o", synced], check=True)
        with open(synced) as f:
            text = f.read()
        count = len(re.findall(r"dist\.(all_gather|reduce_scatter|all_reduce) ", text))
        row = dict(layers=args.lower_layers, collectives=count,
                   **lowering_row(dist_opt, synced, args.lower_reps))
        result["llama"] = row
        print(f"Llama step, {args.lower_layers} layers (ZeRO-3, {count} collectives in the module): "
              f"--dist-lower-to-llvm {row['lower_s']:.2f} s (passes {row['passes_s']:.2f} s, "
              f"printing {row['print_s']:.2f} s; slowest {row['slowest_pass']} "
              f"{row['slowest_pass_s']:.2f} s)", flush=True)
    return result


def fit_exponent(xs, ys):
    lx = [math.log(x) for x in xs]
    ly = [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    num = sum((a - mx) * (b - my) for a, b in zip(lx, ly))
    den = sum((a - mx) ** 2 for a in lx)
    return num / den


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--layers", default="1,8,32,128,1024")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--mode", default="zero3")
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--mlir-opt", default="/usr/lib/llvm-22/bin/mlir-opt")
    ap.add_argument("--json")
    ap.add_argument("--png", help="log-log plot of the times against layers (gnuplot)")
    ap.add_argument("--collectives", default="1000,2000,4000,8000",
                    help="collectives per function for the lowering ('' skips it)")
    ap.add_argument("--lower-layers", type=int, default=80,
                    help="Llama layers of the lowered step (0 skips it)")
    ap.add_argument("--lower-reps", type=int, default=3)
    args = ap.parse_args()
    dist_opt = os.path.join(args.build, "bin", "dist-opt")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        lowering = lowering_scaling(args, dist_opt, tmp)
        for layers in map(int, filter(None, args.layers.split(","))):
            src = os.path.join(tmp, f"l{layers}.mlir")
            synced = os.path.join(tmp, f"l{layers}.synced.mlir")
            generic = os.path.join(tmp, f"l{layers}.generic.mlir")
            with open(src, "w") as f:
                subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gen_llama_ir.py"),
                                "--layers", str(layers), "--hidden", str(args.hidden),
                                "--mode", args.mode, "--world", "4"], check=True, stdout=f)
            subprocess.run([dist_opt, src, "-dist-expand-synchronize",
                            "-dist-insert-grad-sync", "-o", synced], check=True)
            subprocess.run([dist_opt, synced, "-mlir-print-op-generic", "-o", generic],
                           check=True)
            reps = args.reps if layers < 1024 else max(3, args.reps // 2)
            row = {
                "layers": layers,
                "bytes": os.path.getsize(synced),
                "parse_print_s": timed([dist_opt, synced], reps),
                "apply_no_sync_s": timed([dist_opt, synced, "-apply-no-sync"], reps),
                "pipeline_s": timed([dist_opt, src, "--dist-no-sync-pipeline"], reps),
                "parse_print_src_s": timed([dist_opt, src], reps),
                "mlir_opt_cse_s": timed([args.mlir_opt, generic, "--allow-unregistered-dialect",
                                         "-cse"], reps),
            }
            # Inside the process: the pass alone, and every pass of the pipeline.
            row["apply_no_sync_passes"] = pass_times([dist_opt, synced, "-apply-no-sync"], reps)
            # The pass without the verifier run dist-opt does after each pass.
            row["apply_no_sync_unverified_passes"] = pass_times(
                [dist_opt, synced, "-apply-no-sync", "-verify-each=false"], reps)
            row["pipeline_passes"] = pass_times([dist_opt, src, "--dist-no-sync-pipeline"], reps)
            row["apply_no_sync_overhead"] = row["apply_no_sync_s"] / row["parse_print_s"] - 1
            row["pipeline_overhead"] = row["pipeline_s"] / row["parse_print_src_s"] - 1
            rows.append(row)
            print(f"{layers:5d} layers {row['bytes'] / 1e6:8.2f} MB  parse+print "
                  f"{row['parse_print_s']:7.3f} s  apply-no-sync {row['apply_no_sync_s']:7.3f} s "
                  f"({100 * row['apply_no_sync_overhead']:+5.1f}%)  pipeline "
                  f"{row['pipeline_s']:7.3f} s ({100 * row['pipeline_overhead']:+5.1f}%)  "
                  f"mlir-opt -cse {row['mlir_opt_cse_s']:7.3f} s", flush=True)
            print("      in process: " + ", ".join(
                f"{k} {v:.4f} s" for k, v in row["pipeline_passes"].items()), flush=True)
    # Below 32 layers the ~50 ms of process start-up dominates every time.
    big = [r for r in rows if r["layers"] >= 32]
    result = {"mode": args.mode, "hidden": args.hidden, "reps": args.reps, "rows": rows,
              "lowering": lowering}
    if len(big) >= 2:
        layers = [r["layers"] for r in big]
        for key in ("parse_print_s", "apply_no_sync_s", "pipeline_s"):
            result[f"exponent_{key[:-2]}"] = fit_exponent(layers, [r[key] for r in big])
        result["exponent_apply_no_sync_pass"] = fit_exponent(
            layers, [r["apply_no_sync_passes"]["ApplyNoSyncPass"] for r in big])
        names = set.intersection(*(set(r["pipeline_passes"]) for r in big))
        result["exponent_pipeline_passes"] = {
            n: fit_exponent(layers, [r["pipeline_passes"][n] for r in big]) for n in sorted(names)}
        print("fitted exponent over 32+ layers (whole process): apply-no-sync %.3f, "
              "pipeline %.3f, parse+print %.3f" % (result["exponent_apply_no_sync"],
                                                 result["exponent_pipeline"],
                                                 result["exponent_parse_print"]))
        print("fitted exponent over 32+ layers (in process): -apply-no-sync pass %.3f; " %
              result["exponent_apply_no_sync_pass"] + ", ".join(
                  f"{n} {e:.3f}" for n, e in result["exponent_pipeline_passes"].items()))
    at32 = [r for r in rows if r["layers"] == 32]
    if at32:
        print("at 32 layers: apply-no-sync adds %+.1f%% over parse+print (target <= 10%%), "
              "the pipeline %+.1f%%" % (100 * at32[0]["apply_no_sync_overhead"],
                                       100 * at32[0]["pipeline_overhead"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)
    if args.png and rows:
        plot(rows, args.png, args.mode)


def plot(rows, png, mode):
    # columns: layers, parse+print, apply-no-sync, pipeline, cse
    data = [[r["layers"], r["parse_print_s"], r["apply_no_sync_s"], r["pipeline_s"],
              r["mlir_opt_cse_s"]] for r in rows]
    gnuplot(png, data, f"""
set terminal png size 800,520
set output '{{png}}'
set title 'dist-opt on Llama-shaped training steps ({mode})'
set xlabel 'layers'
set ylabel 'seconds (median, whole process)'
set logscale xy
set key top left
set grid
plot '{{data}}' using 1:2 with linespoints title 'parse + print', \\
     '' using 1:3 with linespoints title '-apply-no-sync', \\
     '' using 1:4 with linespoints title '--dist-no-sync-pipeline', \\
     '' using 1:5 with linespoints title 'mlir-opt -cse'
""")


if __name__ == "__main__":
    main()
