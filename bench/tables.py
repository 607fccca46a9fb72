#!/usr/bin/env python3
"""bench/README.md's result tables, generated from bench/results/*.json.

A generated table sits between two markers in the README:

    <!-- table: NAME (bench/tables.py from bench/results/FILE.json) -->
    | ... |
    <!-- end table -->

`python3 bench/tables.py` rewrites every such table from its JSON (after a
benchmark run wrote new results); `--check` only compares and exits 1 naming
each stale table (the ctest `bench-tables-current`), so a figure in the
README is always the one its JSON holds. Tables not generated yet are still
written by hand (the README says which)."""

import argparse
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
README = os.path.join(HERE, "README.md")
RESULTS = os.path.join(HERE, "results")


def _row(cells):
    return "| " + " | ".join(str(c) for c in cells) + " |"


def _table(header, rows):
    return "\n".join([_row(header), "|" + "---|" * len(header)] + [_row(r) for r in rows])


def _int(value):
    return "{:,}".format(int(round(value)))


def _ranks(run):
    world = run["world"]
    # More ranks than this machine's two cores: its times measure that.
    return "%d (oversubscribed)" % world if world > 2 else str(world)


def _fraction(part, whole):
    ratio = whole / part
    return "1/%d" % round(ratio) if abs(ratio - round(ratio)) < 1e-9 else "%.3f" % (part / whole)


def _schemes(run, key):
    """`key` of the one-round, two-round and always-sync schemes of a run."""
    return tuple(run["schemes"][k][key] for k in ("one_round", "two_round", "always_sync"))


def step_throughput(data):
    header = ["model", "mode", "ranks", "comm share", "samples/s: one round (dist)",
              "two rounds (Thunder)", "always sync", "one round vs always", "vs two rounds",
              "ratio to ideal"]
    rows = []
    for run in data["runs"]:
        s = run["schemes"]
        one, two, always = _schemes(run, "samples_per_s")
        share = run["comm_round_ms"] / (run["compute_ms"] + run["comm_round_ms"])
        rows.append([run["model"], run["mode"], _ranks(run), "%d%%" % round(100 * share),
                     _int(one), _int(two), _int(always), "%.2f×" % (one / always),
                     "%.2f×" % (one / two),
                     "%.3f" % (s["one_round"]["window_ms"] / run["ideal_window_ms"])])
    return _table(header, rows)


def memory(data):
    header = ["model", "mode", "gradient bytes per window: one round", "two rounds",
              "always sync", "one / always", "one / two", "stash peak", "expected",
              "stash after the window"]
    rows = []
    for run in data["runs"]:
        s = run["schemes"]
        one, two, always = _schemes(run, "grad_bytes")
        rows.append([run["model"], run["mode"], _int(one), _int(two), _int(always),
                     _fraction(one, always), _fraction(one, two),
                     _int(s["one_round"]["stash_peak_bytes"]),
                     _int(run["stash_expected_bytes"]),
                     _int(s["one_round"]["stash_after_bytes"])])
    return _table(header, rows)


def runtime_vs_mpi(data):
    header = ["collective", "MB", "MPI ms", "dist ms", "ratio", "MPI_I ms", "async ms",
              "ratio", "algbw GB/s", "busbw GB/s"]
    rows = [[r["collective"], r["mb"], "%.3f" % r["mpi_ms"], "%.3f" % r["runtime_ms"],
             "%.3f" % r["ratio"], "%.3f" % r["mpi_nonblocking_ms"],
             "%.3f" % r["runtime_async_ms"], "%.3f" % r["async_ratio"],
             "%.2f" % r["algbw_gbs"], "%.2f" % r["busbw_gbs"]] for r in data]
    return _table(header, rows)


MODEL_NAMES = {"gpt": "GPT", "llama": "Llama"}


def torch_models(data):
    header = ["model", "params", "dist no_sync tok/s", "dist always-sync tok/s",
              "PyTorch DDP no_sync tok/s", "PyTorch always-sync tok/s",
              "dist / PyTorch (no_sync)"]
    rows = [[MODEL_NAMES.get(r["model"], r["model"]), "%.2f M" % (r["parameters"] / 1e6),
             "%.0f" % r["dist_no_sync_tokens_s"], "%.0f" % r["dist_always_tokens_s"],
             "%.0f" % r["torch_no_sync_tokens_s"], "%.0f" % r["torch_always_tokens_s"],
             "%.2fx" % r["dist_over_torch_no_sync"]] for r in data]
    return _table(header, rows)


