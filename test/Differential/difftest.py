#!/usr/bin/python3
"""Differential tester: compiled gradients against an independent numpy reference.

Per seed, gen_case.py draws a training step (emit_mlir.py writes it), this
script writes its parameters and data as .npy, runs
`mpirun -np W dist-run step.mlir --params-npy --data-npy --out-npy`, and
compares every window's gradients (each rank's shard) and every micro-batch's
untied outputs (loss, dx, gradient norm) with reference.py's full-batch
float64 reference, within twice the float32 rounding bound the reference
carries with every value (rounding.py).

Cases with a parameter the backward gathers again (ZeRO-3, HSDP-3) are
compiled with the no_sync pipeline's keep-gathered for half the seeds
(--keep-gathered=drawn, the default; `all` or `none` to force it), and every
case checks the all_gathers of each no_sync window dist-run reports: one per
kept parameter per window, K or 2K for the others. Half the cases use the
pipeline's collective buckets, and about 3 in 10 of those without explicit
sync chains its reduce-dtype=f64 (the stash and the collectives in f64; tag
reduce-f64: the f32 gradients and the f64 reference compare as above).
About a third of the seeds draw sharded dims without regard to the group
size (tag uneven): FSDP's padding, each shard compared with the rows the
reference pads with zeros. About one in six puts some parameters in mixed
precision (tags bf16, f16; reduce-f32 or reduce-lowp; held-f32 with a
param_dtype, or held-lowp): one window, each gradient compared within
that bound plus reference.py's rounding bound of its types.
About four in ten are compiled under a stash budget (dist-run --stash-budget;
tags stash-budget and budget-least, budget-all or budget-mid): the least
the stashes can hold, all of them local, or a value in between, computed by
gen_case.py from the parameters. The reference does not change (every stash
point gives the window's gradient); dist-run checks each no_sync
micro-step's communication and stashes against the points it compiled, and
here the stash bytes it reports are checked against the budget: within it,
all of it at the least and at everything, and the default points without
one.
About three in ten (not whole windows, not mixed precision; tag epilogue)
end in an optimizer epilogue (a dist.epilogue: emit_epilogue.py) that
updates the parameters and optimizer state once per window: SGD, SGD with
momentum or AdamW (tags epi-sgd, epi-momentum, epi-adamw), with
clip_grad_norm_ (epi-clip; its norm a result) and a GradScaler unscale
(epi-unscale) whose non-finite window (epi-inf: an inf in one rank's data)
must skip the update. The next parameters, state and norm of every window
are compared with reference_epilogue.py's, and they are what the next window
computes with.

Outcomes: passed; failed (dist-run exited 0 with wrong numbers, the worst
bug, or its own checks failed); refused (the compiler stopped with a located
`file:line:col: error:`: every generated program is in the frontend model,
so this also fails the run); crashed (a signal, a hang or an exit without a
diagnostic).

  difftest.py --ci                      the fixed CI set (ctest -L differential)
  difftest.py --cases 5000 --seed 1     a soak; or --soak MINUTES
  difftest.py --seed 17 --cases 1 --keep /tmp/case   rerun one seed, keep its files
  difftest.py --self-check              checks that the tester itself can fail

Needs numpy: run with /usr/bin/python3 (Debian's python3-numpy).
"""

import argparse
import itertools
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import numpy as np  # noqa: E402
except ImportError:
    sys.exit("difftest: numpy is missing from %s; run it with /usr/bin/python3 "
             "(scripts/install-deps.sh installs python3-numpy)" % sys.executable)

import emit_mlir  # noqa: E402
import gen_case  # noqa: E402
import reference  # noqa: E402
import rounding  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CI_SEEDS = list(range(1, 81))
# The optimizer epilogue's results (gen_case.Epilogue), compared once per
# window with reference_epilogue.py.
EPILOGUE_RESULTS = ("next", "next_state", "next_step", "norm")
# Not anchored: under mpirun two ranks' stderr can interleave mid-line.
LOCATED_ERROR = re.compile(r":\d+:\d+: error: ")


def write_case(case, directory):
    """step.mlir, params/<name>.npy, data/w_k_r_a.npy; returns the inputs."""
    os.makedirs(os.path.join(directory, "params"))
    os.makedirs(os.path.join(directory, "data"))
    os.makedirs(os.path.join(directory, "out"))
    with open(os.path.join(directory, "step.mlir"), "w") as f:
        f.write(emit_mlir.emit_mlir(case))
    params, data = reference.draw_inputs(case)
    for name, value in params.items():
        np.save(os.path.join(directory, "params", name + ".npy"), value.astype("<f4"))
    for w in range(case.windows):
        for k in range(case.k):
            for r in range(case.world):
                for i, a in enumerate(case.args):
                    if a[0] in ("x", "y"):
                        value = data[w][k][r][0 if a[0] == "x" else 1]
                        np.save(os.path.join(directory, "data", "w%d_k%d_r%d_a%d.npy"
                                             % (w, k, r, i)), value.astype("<f4"))
    return params, data


