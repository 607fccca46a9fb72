#!/usr/bin/python3
"""Memory per rank of a compiled training step, from its comm report.

Reads the JSON of `dist-opt STEP --dist-comm-report=format=json` (the
step compiled by the no_sync pipeline) and models what each rank holds at
its peak under FSDP's mixed precision with AdamW, the setup of the
published Llama-2-7B measurement (docs/Design.md, "The communication
report"; bench/README.md, "At the seed's scale, by prediction"):

  held parameters   each parameter's held (local) bytes, from the IR
  gradients         the synced gradient, as held (local) bytes
  optimizer state   AdamW's two moments, twice the held bytes
  gathered params   ZeRO-2 keeps every parameter unsharded from the
                    forward to the backward, in the compute type
                    (--compute-bytes per element); ZeRO-3 gathers one
                    layer at a time, part of the activation term
  stash             no_sync only: the stashes the compiled stash ops hold
                    (the report's `stashes`, at their points)
  activations       one term, the same in every configuration, given
                    (--activations-gib) or calibrated on one measured
                    figure (--calibrate MODE,NO_SYNC,GIB)

  perf_model.py memory --report R.json --mode zero3 [--no-sync]
        [--activations-gib A | --calibrate zero3,off,27.1]
  perf_model.py published --report-zero2 R2.json --report-zero3 R3.json

`published` predicts the four memory figures of the published table
(ZeRO-2 and ZeRO-3, with and without no_sync) with the activation term
calibrated on ZeRO-3 without no_sync, and prints each error. Figures are
GiB (2^30 bytes): the published no_sync increases, 25.3 and 25.4, are the
unsharded f32 gradient of 6.738e9 parameters in GiB (25.10), not in GB
(26.95).
"""

import argparse
import json
import sys

GIB = float(1 << 30)

# The published measurement (issue 35): Llama-2-7B, 8 H100s, micro-batch 1,
# global batch 32 (K = 4), no bucketing. Memory in GiB.
PUBLISHED = {
    ("zero2", False): 40.3, ("zero2", True): 65.6,
    ("zero3", False): 27.1, ("zero3", True): 52.5,
}


def load(path):
    with open(path) as f:
        report = json.load(f)
    for key in ("parameters", "stashes"):
        if key not in report:
            sys.exit("perf_model.py: %s has no '%s' (a comm report of an "
                     "older dist-opt?)" % (path, key))
    return report


def terms(report, mode, no_sync, compute_bytes):
    """The modelled bytes per rank, by term (without activations)."""
    def total(entries, key):
        values = [e[key] for e in entries]
        if any(v is None for v in values):
            sys.exit("perf_model.py: a parameter or stash without a byte size")
        return sum(values)

    held = total(report["parameters"], "local_bytes")
    out = {
        "held parameters": held,
        "gradients": held,
        "optimizer state": 2 * held,
        "gathered parameters": 0,
        "stash": total(report["stashes"], "bytes") if no_sync else 0,
    }
    if mode == "zero2":
        out["gathered parameters"] = compute_bytes * total(
            report["parameters"], "elements")
    return out


def memory_gib(report, mode, no_sync, compute_bytes, activations_gib):
    return sum(terms(report, mode, no_sync, compute_bytes).values()) / GIB + \
        activations_gib


def calibrate(report, mode, no_sync, compute_bytes, measured_gib):
    """The activation term that makes the model give `measured_gib`."""
    return measured_gib - memory_gib(report, mode, no_sync, compute_bytes, 0.0)


def cmd_memory(opts):
    report = load(opts.report)
    activations = opts.activations_gib
    if opts.calibrate:
        mode, setting, gib = opts.calibrate.split(",")
        activations = calibrate(report, mode, setting == "on",
                                opts.compute_bytes, float(gib))
    parts = terms(report, opts.mode, opts.no_sync, opts.compute_bytes)
    print("memory per rank, %s%s:" % (opts.mode, ", no_sync" if opts.no_sync else ""))
    for name, value in parts.items():
        print("  %-20s %14d bytes %10.3f GiB" % (name, value, value / GIB))
    print("  %-20s %14s       %10.3f GiB" % ("activations", "", activations))
    print("  %-20s %14d bytes %10.3f GiB" % (
        "total", sum(parts.values()) + round(activations * GIB),
        sum(parts.values()) / GIB + activations))


def cmd_published(opts):
    reports = {"zero2": load(opts.report_zero2), "zero3": load(opts.report_zero3)}
    anchor = ("zero3", False)
    activations = calibrate(reports["zero3"], "zero3", False,
                            opts.compute_bytes, PUBLISHED[anchor])
    print("activation term %.2f GiB (calibrated on ZeRO-3 without no_sync)"
          % activations)
    print("| configuration | no_sync | published GiB | predicted GiB | error |")
    print("|---|---|---|---|---|")
    worst = 0.0
    for mode in ("zero2", "zero3"):
        for no_sync in (False, True):
            predicted = memory_gib(reports[mode], mode, no_sync,
                                   opts.compute_bytes, activations)
            measured = PUBLISHED[(mode, no_sync)]
            error = (predicted - measured) / measured
            note = " (calibrated)" if (mode, no_sync) == anchor else ""
            if (mode, no_sync) != anchor:
                worst = max(worst, abs(error))
            print("| %s | %s | %.1f | %.2f | %+.1f%%%s |" % (
                "ZeRO-2" if mode == "zero2" else "ZeRO-3",
                "on" if no_sync else "off", measured, predicted, 100 * error, note))
    print("worst error of the three predictions: %.1f%%" % (100 * worst))
    return 0 if worst <= opts.max_error else 1


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--compute-bytes", type=int, default=2,
                        help="bytes per element of the gathered parameters "
                             "(2: bf16, FSDP's param_dtype in the published run)")
    sub = parser.add_subparsers(dest="command", required=True)
    memory = sub.add_parser("memory")
    memory.add_argument("--report", required=True)
    memory.add_argument("--mode", choices=["zero2", "zero3"], required=True)
    memory.add_argument("--no-sync", action="store_true")
    memory.add_argument("--activations-gib", type=float, default=0.0)
    memory.add_argument("--calibrate", help="MODE,on|off,GIB: a measured figure")
    published = sub.add_parser("published")
    published.add_argument("--report-zero2", required=True)
    published.add_argument("--report-zero3", required=True)
    published.add_argument("--max-error", type=float, default=0.10,
                           help="fail above this relative error (issue 35: 10%%)")
    opts = parser.parse_args()
    if opts.command == "memory":
        return cmd_memory(opts)
    return cmd_published(opts)


if __name__ == "__main__":
    sys.exit(main())
