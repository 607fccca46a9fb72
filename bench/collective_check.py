#!/usr/bin/env python3
"""What the collective check (DIST_CHECK_COLLECTIVES) costs (bench/README.md).

Runs bin/collective_check (per call: the blocking all_reduce and the async
all_reduce + wait at 1 to 1M f32 elements) and two compiled windows
(bin/step-throughput-toy-zero3 and -wide-ddp, the one-round window) on 2
ranks, with the check off and on, alternating which goes first each round.
Prints, per row, the medians over rounds, the time the check adds and the
ratio on/off.

Usage: bench/collective_check.py [--rounds 5] [--json FILE] [--build DIR]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEPS = ["step-throughput-toy-zero3", "step-throughput-wide-ddp"]


def mpirun(exe, args, check):
    cmd = ["mpirun", "--oversubscribe", "--bind-to", "none", "-np", "2"]
    if os.geteuid() == 0:
        cmd.insert(1, "--allow-run-as-root")
    cmd += ["-x", f"DIST_CHECK_COLLECTIVES={check}",
            "-x", "MALLOC_MMAP_THRESHOLD_=2000000000",
            "-x", "MALLOC_TRIM_THRESHOLD_=4000000000", exe] + args
    out = subprocess.run(cmd, capture_output=True, text=True)
    lines = [l for l in out.stdout.splitlines() if l.startswith("{")]
    if out.returncode or not lines:
        sys.stderr.write(out.stdout + out.stderr)
        raise SystemExit(f"collective_check: {os.path.basename(exe)} with "
                         f"check={check} failed (exit {out.returncode})")
    return json.loads(lines[-1])


def samples(build, check):
    """One round: {row name: microseconds}."""
    got = {}
    r = mpirun(os.path.join(build, "bin", "collective_check"), [], check)
    for row in r["rows"]:
        got[f"all_reduce {row['elements']} f32, blocking"] = row["blocking_us"]
        got[f"all_reduce {row['elements']} f32, async + wait"] = row["async_us"]
    for step in STEPS:
        exe = os.path.join(build, "bin", step)
        if os.path.exists(exe):
            w = mpirun(exe, ["--reps", "5"], check)
            got[f"{step[len('step-throughput-'):]} window (K=4)"] = (
                w["schemes"]["one_round"]["window_ms"] * 1e3)
    return got


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json")
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = parser.parse_args()
    runs = {0: [], 1: []}
    for i in range(args.rounds):
        for check in ((0, 1) if i % 2 == 0 else (1, 0)):
            runs[check].append(samples(args.build, check))
    rows = []
    print(f"{'':44} {'off us':>10} {'on us':>10} {'added us':>9} {'on/off':>7}")
    for name in runs[0][0]:
        off = statistics.median(s[name] for s in runs[0])
        on = statistics.median(s[name] for s in runs[1])
        rows.append({"row": name, "off_us": round(off, 3), "on_us": round(on, 3),
                     "added_us": round(on - off, 3), "ratio": round(on / off, 3)})
        print(f"{name:44} {off:10.2f} {on:10.2f} {on - off:9.2f} {on / off:7.3f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rounds": args.rounds, "ranks": 2, "rows": rows}, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