def dist_run_command(case, directory, opts):
    cmd = shlex.split(opts.mpirun) + ["-np", str(case.world), opts.dist_run,
                                      os.path.join(directory, "step.mlir"),
                                      "--k", str(case.k), "--windows", str(case.windows),
                                      "--lr", repr(case.lr),
                                      "--params-npy", os.path.join(directory, "params"),
                                      "--data-npy", os.path.join(directory, "data"),
                                      "--out-npy", os.path.join(directory, "out")]
    if case.window_loop:
        cmd.append("--window")
    for name, value in case.pipeline_options():
        cmd += ["--" + name] + ([value] if value is not None else [])
    return cmd


def describe(case):
    """The case's tags, and its stash budget if it has one."""
    text = " ".join(case.tags())
    if case.stash_budget is not None:
        text += "; stash budget %d bytes (%s: least %d, all %d)" % (
            case.stash_budget, case.budget_kind, case.stash_bytes_least(),
            case.stash_bytes_all())
    return text


def run_dist(cmd, timeout):
    env = dict(os.environ, DIST_WATCHDOG_TIMEOUT_MS="60000")
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                           timeout=timeout, universal_newlines=True, errors="replace")
        return p.returncode, p.stdout
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return None, out + "\n(timed out after %d s)" % timeout


def close(got, want, tol):
    """Within `tol` (an array like want, or a number) everywhere."""
    return got.shape == want.shape and bool(np.all(np.abs(got - want) <= tol))


WINDOW_GATHERS = re.compile(r"window (\d+): no_sync window: (\d+) all_gather")


def check_gathers(case, output):
    """Mismatches between the all_gathers dist-run reports per no_sync window
    and the case's count (Case.gathers_per_window)."""
    if case.buckets:
        return []  # buckets combine gathers: the count is not per parameter
    want = case.gathers_per_window()
    got = {int(w): int(n) for w, n in WINDOW_GATHERS.findall(output)}
    problems = []
    for w in range(case.windows):
        if w not in got:
            problems.append("window %d: dist-run reported no all_gather count" % w)
        elif got[w] != want:
            problems.append("window %d: %d all_gathers in the no_sync window, expected %d%s"
                            % (w, got[w], want, " (keep-gathered)" if case.keep_gathered else ""))
    return problems


STASH_POINTS = re.compile(r"stash points: (\d+) local, (\d+) shard, (\d+) synced, "
                          r"(\d+) bytes of stashes")


def check_stash_bytes(case, output):
    """Mismatches between the stash bytes dist-run says its points hold and
    the budget (or, without one, the default points), computed here."""
    if case.window_loop or case.k == 1:
        return []  # a whole window has no stash; K = 1 no no_sync micro-step
    found = STASH_POINTS.search(output)
    if not found:
        return ["dist-run reported no stash points"]
    held = int(found.group(4))
    if case.stash_budget is None:
        want = case.stash_bytes_default()
        return [] if held == want else [
            "the stashes hold %d bytes, the default points %d" % (held, want)]
    least, most = case.stash_bytes_least(), case.stash_bytes_all()
    if not least <= held <= case.stash_budget:
        return ["the stashes hold %d bytes, outside [least %d, budget %d]"
                % (held, least, case.stash_budget)]
    if case.stash_budget in (least, most) and held != case.stash_budget:
        return ["the stashes hold %d bytes under a budget of %d, which only "
                "they fit" % (held, case.stash_budget)]
    return []


