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


# NAME -> (the JSON under bench/results, its renderer).
TABLES = {
    "step_throughput": ("step_throughput.json", step_throughput),
    "memory": ("step_throughput.json", memory),
    "runtime_vs_mpi": ("runtime_vs_mpi.json", runtime_vs_mpi),
    "torch_models": ("torch_models.json", torch_models),
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