def heap_models(data):
    header = ["model", "side", "live at window start", "peak", "growth per window",
              "first window's growth", "growth / PyTorch's"]
    mib = lambda n: "%.1f MiB" % (n / 2**20)
    rows = []
    for r in data:
        for side, label in (("dist", "dist"), ("torch", "PyTorch DDP")):
            v = r[side]
            rows.append([MODEL_NAMES.get(r["model"], r["model"]), label, mib(v["live_at_start"]),
                         mib(v["peak"]), mib(v["growth"]), mib(v["first_growth"]),
                         "%.2fx" % r["dist_over_torch_growth"] if side == "dist" else ""])
    return _table(header, rows)


def _pct(x):
    return "%+.1f%%" % (100 * x)


def _err(x, digits=2):
    """An error as 5.10e-3: `digits` decimals, the exponent without padding."""
    mantissa, exponent = ("%.*e" % (digits, x)).split("e")
    return "%se%d" % (mantissa, int(exponent))


def _times(x):
    return ("%.1f×" if x >= 10 else "%.2f×") % x


def compile_time(data):
    header = ["layers", "MB", "parse+print s", "-apply-no-sync s", "overhead", "pipeline s",
              "mlir-opt -cse s", "in process: parser / printer / pass with its verifier / "
              "pass alone, s"]
    rows = []
    for r in data["rows"]:
        verified, alone = r["apply_no_sync_passes"], r["apply_no_sync_unverified_passes"]
        rows.append([r["layers"], "%.2f" % (r["bytes"] / 1e6), "%.3f" % r["parse_print_s"],
                     "%.3f" % r["apply_no_sync_s"], _pct(r["apply_no_sync_overhead"]),
                     "%.3f" % r["pipeline_s"], "%.3f" % r["mlir_opt_cse_s"],
                     "%.4f / %.4f / %.4f / %.4f" % (verified["Parser"], verified["Output"],
                                                    verified["ApplyNoSyncPass"],
                                                    alone["ApplyNoSyncPass"])])
    return _table(header, rows)


def compile_time_exponents(data):
    rows = [["whole process", "parse + print", "%.2f" % data["exponent_parse_print"]],
            ["whole process", "-apply-no-sync", "%.2f" % data["exponent_apply_no_sync"]],
            ["whole process", "--dist-no-sync-pipeline", "%.2f" % data["exponent_pipeline"]],
            ["in process", "the -apply-no-sync pass",
             "%.2f" % data["exponent_apply_no_sync_pass"]]]
    for name, e in sorted(data["exponent_pipeline_passes"].items()):
        rows.append(["in process, the pipeline", name, "%.2f" % e])
    return _table(["measured", "what", "exponent"], rows)


def _bytes(n):
    """Bytes as the report gives them; MiB once they are too many to read."""
    return "{:,} MiB".format(round(n / 2**20)) if n >= 1e9 else "{:,} B".format(n)


def _named(model):
    """`name (file or command)` with the part in parentheses as code."""
    m = re.match(r"(.*?) \((.*)\)$", model)
    return "%s (`%s`)" % (m.group(1), m.group(2)) if m else model


def keep_gathered(data):
    header = ["model", "W", "kept params", "all_gathers per window: without", "with",
              "gather bytes: without", "with", "window bytes (no_sync): without", "with",
              "kept between micro-batches", "beyond the shards"]
    rows = [[_named(m["model"]), m["world"], m["kept_parameters"],
             _int(m["gathers_without"]["calls"]), _int(m["gathers_with"]["calls"]),
             _bytes(m["gathers_without"]["bytes"]), _bytes(m["gathers_with"]["bytes"]),
             _bytes(m["window_without"]["bytes"]), _bytes(m["window_with"]["bytes"]),
             _bytes(m["held_bytes"]), _bytes(m["held_beyond_shards"])]
            for m in data["models"]]
    return _table(header, rows)


def vs_pytorch(data):
    header = ["model", "PyTorch window ms", "dist window ms", "window: PyTorch / dist",
              "always-sync: PyTorch / dist", "compute: dist / PyTorch",
              "round: dist / PyTorch", "dist: always-sync / no_sync window"]
    rows = []
    for r in data["table"]:
        name = r["model"] + (" (dist: JIT)" if r["model"] == "llama" else "")
        ratio = "—" if r["round"] != r["round"] else "%.3g" % r["round"]  # NaN: no round
        rows.append([name, "%.2f" % r["torch_window_ms"], "%.3f" % r["dist_window_ms"],
                     _times(r["window"]), _times(r["always"]), "%.3g" % r["compute"],
                     ratio, _times(r["no_sync"])])
    return _table(header, rows)