def compare(case, directory, expected):
    """Mismatches between dist-run's files in directory/out and the reference."""
    out = os.path.join(directory, "out")
    problems = []

    def load(name):
        path = os.path.join(out, name)
        if not os.path.exists(path):
            problems.append("missing output %s" % name)
            return None
        return np.load(path).astype(np.float64)

    for w, exp in enumerate(expected):
        err = exp["err"]
        for ri, res in enumerate(case.results):
            for r in range(case.world):
                slack = 0.0
                if res[0] in EPILOGUE_RESULTS:
                    # Once per window, from the sync step (micro-batch K).
                    checks = [("window %d rank %d epilogue %s (result #%d)"
                               % (w, r, "/".join(res), ri),
                               load("w%d_k%d_r%d_out%d.npy" % (w, case.k - 1, r, ri)),
                               exp["epilogue"][(r, res)], err[("epilogue", r, res)])]
                    if exp.get("skipped") and res[0] == "norm":
                        checks = []  # not finite on either side; the skip is checked
                elif exp.get("skipped"):
                    # A window with an inf in its data: its gradients and
                    # losses are not finite on both sides (dist-run checks
                    # they match always-sync); what matters is the skip.
                    continue
                elif res[0] == "grad":
                    slack = exp["slack"][(r, res[1])]
                    checks = [("window %d rank %d gradient of @%s (result #%d)" % (w, r, res[1], ri),
                               load("w%d_r%d_grad%d.npy" % (w, r, ri)), exp["grad"][(r, res[1])],
                               err[("grad", r, res[1])])]
                elif case.window_loop:
                    # A whole window returns the sum of its micro-batches' losses.
                    losses = [exp["out"][(k, r, "loss")] for k in range(case.k)]
                    checks = [("window %d rank %d loss sum (result #%d)" % (w, r, ri),
                               load("w%d_r%d_out%d.npy" % (w, r, ri)), sum(losses),
                               sum(err[("out", k, r, "loss")] for k in range(case.k))
                               + rounding.gamma(case.k) * sum(np.abs(v) for v in losses))]
                else:
                    checks = [("window %d micro-batch %d rank %d %s (result #%d)" % (w, k, r, res[0], ri),
                               load("w%d_k%d_r%d_out%d.npy" % (w, k, r, ri)), exp["out"][(k, r, res[0])],
                               err[("out", k, r, res[0])])
                              for k in range(case.k)]
                for what, got, want, bound in checks:
                    if got is None:
                        continue
                    tol = rounding.SAFETY * bound + slack
                    if not close(got, want, tol):
                        if got.shape != want.shape:
                            problems.append("%s: shape %s, expected %s" % (what, got.shape, want.shape))
                        else:
                            excess = np.abs(got - want) - tol
                            i = np.unravel_index(np.argmax(excess), want.shape)
                            problems.append("%s: error %.3g at %s over its bound %.3g (got %.9g, "
                                            "expected %.9g)" % (what, np.abs(got - want)[i], list(i),
                                                                tol[i] if np.ndim(tol) else tol,
                                                                got[i], want[i]))
    return problems


def classify(rc, output):
    """passed / refused / failed / crashed from dist-run's exit and output."""
    if rc == 0:
        return "passed", ""
    if rc is None:
        return "crashed", "hang (timeout)"
    if re.search(r"exited on signal|Segmentation fault|Aborted|core dumped", output) or rc < 0:
        return "crashed", "signal (exit %d)" % rc
    if re.search(r"rank \d+: FAIL", output):
        return "failed", "dist-run's own checks failed (exit %d): %s" % (
            rc, re.search(r"rank \d+: FAIL.*", output).group(0))
    located = LOCATED_ERROR.search(output)
    if located:
        stage = re.search(r"dist-run: (the no_sync pipeline failed|lowering to LLVM failed|JIT: .*)",
                          output)
        line = re.search(r"\S*:\d+:\d+: error: .*", output).group(0)
        return "refused", "%s: %s" % (stage.group(1) if stage else "compiling", line)
    return "crashed", "exit %d without a located diagnostic" % rc


def execute(case, directory, opts):
    """Writes the case into `directory`, runs dist-run; (rc, output, expected)."""
    params, data = write_case(case, directory)
    expected = reference.expected_outputs(case, params, data)
    rc, output = run_dist(dist_run_command(case, directory, opts), opts.timeout)
    return rc, output, expected


def make_case(seed, opts):
    """The seed's case, with keep-gathered as --keep-gathered says."""
    case = gen_case.make_case(seed)
    choice = getattr(opts, "keep_gathered", "drawn")
    if choice != "drawn":
        case.keep_gathered = (choice == "all" and bool(case.regathered())
                              and not case.window_loop)
    return case


