#!/usr/bin/env python3
"""What no_sync buys on slow links: step throughput across two hosts.

Runs bin/step-throughput-wide-<mode> (bench/step_throughput.cpp: the wide
MLP, K = 4, its three schemes timed in one run) on 2 hosts x 1 rank made by
scripts/multihost.sh (network namespaces on this machine, TCP between them),
with the data link unshaped and rate-shaped with tc tbf at 10 and 1 Gbit/s.
Prints per mode and rate the window time of the one-round window (dist),
Thunder's two rounds and always-sync, and the ratios, from the same run.
Timings move by ~0.2x between runs on this shared 2-core machine: reported,
not asserted. Needs root (namespaces); exits 77 otherwise.

Usage: bench/multihost.py [--build build] [--reps 5] [--json FILE]
"""

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RATES = [("unshaped", None), ("10 Gbit/s", "10gbit"), ("1 Gbit/s", "1gbit")]


def run(build, mode, rate, reps):
    exe = os.path.join(build, "bin", "step-throughput-wide-" + mode)
    cmd = [os.path.join(ROOT, "scripts", "multihost.sh")]
    if rate:
        cmd += ["--rate", rate]
    cmd += ["--", "sh", "-c", '$MULTIHOST_MPIRUN "$0" --reps %d' % reps, exe]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if out.returncode == 77:
        sys.stderr.write(out.stderr)
        sys.exit(77)
    lines = [l for l in out.stdout.splitlines() if l.startswith("{")]
    if out.returncode or not lines:
        sys.stderr.write(out.stdout + out.stderr)
        sys.exit("multihost bench: %s at %s failed (exit %d)" % (mode, rate, out.returncode))
    return json.loads(lines[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--json")
    args = parser.parse_args()
    rows = []
    print("| mode | data link | one round ms | two rounds ms | always-sync ms | "
          "vs always-sync | vs two rounds | grad bytes/window (1, 2, always) |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for mode in ("ddp", "zero2"):
        for label, rate in RATES:
            s = run(args.build, mode, rate, args.reps)["schemes"]
            one, two, always = (s[k]["window_ms"] for k in ("one_round", "two_round", "always_sync"))
            b = [s[k]["grad_bytes"] for k in ("one_round", "two_round", "always_sync")]
            rows.append({"mode": mode, "link": label, "one_round_ms": one, "two_round_ms": two,
                         "always_sync_ms": always, "grad_bytes": b})
            print("| %s | %s | %.1f | %.1f | %.1f | %.2f | %.2f | %s |"
                  % (mode, label, one, two, always, always / one, two / one,
                     ", ".join("{:,}".format(x) for x in b)), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