BF16_RUNS = {"f32 model": "f32 model (harness check)", "ref in bf16": "ref in bf16 (floor)"}


def bf16_accuracy(data):
    header = ["model", "run", "max error", "norm error", "bf16 / f32 stash (max)",
              "gradient bytes / window"]
    rows, last = [], None
    for r in data:
        if r["mode"] != "ddp":  # ZeRO-2's rows are the same figures
            continue
        dims = r["dims"]
        model = "%s %d→%d→%d, batch %d" % (r["model"], *dims)
        rows.append([model if model != last else "", BF16_RUNS.get(r["run"], r["run"]),
                     _err(r["max_error"], 1 if r["max_error"] < 1e-5 else 2),
                     _err(r["norm_error"], 1 if r["norm_error"] < 1e-5 else 2),
                     "%.2f" % r["ratio"] if "ratio" in r else "",
                     _int(r["grad_bytes"]) if "grad_bytes" in r else ""])
        last = model
    return _table(header, rows)


def mixed_precision(data):
    header = ["reduce", "max err vs exact", "norm err vs exact", "norm err vs floor",
              "gradient bytes / window"]
    row = next(r for r in data["rows"] if r["mode"] == "ddp")
    rows = [[dtype, _err(res["exact"][0]), _err(res["exact"][1]), _err(res["floor"][1]),
             _int(res["bytes"])] for dtype, res in row["results"].items()]
    floor = row["floor_vs_exact"]
    rows.append(["(floor itself)", _err(floor[0]), _err(floor[1]), "", ""])
    return _table(header, rows)


MODES = {"ddp": "DDP", "zero2": "ZeRO-2", "zero3": "ZeRO-3", "hsdp": "HSDP"}


def multihost(data):
    header = ["mode", "data link", "one round ms", "two rounds ms", "always-sync ms",
              "vs always-sync", "vs two rounds", "gradient MB per window: one / two / always"]
    rows = [[MODES[r["mode"]], r["link"], "%.1f" % r["one_round_ms"],
             "%.1f" % r["two_round_ms"], "%.1f" % r["always_sync_ms"],
             "%.2f" % (r["always_sync_ms"] / r["one_round_ms"]),
             "%.2f" % (r["two_round_ms"] / r["one_round_ms"]),
             " / ".join("%.1f" % (b / 1e6) for b in r["grad_bytes"])] for r in data]
    return _table(header, rows)


def stash_budget(data):
    header = ["mode", "stash GB/rank", "gradient GB/rank/window", "local", "synced"]
    rows = []
    runs = data["results"]
    if data["curves_identical"]:  # the script checked it point for point
        runs = runs[:1]
    for run in runs:
        sampled = [p for p in run["points"] if p["sampled"]]
        shown = sampled[::4] + ([sampled[-1]] if (len(sampled) - 1) % 4 else [])
        shown += [p for p in run["points"] if p["chosen"] and p not in shown]
        for p in sorted(shown, key=lambda p: p["stash_bytes"]):
            note = ""
            if p is sampled[0]:
                note = " (least)"
            elif p is sampled[-1]:
                note = " (all local)"
            elif p["chosen"]:
                note = " (chosen at the mid budget)"
            mode = "ZeRO-2 = ZeRO-3" if data["curves_identical"] else MODES[run["mode"]]
            rows.append([mode, "%.3f%s" % (p["stash_bytes"] / data["gb"], note),
                         "%.3f" % (p["gradient_wire_bytes_per_rank"] / data["gb"]),
                         p["local"], p["synced"]])
    return _table(header, rows)


def collective_check(data):
    header = ["row", "off µs", "on µs", "added µs", "on/off"]

    def us(x):
        return "%.2f" % x if abs(x) < 1000 else "%.0f" % x
    rows = [[r["row"], us(r["off_us"]), us(r["on_us"]), us(r["added_us"]), "%.2f" % r["ratio"]]
            for r in data["rows"]]
    return _table(header, rows)