def run_case(seed, opts, keep_dir=None):
    """Returns (outcome, details, case)."""
    case = make_case(seed, opts)
    directory = tempfile.mkdtemp(prefix="difftest-%d-" % seed)
    try:
        rc, output, expected = execute(case, directory, opts)
        outcome, why = classify(rc, output)
        details = []
        if outcome == "passed":
            details = (compare(case, directory, expected) + check_gathers(case, output)
                       + check_stash_bytes(case, output))
            if details:
                outcome = "failed"
                why = "WRONG NUMBERS WITH EXIT 0"
        elif outcome != "refused":
            details = output.strip().splitlines()[-15:]
        if outcome != "passed" or keep_dir:
            target = keep_dir or os.path.join(opts.keep_failures, "seed-%d" % seed)
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(directory, target)
            with open(os.path.join(target, "run.sh"), "w") as f:
                f.write(" ".join(shlex.quote(c) for c in dist_run_command(case, target, opts)) + "\n")
            with open(os.path.join(target, "output.txt"), "w") as f:
                f.write(output)
            why += " (files: %s)" % target
        return outcome, why, details, case
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def summarize(results):
    """results: [(seed, outcome, tags)]; prints a table by tag and the closing lines."""
    outcomes = ["passed", "failed", "refused", "crashed"]
    by_tag = {}
    for _, outcome, tags in results:
        for t in tags + ["all"]:
            by_tag.setdefault(t, dict.fromkeys(outcomes, 0))[outcome] += 1
    print("%-14s %7s %7s %7s %7s" % tuple(["kind"] + outcomes))
    for t in sorted(by_tag, key=lambda t: (t == "all", t)):
        print("%-14s %7d %7d %7d %7d" % tuple([t] + [by_tag[t][o] for o in outcomes]))
    count = {o: sum(1 for _, oc, _ in results if oc == o) for o in outcomes}
    bad = {o: [s for s, oc, _ in results if oc == o] for o in ("failed", "refused", "crashed")}
    for o, seeds in bad.items():
        if seeds:
            print("%s seeds: %s" % (o, " ".join(map(str, seeds))))
    print("%d refused, %d crashed (crashes count as failed)" % (count["refused"], count["crashed"]))
    print("%d passed, %d failed" % (count["passed"], count["failed"] + count["crashed"]))
    return 0 if count["passed"] == len(results) else 1


def run_many(seeds, opts, deadline=None):
    results = []
    start = time.time()
    for seed in seeds:
        if deadline and time.time() > deadline:
            break
        if opts.only_tag and opts.only_tag not in make_case(seed, opts).tags():
            continue
        t0 = time.time()
        outcome, why, details, case = run_case(seed, opts, opts.keep)
        results.append((seed, outcome, case.tags()))
        if outcome != "passed" or opts.verbose:
            print("seed %d: %s %s [%s] %.1fs" % (seed, outcome.upper(), why, describe(case),
                                                 time.time() - t0))
            for line in details[:12]:
                print("    " + line)
            sys.stdout.flush()
    print("%d cases in %.1f s" % (len(results), time.time() - start))
    return summarize(results)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ci", action="store_true", help="the fixed CI seeds (%d cases)" % len(CI_SEEDS))
    parser.add_argument("--limit", type=int, default=None, help="only the first N CI seeds")
    parser.add_argument("--seed", type=int, default=1, help="first seed")
    parser.add_argument("--cases", type=int, default=None, help="number of seeds from --seed")
    parser.add_argument("--soak", type=float, default=None, metavar="MINUTES",
                        help="run seeds from --seed until MINUTES have passed")
    parser.add_argument("--self-check", action="store_true", help="check that the tester can fail")
    parser.add_argument("--dist-run", default=os.path.join(ROOT, "build", "bin", "dist-run"))
    parser.add_argument("--mpirun", default="mpirun --oversubscribe --bind-to none" +
                        (" --allow-run-as-root" if os.geteuid() == 0 else ""))
    parser.add_argument("--timeout", type=int, default=180, help="seconds per case")
    parser.add_argument("--keep", default=None, help="keep the case's files here (one seed)")
    parser.add_argument("--keep-failures", default=os.path.join(tempfile.gettempdir(), "difftest-failures"),
                        help="where the files of cases that do not pass are kept")
    parser.add_argument("--keep-gathered", choices=["drawn", "all", "none"], default="drawn",
                        help="compile with the no_sync pipeline's keep-gathered: as drawn per "
                        "seed, for every case with a re-gathered parameter, or never")
    parser.add_argument("--only-tag", default=None, metavar="TAG",
                        help="run only the seeds whose case has this tag (e.g. zero3)")
    parser.add_argument("--print", action="store_true", help="print the seed's step.mlir and exit")
    parser.add_argument("-v", "--verbose", action="store_true")
    opts = parser.parse_args()
    if opts.print:
        sys.stdout.write(emit_mlir.emit_mlir(gen_case.make_case(opts.seed)))
        return 0
    if not os.access(opts.dist_run, os.X_OK):
        print("difftest: %s is not an executable (build first, or pass --dist-run)" % opts.dist_run)
        return 1
    if opts.self_check:
        import selfcheck
        return selfcheck.run(opts)
    if opts.ci:
        return run_many(CI_SEEDS[:opts.limit], opts)
    if opts.soak is not None:
        seeds = itertools.count(opts.seed)
        return run_many(seeds, opts, deadline=time.time() + 60 * opts.soak)
    return run_many(range(opts.seed, opts.seed + (opts.cases or 1)), opts)


if __name__ == "__main__":
    sys.exit(main())
