#!/usr/bin/python3
"""The no_sync pipeline on its own output, on the differential tester's cases.

Two paths per CI seed (docs/Reliability.md, "The pipeline is a fixpoint on
its own output"):

1. The recorded run. The case's step (emit_mlir.py) through `dist-opt
   --dist-no-sync-pipeline` with the case's options, bucketed as drawn and
   unbucketed, then that output through the same pipeline again. The first
   run records its options on the module (`dist.no_sync_pipeline`), so the
   second must write the first's text, byte for byte, in every case.

2. The re-read. The unbucketed output with that record removed (a module a
   user edited, or one from an older dist) through the pipeline twice more:
   the passes re-read their own expanded syncs. Each case must be one of

     identical   the re-read writes the first run's text, byte for byte;
     converged   it only reorders independent ops or drops dead ones (same
                 ops after renaming SSA values), and the next run writes
                 its text;
     refused     it stops with a located error, only for a window loop
                 compiled under a stash budget (its sync is split across
                 the loop, which the re-read does not take back).

   Bucketed output is refused as input to the re-read by design (a bucket
   is no single parameter's sync), so only the recorded path covers it.

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


def pipeline_option(case, buckets):
    """--dist-no-sync-pipeline=... as dist-run compiles the case."""
    return "--dist-no-sync-pipeline=" + " ".join(
        name + "=" + (value if value is not None else "true")
        for name, value in case.pipeline_options(buckets=buckets))


RECORD = re.compile(r'(, )?dist\.no_sync_pipeline = "[^"]*"(, )?')


def drop_record(text):
    """The module without the pipeline's record of its options."""
    def keep_separator(match):
        return ", " if match.group(1) and match.group(2) else ""
    text, count = RECORD.subn(keep_separator, text, count=1)
    if count != 1:
        raise ValueError("the pipeline's output has no dist.no_sync_pipeline")
    return text.replace(" attributes {}", "", 1)


def ops(text):
    """The module's lines with SSA names renamed, as a multiset."""
    return collections.Counter(re.sub(r"%[\w#]+", "%v", line).strip()
                               for line in text.splitlines())


def run_pipeline(dist_opt, text, option, path):
    """(exit code, stdout, stderr) of the pipeline on `text`."""
    with open(path, "w") as f:
        f.write(text)
    out = subprocess.run([dist_opt, path, option, "-o", "-"],
                         capture_output=True, text=True, timeout=120)
    return out.returncode, out.stdout, out.stderr


def failure(run, code, stderr):
    return "failed", "%s: exit %d: %s" % (
        run, code, stderr.strip()[:400] or "no diagnostic")


def classify(dist_opt, case, directory):
    """(kind, detail) for one case."""
    source = emit_mlir.emit_mlir(case)
    path = os.path.join(directory, "in.mlir")
    firsts = {}
    for buckets in (None, False):
        option = pipeline_option(case, buckets)
        code, once, err = run_pipeline(dist_opt, source, option, path)
        if code:
            return failure("first run (%s)" % option, code, err)
        code, twice, err = run_pipeline(dist_opt, once, option, path)
        if code:
            return failure("recorded re-run (%s)" % option, code, err)
        if once != twice:
            return "failed", "the recorded re-run changed the text (%s)" % option
        firsts[buckets] = (option, once)

    option, once = firsts[False]
    try:
        texts = [drop_record(once)]
    except ValueError as e:
        return "failed", str(e)
    for run in range(2):
        code, out, err = run_pipeline(dist_opt, texts[-1], option, path)
        if code:
            if run == 0 and LOCATED_ERROR.search(err) and \
                    "window-loop" in case.tags() and case.stash_budget is not None:
                return "refused", err.splitlines()[0]
            return failure("re-read %d" % (run + 1), code, err)
        texts.append(drop_record(out))
    first, twice, thrice = texts
    if first == twice:
        return "identical", ""
    if ops(first) - ops(twice):
        extra = ops(first) - ops(twice)
        if ops(twice) - ops(first) or not all(
                l.startswith(("%v = tensor.empty()", "%v = arith.constant"))
                for l in extra):
            return "failed", "the re-read changes ops, not only their order"
    if twice != thrice:
        return "failed", "the second re-read changes the first's output"
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
