#!/usr/bin/python3
"""The no_sync pipeline on its own output, on the differential tester's cases.

Per CI seed: the case's step (emit_mlir.py) through `dist-opt
--dist-no-sync-pipeline` with the case's options (bucket-cap-bytes=0:
bucketed output is refused as input by design), then that output through it
again, and a third time. Each case must be one of (docs/Reliability.md, "The
pipeline is a fixpoint on its unbucketed output"):

  identical   the second run writes the first's text, byte for byte;
  converged   the second run only reorders independent ops or drops dead
              ones (same ops after renaming SSA values), and the third
              run writes the second's text;
  refused     the second run stops with a located error, only for a window
              loop compiled under a stash budget (its sync is split across
              the loop, which the re-read does not take back).

Anything else (a crash, an error without a location, another change, a
refusal of another case) fails. Prints the seeds of each kind.

  fixpoint.py --dist-opt build/bin/dist-opt [--seeds 1-80]
"""

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile

import emit_mlir
import gen_case

LOCATED_ERROR = re.compile(r":\d+:\d+: error: ")


def pipeline_option(case):
    """--dist-no-sync-pipeline=... as dist-run compiles the case, unbucketed."""
    return "--dist-no-sync-pipeline=" + " ".join(
        name + "=" + (value if value is not None else "true")
        for name, value in case.pipeline_options(buckets=False))


def ops(text):
    """The module's lines with SSA names renamed, as a multiset."""
    return collections.Counter(re.sub(r"%[\w#]+", "%v", line).strip()
                               for line in text.splitlines())


def classify(dist_opt, case, directory):
    """(kind, detail) for one case."""
    option = pipeline_option(case)
    texts = [emit_mlir.emit_mlir(case)]
    for run in range(3):
        source = os.path.join(directory, "run%d.mlir" % run)
        with open(source, "w") as f:
            f.write(texts[-1])
        out = subprocess.run([dist_opt, source, option, "-o", "-"],
                             capture_output=True, text=True, timeout=120)
        if out.returncode:
            located = LOCATED_ERROR.search(out.stderr)
            if run == 1 and located and "window-loop" in case.tags() and \
                    case.stash_budget is not None:
                return "refused", out.stderr.splitlines()[0]
            return "failed", "run %d exit %d: %s" % (
                run + 1, out.returncode, out.stderr.strip()[:400] or "no diagnostic")
        texts.append(out.stdout)
    once, twice, thrice = texts[1:]
    if once == twice:
        return "identical", ""
    if ops(once) - ops(twice):
        extra = ops(once) - ops(twice)
        if ops(twice) - ops(once) or not all(
                l.startswith(("%v = tensor.empty()", "%v = arith.constant"))
                for l in extra):
            return "failed", "the second run changes ops, not only their order"
    if twice != thrice:
        return "failed", "the third run changes the second's output"
    return "converged", ""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dist-opt", required=True)
    parser.add_argument("--seeds", default="1-80", help="FIRST-LAST")
    opts = parser.parse_args()
    first, last = (int(s) for s in opts.seeds.split("-"))
    kinds = collections.defaultdict(list)
    failed = False
    with tempfile.TemporaryDirectory(prefix="fixpoint-") as directory:
        for seed in range(first, last + 1):
            kind, detail = classify(opts.dist_opt, gen_case.make_case(seed), directory)
            kinds[kind].append(seed)
            if kind == "failed":
                failed = True
                print("seed %d: FAIL: %s" % (seed, detail))
            elif kind == "refused":
                print("seed %d: refused (located): %s" % (seed, detail))
    for kind in ("identical", "converged", "refused", "failed"):
        print("%-10s %3d  %s" % (kind, len(kinds[kind]), kinds[kind]))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
