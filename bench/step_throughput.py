#!/usr/bin/env python3
"""Step throughput and memory with and without no_sync (bench/README.md).

Runs bin/step-throughput-<model>-<mode> (bench/step_throughput.cpp) under
mpirun: on 2 ranks for the ToyModel and the wide MLP in DDP, ZeRO-2 and
ZeRO-3, and on 4 ranks for the ToyModel in HSDP on a [2, 2] mesh, full
no_sync and hsdp-partial (4 ranks on this 2-core machine: their times are
oversubscribed, their byte and memory figures are exact). One row per run:

  samples/s of the one-round window (dist), Thunder's two-round scheme and
  always-sync; the speed-up of one-round over always-sync; gradient bytes
  per window of each (from the runtime's statistics); the one-round window
  over the ideal K * compute + one round of gradient collectives; peak stash
  bytes during the window and bytes held after it.

Usage: bench/step_throughput.py [--reps 15] [--json FILE] [--build DIR]
Exit status 1 if a run fails (the driver checks that the schemes agree and
that the statistics keep the one-round contract).
"""

import argparse
import json
import os
import subprocess
import sys

from plotting import gnuplot

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNS = [(model, mode, 2) for model in ("toy", "wide") for mode in ("ddp", "zero2", "zero3")]
RUNS += [("toy", "hsdp", 4), ("toy", "hsdp-partial", 4)]


def run(build, model, mode, ranks, reps):
    exe = os.path.join(build, "bin", f"step-throughput-{model}-{mode}")
    cmd = ["mpirun", "--oversubscribe", "--bind-to", "none", "-np", str(ranks)]
    if os.geteuid() == 0:
        cmd.insert(1, "--allow-run-as-root")
    # glibc would otherwise hand OpenMPI's per-call temporaries back to the
    # kernel (../shared/MACHINE-NOTES.md), as in runtime_vs_mpi.
    cmd += ["-x", "MALLOC_MMAP_THRESHOLD_=2000000000",
            "-x", "MALLOC_TRIM_THRESHOLD_=4000000000", exe, "--reps", str(reps)]
    out = subprocess.run(cmd, capture_output=True, text=True)
    lines = [l for l in out.stdout.splitlines() if l.startswith("{")]
    if out.returncode or not lines:
        sys.stderr.write(out.stdout + out.stderr)
        raise SystemExit(f"step_throughput: {model} {mode} failed (exit {out.returncode})")
    return json.loads(lines[-1])


def row(r):
    s = r["schemes"]
    one, two, always = s["one_round"], s["two_round"], s["always_sync"]
    return {
        "model": r["model"], "mode": r["mode"], "ranks": r["world"],
        "one_round_sps": one["samples_per_s"], "two_round_sps": two["samples_per_s"],
        "always_sync_sps": always["samples_per_s"],
        "speedup": always["window_ms"] / one["window_ms"],
        "speedup_vs_two_round": two["window_ms"] / one["window_ms"],
        "grad_bytes": [one["grad_bytes"], two["grad_bytes"], always["grad_bytes"]],
        "bytes_fraction": one["grad_bytes"] / always["grad_bytes"],
        "bytes_vs_two_round": one["grad_bytes"] / two["grad_bytes"],
        "comm_share": r["comm_round_ms"] / (r["compute_ms"] + r["comm_round_ms"]),
        "ratio_to_ideal": one["window_ms"] / r["ideal_window_ms"],
        "stash_peak": one["stash_peak_bytes"], "stash_after": one["stash_after_bytes"],
        "unsharded": r["unsharded_grad_bytes"], "stash_expected": r["stash_expected_bytes"],
    }


def plot(rows, png):
    """Samples/s of each scheme over always-sync's, one group per run."""
    data = []  # columns: run, one_round, two_round, always_sync
    for r in rows:
        if r["ranks"] != 2:  # oversubscribed: no throughput figure
            continue
        data.append([f'"{r["model"]}\\n{r["mode"]}"',
                     f'{r["one_round_sps"] / r["always_sync_sps"]:.4f}',
                     f'{r["two_round_sps"] / r["always_sync_sps"]:.4f}', "1.0"])
    gnuplot(png, data, """
set terminal png size 900,500
set output '{png}'
set bmargin 4
set title 'Window throughput over always-sync (2 ranks, K = 4, MPI on CPU)'
set ylabel 'samples/s, relative to always-sync'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key top left
set yrange [0:*]
set grid ytics
plot '{data}' using 2:xtic(1) title 'one round (dist)', '' using 3 title 'two rounds (Thunder)', \\
     '' using 4 title 'always sync'
""")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--json", help="write the raw runs and the table here")
    ap.add_argument("--png", help="write the plot here (gnuplot)")
    args = ap.parse_args()
    raw = [run(args.build, m, mode, ranks, args.reps) for m, mode, ranks in RUNS]
    rows = [row(r) for r in raw]
    print("| model | mode | ranks | comm share | samples/s one-round | two-round | always-sync | "
          "speed-up vs always | vs two-round | grad bytes/window (1, 2, always) | "
          "1/K? | ratio to ideal | stash peak (expected) | stash after |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        b = r["grad_bytes"]
        print(f'| {r["model"]} | {r["mode"]} | {r["ranks"]} | {r["comm_share"]:.0%} | {r["one_round_sps"]:.0f} | '
              f'{r["two_round_sps"]:.0f} | {r["always_sync_sps"]:.0f} | {r["speedup"]:.2f} | '
              f'{r["speedup_vs_two_round"]:.2f} | {b[0]}, {b[1]}, {b[2]} | '
              f'{"yes" if b[0] * 4 == b[2] and 2 * b[0] == b[1] else "NO"} | '
              f'{r["ratio_to_ideal"]:.3f} | {r["stash_peak"]} ({r["stash_expected"]}) | '
              f'{r["stash_after"]} |')
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"runs": raw, "table": rows}, f, indent=1)
    if args.png:
        plot(rows, args.png)


if __name__ == "__main__":
    main()