def perf_predict(data):
    header = ["configuration", "stash budget", "stash GiB", "K",
              "memory GiB always-sync / no_sync", "tokens/s always-sync", "tokens/s no_sync",
              "no_sync gain"]
    rows = [[r["configuration"], r["budget"], "%.2f" % r["stash_gib"], r["k"],
             "%.1f / %.1f" % tuple(r["memory_gib"]), "%.0f" % r["tokens_per_s"][0],
             "%.0f" % r["tokens_per_s"][1],
             _pct(r["tokens_per_s"][1] / r["tokens_per_s"][0] - 1)]
            for r in data["rows"] if r["k"] in (4, 16)]
    return _table(header, rows)



def _published(rows, unit, fmt):
    header = ["configuration", "no_sync", "published " + unit, "predicted " + unit, "error"]
    out = []
    for r in rows:
        error = (r["predicted"] - r["published"]) / r["published"]
        out.append([MODES[r["mode"]], "on" if r["no_sync"] else "off", fmt % r["published"],
                    fmt % r["predicted"] if unit == "tokens/s" else "%.2f" % r["predicted"],
                    "calibrated" if r["calibrated"] else _pct(error)])
    return _table(header, out)


def published_memory(data):
    return _published(data["published"]["memory"], "GiB", "%.1f")


def published_tokens(data):
    return _published(data["published"]["tokens"], "tokens/s", "%.0f")

# NAME -> (the JSON under bench/results, its renderer).
TABLES = {
    "step_throughput": ("step_throughput.json", step_throughput),
    "memory": ("step_throughput.json", memory),
    "runtime_vs_mpi": ("runtime_vs_mpi.json", runtime_vs_mpi),
    "torch_models": ("torch_models.json", torch_models),
    "heap_models": ("heap_models.json", heap_models),
    "compile_time": ("compile_time.json", compile_time),
    "compile_time_exponents": ("compile_time.json", compile_time_exponents),
    "keep_gathered": ("keep_gathered.json", keep_gathered),
    "vs_pytorch": ("vs_pytorch.json", vs_pytorch),
    "bf16_accuracy": ("bf16_accuracy.json", bf16_accuracy),
    "mixed_precision": ("mixed_precision_accuracy.json", mixed_precision),
    "multihost": ("multihost.json", multihost),
    "stash_budget": ("stash_budget.json", stash_budget),
    "collective_check": ("collective_check.json", collective_check),
    "perf_predict": ("perf_predict.json", perf_predict),
    "published_memory": ("perf_predict.json", published_memory),
    "published_tokens": ("perf_predict.json", published_tokens),
}

MARKED = re.compile(r"(<!-- table: (\w+) \(bench/tables\.py from bench/results/([\w.]+)\) -->\n)"
                    r"(.*?)(<!-- end table -->)", re.S)


def render(text):
    """`text` with every marked table regenerated, and the names found."""
    found = []

    def replace(m):
        name, json_name = m.group(2), m.group(3)
        if name not in TABLES:
            raise SystemExit("bench/tables.py: README.md marks a table '%s' it has no "
                             "renderer for" % name)
        want_json, renderer = TABLES[name]
        if json_name != want_json:
            raise SystemExit("bench/tables.py: README.md's table '%s' names %s; it is "
                             "made from %s" % (name, json_name, want_json))
        with open(os.path.join(RESULTS, json_name)) as f:
            found.append(name)
            return m.group(1) + renderer(json.load(f)) + "\n" + m.group(5)

    return MARKED.sub(replace, text), found


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true",
                    help="compare only; exit 1 if a table differs from its JSON")
    ap.add_argument("--readme", default=README)
    a = ap.parse_args(argv)
    with open(a.readme) as f:
        text = f.read()
    new, found = render(text)
    missing = sorted(set(TABLES) - set(found))
    if missing:
        print("bench/tables.py: README.md has no marked table for %s" % ", ".join(missing))
        return 1
    if a.check:
        if new != text:
            old_tables = dict((m.group(2), m.group(4)) for m in MARKED.finditer(text))
            new_tables = dict((m.group(2), m.group(4)) for m in MARKED.finditer(new))
            stale = [n for n in found if old_tables[n] != new_tables[n]]
            print("bench/tables.py: stale in %s: %s (run python3 bench/tables.py)"
                  % (a.readme, ", ".join(stale)))
            return 1
        print("bench/tables.py: %d tables match their JSON" % len(found))
        return 0
    with open(a.readme, "w") as f:
        f.write(new)
    print("bench/tables.py: wrote %d tables" % len(found))
    return 0


if __name__ == "__main__":
    sys.exit(main())
