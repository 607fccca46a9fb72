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
  perf_model.py time --report R.json --hardware H.json --mfu M --exposed X
        [--k 4] [--compute-type bf16]
  perf_model.py predict --report R.json --hardware H.json --mode zero3
        --k K --mfu M --exposed X --activations-gib A --tokens-per-window T
        (memory per rank and tokens/s, always-sync against the compiled
        no_sync, e.g. the published run's calibration at another scale)
  perf_model.py published --report-zero2 R2.json --report-zero3 R3.json
        [--hardware bench/hardware/h100-sxm-nvlink4.json]

The window's time (`published` also predicts tokens/s): per micro-batch,
each function's floating-point operations (`flops_per_call`) at the
device's peak times an achieved fraction (MFU), plus the fraction of its
communication not hidden behind compute (exposed); each collective takes
the link's latency plus its ring wire bytes per rank (the report's
`wire_bytes_per_rank`) over the link's bus bandwidth (nccl-tests' busbw).
A window runs each sync step's no_sync variant (`no_sync_variants`) K-1
times and the step once, or the step K times always-sync; other functions
(a forward) K times. MFU and the exposed fraction are calibrated on
ZeRO-3's pair; the ZeRO-2 pair is predicted.

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


# Tokens per second of the same runs (8 GPUs together).
PUBLISHED_TOKENS_PER_S = {
    ("zero2", False): 80341.0, ("zero2", True): 82713.0,
    ("zero3", False): 75511.9, ("zero3", True): 77839.0,
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


def link_of(hardware, group_size):
    """The link a ring over `group_size` ranks is limited by: NVLink within
    a node, the network once the group spans nodes."""
    links = hardware["links"]
    if group_size > hardware.get("gpus_per_node", group_size) and "inter_node" in links:
        return links["inter_node"]
    return links["intra_node"]


def comm_seconds(report, hardware):
    """Per function: the seconds of its collectives per call; under None,
    those that run once per window (an epilogue's)."""
    seconds = {}
    for row in report["collectives"]:
        link = link_of(hardware, row.get("group_size", 1))
        t = row["calls_per_call"] * (
            link["latency_us"] * 1e-6 +
            row["wire_bytes_per_rank"] / (link["bus_bandwidth_gb_per_s"] * 1e9))
        key = None if row.get("per_window") else row["function"]
        seconds[key] = seconds.get(key, 0.0) + t
    return seconds


def window_parts(report, k, no_sync):
    """(flops, seconds of communication) of one window, given a link."""
    variants = report.get("no_sync_variants", {})
    steps = set(variants)
    variant_of = {v: s for s, v in variants.items() if v}
    runs = {}
    for name in report["flops_per_call"]:
        if name in variant_of:
            runs[name] = k - 1 if no_sync else 0
        elif name in steps and variants[name]:
            runs[name] = 1 if no_sync else k
        else:
            runs[name] = k
    return runs


def window_model(report, k, no_sync, hardware, peak, mfu, exposed):
    """Seconds of one window."""
    comm = comm_seconds(report, hardware)
    total = exposed * comm.get(None, 0.0)
    for name, times in window_parts(report, k, no_sync).items():
        flops = report["flops_per_call"][name]
        if flops is None:
            sys.exit("perf_model.py: @%s has no static FLOP count" % name)
        total += times * (flops / (peak * 1e12 * mfu) + exposed * comm.get(name, 0.0))
    return total


def calibrate_time(report, k, hardware, peak, t_off, t_on):
    """(MFU, exposed fraction) that give the measured window times: the
    window is linear in 1/MFU and in the exposed fraction."""
    def parts(no_sync):
        compute = window_model(report, k, no_sync, hardware, peak, 1.0, 0.0)
        comm = window_model(report, k, no_sync, hardware, peak, 1e300, 1.0)
        return compute, comm
    (c_off, m_off), (c_on, m_on) = parts(False), parts(True)
    # c_off/mfu + m_off*x = t_off, c_on/mfu + m_on*x = t_on
    det = c_off * m_on - c_on * m_off
    inv_mfu = (t_off * m_on - t_on * m_off) / det
    x = (c_off * t_on - c_on * t_off) / det
    return 1.0 / inv_mfu, x


MODE_NAMES = {"zero2": "ZeRO-2", "zero3": "ZeRO-3"}
ANCHOR = ("zero3", False)  # the memory figure the activation term is fitted to


def published_comparison(reports, compute_bytes, hardware=None, compute_type="bf16",
                         tokens=32 * 4096):
    """The published table predicted from `reports` (ZeRO-2's and ZeRO-3's
    comm reports of the 7B step on 8 ranks): memory with the activation term
    calibrated on ZeRO-3 without no_sync, and, given a `hardware`, tokens/s
    with MFU and the exposed share calibrated on ZeRO-3's two figures."""
    activations = calibrate(reports["zero3"], "zero3", False, compute_bytes,
                            PUBLISHED[ANCHOR])
    out = {"activations_gib": activations, "memory": [], "tokens": []}
    for mode in ("zero2", "zero3"):
        for no_sync in (False, True):
            out["memory"].append({
                "mode": mode, "no_sync": no_sync, "published": PUBLISHED[(mode, no_sync)],
                "predicted": memory_gib(reports[mode], mode, no_sync, compute_bytes,
                                        activations),
                "calibrated": (mode, no_sync) == ANCHOR})
    if hardware is None:
        return out
    peak = hardware["peak_tflops"][compute_type]
    k = 4
    t = {key: tokens / value for key, value in PUBLISHED_TOKENS_PER_S.items()}
    out["mfu"], out["exposed"] = calibrate_time(reports["zero3"], k, hardware, peak,
                                                t[("zero3", False)], t[("zero3", True)])
    for mode in ("zero2", "zero3"):
        for no_sync in (False, True):
            seconds = window_model(reports[mode], k, no_sync, hardware, peak, out["mfu"],
                                   out["exposed"])
            out["tokens"].append({
                "mode": mode, "no_sync": no_sync,
                "published": PUBLISHED_TOKENS_PER_S[(mode, no_sync)],
                "predicted": tokens / seconds, "calibrated": mode == "zero3"})
    return out


def _error(row):
    return (row["predicted"] - row["published"]) / row["published"]


def cmd_published(opts):
    reports = {"zero2": load(opts.report_zero2), "zero3": load(opts.report_zero3)}
    hardware = None
    if opts.hardware:
        with open(opts.hardware) as f:
            hardware = json.load(f)
    result = published_comparison(reports, opts.compute_bytes, hardware,
                                  opts.compute_type, opts.tokens_per_window)
    print("activation term %.2f GiB (calibrated on ZeRO-3 without no_sync)"
          % result["activations_gib"])
    print("| configuration | no_sync | published GiB | predicted GiB | error |")
    print("|---|---|---|---|---|")
    worst = 0.0
    for row in result["memory"]:
        if not row["calibrated"]:
            worst = max(worst, abs(_error(row)))
        print("| %s | %s | %.1f | %.2f | %+.1f%%%s |" % (
            MODE_NAMES[row["mode"]], "on" if row["no_sync"] else "off", row["published"],
            row["predicted"], 100 * _error(row), " (calibrated)" if row["calibrated"] else ""))
    print("worst error of the three predictions: %.1f%%" % (100 * worst))
    if hardware:
        print()
        print("%s: MFU %.3f and %.3f of the communication exposed (calibrated "
              "on ZeRO-3)" % (hardware["name"], result["mfu"], result["exposed"]))
        print("| configuration | no_sync | published tokens/s | predicted tokens/s | error |")
        print("|---|---|---|---|---|")
        rate = {}
        for row in result["tokens"]:
            rate[(row["mode"], row["no_sync"])] = row["predicted"]
            print("| %s | %s | %.0f | %.0f | %+.1f%%%s |" % (
                MODE_NAMES[row["mode"]], "on" if row["no_sync"] else "off", row["published"],
                row["predicted"], 100 * _error(row),
                " (calibrated)" if row["calibrated"] else ""))
        for mode in ("zero2", "zero3"):
            gain = rate[(mode, True)] / rate[(mode, False)] - 1
            measured = PUBLISHED_TOKENS_PER_S[(mode, True)] / \
                PUBLISHED_TOKENS_PER_S[(mode, False)] - 1
            print("no_sync gain, %s: predicted %+.2f%%, published %+.2f%%" % (
                mode, 100 * gain, 100 * measured))
    return 0 if worst <= opts.max_error else 1


def cmd_time(opts):
    with open(opts.report) as f:
        report = json.load(f)
    with open(opts.hardware) as f:
        hardware = json.load(f)
    peak = hardware["peak_tflops"][opts.compute_type]
    for no_sync in (False, True):
        seconds = window_model(report, opts.k, no_sync, hardware, peak, opts.mfu,
                               opts.exposed)
        print("window of %d micro-batches, %s: %.6f s" % (
            opts.k, "no_sync" if no_sync else "always-sync", seconds))


def cmd_predict(opts):
    report = load(opts.report)
    with open(opts.hardware) as f:
        hardware = json.load(f)
    peak = hardware["peak_tflops"][opts.compute_type]
    stash = sum(st["bytes"] for st in report["stashes"]) / GIB
    points = {}
    for st in report["stashes"]:
        points[st["point"]] = points.get(st["point"], 0) + 1
    print("%s, %s, K = %d; stash points %s" % (
        hardware["name"], opts.mode, opts.k,
        ", ".join("%s %d" % kv for kv in sorted(points.items())) or "none"))
    print("| scheme | memory per rank GiB | window s | tokens/s |")
    print("|---|---|---|---|")
    rates = {}
    for no_sync in (False, True):
        gib = memory_gib(report, opts.mode, no_sync, opts.compute_bytes,
                         opts.activations_gib)
        seconds = window_model(report, opts.k, no_sync, hardware, peak,
                               opts.mfu, opts.exposed)
        rates[no_sync] = opts.tokens_per_window / seconds
        print("| %s | %.2f | %.4f | %.0f |" % (
            "no_sync" if no_sync else "always-sync", gib, seconds, rates[no_sync]))
    print("no_sync: %+.2f%% tokens/s for %.2f GiB of stash per rank" % (
        100 * (rates[True] / rates[False] - 1), stash))


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
    time = sub.add_parser("time")
    time.add_argument("--report", required=True)
    time.add_argument("--hardware", required=True)
    time.add_argument("--mfu", type=float, required=True)
    time.add_argument("--exposed", type=float, required=True)
    time.add_argument("--k", type=int, default=4)
    time.add_argument("--compute-type", default="bf16")
    predict = sub.add_parser("predict")
    predict.add_argument("--report", required=True)
    predict.add_argument("--hardware", required=True)
    predict.add_argument("--mode", choices=["zero2", "zero3"], required=True)
    predict.add_argument("--k", type=int, required=True)
    predict.add_argument("--mfu", type=float, required=True)
    predict.add_argument("--exposed", type=float, required=True)
    predict.add_argument("--activations-gib", type=float, required=True)
    predict.add_argument("--tokens-per-window", type=int, required=True)
    predict.add_argument("--compute-type", default="bf16")
    published = sub.add_parser("published")
    published.add_argument("--report-zero2", required=True)
    published.add_argument("--report-zero3", required=True)
    published.add_argument("--hardware", help="a bench/hardware/*.json: also "
                           "predict tokens/s")
    published.add_argument("--compute-type", default="bf16")
    published.add_argument("--tokens-per-window", type=int, default=32 * 4096,
                           help="global batch x sequence length (32 x 4096)")
    published.add_argument("--max-error", type=float, default=0.10,
                           help="fail above this relative error (issue 35: 10%%)")
    opts = parser.parse_args()
    if opts.command == "memory":
        return cmd_memory(opts)
    if opts.command == "time":
        return cmd_time(opts)
    if opts.command == "predict":
        return cmd_predict(opts)
    return cmd_published(opts)


if __name__ == "__main__":
    sys.exit(main())
