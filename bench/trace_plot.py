#!/usr/bin/env python3
"""Draws the last sync step of a DIST_TRACE run as a timeline PNG.

Reads the per-rank Chrome-trace files the runtime writes (DIST_TRACE, see
docs/Runtime.md): per rank, one row for the host's waits and one lane per collective in
flight at once (from issue to the completion the runtime observed). Time the host
spends neither waiting nor issuing is compute, so a collective bar that
extends over host time without a wait is communication overlapping compute.
The span drawn is the last --collectives collectives of rank 0 (one sync
step), from the end of rank 0's previous wait (the compute before them).

Usage: bench/trace_plot.py --png out.png --collectives 4 trace.0.json trace.1.json
"""

import argparse
import json

from plotting import gnuplot


def events(path):
    with open(path) as f:
        return [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--png", required=True)
    p.add_argument("--collectives", type=int, required=True,
                   help="collectives in one sync step")
    p.add_argument("--title", default="one sync step")
    p.add_argument("traces", nargs="+")
    args = p.parse_args()
    ranks = [events(t) for t in args.traces]
    comm0 = sorted((e for e in ranks[0] if e["tid"] == 1), key=lambda e: e["ts"])
    last = comm0[-args.collectives:]
    begin = min(e["ts"] for e in last)
    end = max(e["ts"] + e["dur"] for e in last)
    # Start where rank 0's previous step ended (its last wait before the
    # first of these issues), so the compute before the first issue shows.
    before = [e["ts"] + e["dur"] for e in ranks[0] if e["tid"] == 0 and
              e["ts"] + e["dur"] <= begin]
    begin = max(before) if before else begin - 0.5 * (end - begin)
    # Rows: per rank, the host's waits, then one lane per collective in
    # flight at once (a collective takes the lowest lane free at its issue).
    rows, tics, y = [], [], 0
    for r, evs in enumerate(ranks):
        shown = sorted((e for e in evs if begin <= e["ts"] <= end),
                       key=lambda e: e["ts"])
        lanes = []  # end time of each lane's last collective
        placed = []
        for e in shown:
            if e["tid"] != 1:
                placed.append((e, 0))
                continue
            lane = next((i for i, t in enumerate(lanes) if t <= e["ts"]), len(lanes))
            if lane == len(lanes):
                lanes.append(0)
            lanes[lane] = e["ts"] + e["dur"]
            placed.append((e, 1 + lane))
        for e, lane in placed:
            lo = (max(e["ts"], begin) - begin) / 1e3
            hi = (min(e["ts"] + e["dur"], end) - begin) / 1e3
            h = 0.3 if lane else 0.2
            rows.append([f"{(lo + hi) / 2:.4f}", y + lane, f"{lo:.4f}", f"{hi:.4f}",
                         y + lane - h, y + lane + h, 1 if lane else 2])
        tics.append(f'"rank {r} host waits" {y}')
        tics += [f'"rank {r} collective" {y + 1 + i}' for i in range(len(lanes))]
        y += 2 + len(lanes)
    tics = ", ".join(tics)
    gnuplot(args.png, rows, f"""
set terminal png size 1000,{160 + 35 * y}
set output "{{png}}"
set title "{args.title}"
set xlabel "ms"
set ytics ({tics})
set yrange [-0.7:{y - 1.3}]
set style fill solid 0.6 border -1
set key off
plot "{{data}}" using 1:2:3:4:5:6:7 with boxxyerror lc variable
""")


if __name__ == "__main__":
    main()
