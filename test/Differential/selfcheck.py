"""difftest.py --self-check: the tester must be able to fail.

Checks that (1) the hand-written numpy backward agrees with central finite
differences, and that the finite-difference check catches a wrong
derivative; (2) a case that passes stops passing when one gradient, one
loss, one rank's shard placement or one output file is wrong; (3) a
malformed input file makes dist-run fail with the rank and the file named,
and is not counted as passed; a case under its least stash budget passes,
its stash bytes are checked, and one byte less is refused; an optimizer
epilogue case passes and fails against references whose epilogue runs every
micro-batch, clips per parameter or does not skip a non-finite window; (4)
classify()
sorts exits into the four outcomes. Ends with `N passed, M failed`.
"""

import dataclasses
import os
import shutil
import tempfile

import numpy as np

import difftest
import gen_case
import reference
import reference_epilogue
import rounding

# A seed whose case passes today (generic linalg only; HSDP and ZeRO-3 on
# two meshes of 4 ranks, K = 4).


def run(opts):
    results = []

    def check(name, ok, detail=""):
        results.append(ok)
        print("%s: %s%s" % ("PASS" if ok else "FAIL", name, (" (%s)" % detail) if detail else ""))

    # (1) The reference against finite differences, and the check's teeth.
    for seed in range(1, 21):
        case = gen_case.make_case(seed)
        params, data = reference.draw_inputs(case)
        problems = reference.finite_difference_check(case, params, data)
        check("reference backward = finite differences, seed %d" % seed, not problems,
              "; ".join(problems[:2]))
    case = next(c for c in map(gen_case.make_case, range(1, 200))
                if any(l.act == "tanh" for l in c.layers))
    params, data = reference.draw_inputs(case)
    original = reference.act_derivative
    reference.act_derivative = lambda act, z: (1 - np.tanh(z)) if act == "tanh" else original(act, z)
    try:
        problems = reference.finite_difference_check(case, params, data)
    finally:
        reference.act_derivative = original
    check("a wrong tanh derivative is caught by the finite-difference check (seed %d)"
          % case.seed, bool(problems))

    # (2) A passing case, then its outputs spoiled one way at a time.
    case = next(c for c in map(gen_case.make_case, range(1, 500))
                if not c.buckets and ("loss",) in c.results and any(
                    r[0] == "grad" and c.params[r[1]].shards >= 2 for r in c.results))
    good_seed = case.seed
    directory = tempfile.mkdtemp(prefix="difftest-selfcheck-")
    try:
        rc, output, expected = difftest.execute(case, directory, opts)
        outcome, why = difftest.classify(rc, output)
        problems = difftest.compare(case, directory, expected) if outcome == "passed" else []
        check("seed %d passes unchanged" % good_seed, outcome == "passed" and not problems,
              why or "; ".join(problems[:2]))
        out = os.path.join(directory, "out")
        grad = next(i for i, r in enumerate(case.results) if r[0] == "grad")
        loss = case.results.index(("loss",))

        def spoiled(name, change):
            path = os.path.join(out, name)
            keep = path + ".orig"
            shutil.copy(path, keep)
            try:
                change(path)
                return difftest.compare(case, directory, expected)
            finally:
                shutil.move(keep, path)

        def bump(path, relative):
            a = np.load(path)
            a.flat[0] += np.float32(max(1e-3, relative * abs(float(a.flat[0]))))
            np.save(path, a)

        found = spoiled("w1_r0_grad%d.npy" % grad, lambda p: bump(p, 0.02))
        check("a gradient 2% off on rank 0, window 1, is reported", bool(found), "; ".join(found[:1]))
        found = spoiled("w0_k%d_r%d_out%d.npy" % (case.k - 1, case.world - 1, loss),
                        lambda p: bump(p, 0.01))
        check("a loss 1% off on the last rank's last micro-batch is reported", bool(found),
              "; ".join(found[:1]))
        # rounding.py's bounds, not rtol 5e-3: one gradient rounded through
        # bfloat16 (relative error up to 2^-9) is off the f32 bound.
        def to_bf16(path):
            np.save(path, rounding.round_to(np.load(path), "bf16").astype(np.float32))
        for i, r in enumerate(case.results):
            if r[0] != "grad":
                continue
            found = spoiled("w0_r0_grad%d.npy" % i, to_bf16)
            check("the gradient of @%s rounded through bf16 (rank 0, window 0) is reported"
                  % r[1], bool(found), "; ".join(found[:1]))
        found = spoiled("w0_k0_r0_out%d.npy" % loss, to_bf16)
        check("a loss rounded through bf16 is reported", bool(found), "; ".join(found[:1]))
        found = spoiled("w0_r0_grad%d.npy" % grad, os.remove)
        check("a missing gradient file is reported", bool(found), "; ".join(found[:1]))
        sharded = next(i for i, r in enumerate(case.results)
                       if r[0] == "grad" and case.params[r[1]].shards >= 2)
        other = os.path.join(out, "w0_r1_grad%d.npy" % sharded)
        found = spoiled("w0_r0_grad%d.npy" % sharded, lambda p: shutil.copy(other, p))
        check("rank 1's shard returned on rank 0 is reported", bool(found), "; ".join(found[:1]))
        want = case.gathers_per_window()
        check("the all_gathers per no_sync window match the case's count",
              not difftest.check_gathers(case, output), "; ".join(
                  difftest.check_gathers(case, output)[:1]))
        found = difftest.check_gathers(case, output.replace(
            "window 0: no_sync window: %d all_gather" % want,
            "window 0: no_sync window: %d all_gather" % (want + 1)))
        check("one all_gather too many in window 0 is reported", bool(found), "; ".join(found[:1]))
        found = difftest.check_gathers(case, "window 0: no_sync window: %d all_gather" % want)
        check("a window without an all_gather count is reported", bool(found) or case.windows == 1,
              "; ".join(found[:1]))

        # (3) A malformed parameter file: named, on some rank, and not passed.
        name = next(iter(case.params))
        path = os.path.join(directory, "params", name + ".npy")
        with open(path, "r+b") as f:
            f.truncate(os.path.getsize(path) - 4)
        rc, output = difftest.run_dist(difftest.dist_run_command(case, directory, opts),
                                       opts.timeout)
        outcome, why = difftest.classify(rc, output)
        named = "rank " in output and path in output
        check("a truncated parameter file fails, naming a rank and the file", rc != 0 and named
              and outcome != "passed", "exit %s, %s" % (rc, outcome))
    finally:
        shutil.rmtree(directory, ignore_errors=True)

    # (3b) keep-gathered: a case compiled with it gathers each re-gathered
    # parameter once per window, and its gradients still match numpy; the
    # same count without the option is wrong for it.
    case = next(c for c in map(gen_case.make_case, range(1, 500))
                if c.keep_gathered and c.k > 1 and not c.buckets)
    directory = tempfile.mkdtemp(prefix="difftest-selfcheck-keep-")
    try:
        rc, output, expected = difftest.execute(case, directory, opts)
        outcome, why = difftest.classify(rc, output)
        problems = (difftest.compare(case, directory, expected) +
                    difftest.check_gathers(case, output)) if outcome == "passed" else []
        check("keep-gathered seed %d passes with %d all_gathers per window"
              % (case.seed, case.gathers_per_window()), outcome == "passed" and not problems,
              why or "; ".join(problems[:2]))
        case.keep_gathered = False
        check("its count without keep-gathered (%d) is reported as wrong"
              % case.gathers_per_window(), bool(difftest.check_gathers(case, output)))
    finally:
        shutil.rmtree(directory, ignore_errors=True)

    # (3c) A stash budget: a case at the least budget (by gen_case's own
    # count) passes, the stash bytes dist-run reports are checked, and one
    # byte less is refused by the compiler: the two counts of the least agree.
    case = next(c for c in map(gen_case.make_case, range(1, 500))
                if c.budget_kind == "least" and c.stash_bytes_least() < c.stash_bytes_all()
                and c.world > 1 and c.k > 1 and not c.window_loop)
    directory = tempfile.mkdtemp(prefix="difftest-selfcheck-budget-")
    try:
        rc, output, expected = difftest.execute(case, directory, opts)
        outcome, why = difftest.classify(rc, output)
        problems = (difftest.compare(case, directory, expected) +
                    difftest.check_stash_bytes(case, output)) if outcome == "passed" else []
        check("seed %d passes under its least stash budget, %d bytes"
              % (case.seed, case.stash_budget), outcome == "passed" and not problems,
              why or "; ".join(problems[:2]))
        least = case.stash_bytes_least()
        found = difftest.check_stash_bytes(case, output.replace(
            "%d bytes of stashes" % least, "%d bytes of stashes" % (least + 4)))
        check("stashes 4 bytes over the budget are reported", bool(found), "; ".join(found[:1]))
        case.stash_budget = least - 1
        rc, output = difftest.run_dist(difftest.dist_run_command(case, directory, opts),
                                       opts.timeout)
        outcome, why = difftest.classify(rc, output)
        check("a budget one byte below the least (%d) is refused, naming the least"
              % least, outcome == "refused" and
              "expected a budget of at least %d bytes" % least in output, why)
    finally:
        shutil.rmtree(directory, ignore_errors=True)

    # (3d) The optimizer epilogue: a clipped SGD case with sharded
    # parameters and an unscaled one with an inf window pass, and fail
    # against references with the epilogue's semantics spoiled: run every
    # micro-batch, clipped per parameter instead of by the global norm, a
    # non-finite window not skipped, and a next-parameter file bumped.
    original_apply = reference_epilogue.apply

    def per_micro_batch(case, grads, params, state, step, errs):
        for _ in range(case.k):
            params, state, step, norm, skipped, e = original_apply(case, grads, params, state,
                                                                   step, errs)
            errs = dict(errs, param=e["param"], state=e["state"])
        return params, state, step, norm, skipped, e

    def per_parameter(case, grads, params, state, step, errs):
        out_p, out_s, norm, out_e = {}, dict(state), None, {"param": {}, "state": {}}
        for n in params:
            own = {k: v for k, v in state.items() if k[0] == n}
            own_errs = {"grad": {n: errs["grad"][n]}, "param": {n: errs["param"][n]},
                        "state": {k: v for k, v in errs["state"].items() if k[0] == n}}
            p1, s1, _, norm, skipped, e = original_apply(case, {n: grads[n]}, {n: params[n]},
                                                         own, step, own_errs)
            out_p.update(p1)
            out_s.update(s1)
            out_e["param"].update(e["param"])
            out_e["state"].update(e["state"])
            out_e["norm"] = e["norm"]
        return out_p, out_s, step, norm, skipped, out_e

    def not_skipped(case, grads, params, state, step, errs):
        # Unscaled, then updated whatever the gradients hold (a NaN
        # parameter); still a non-finite window, whose gradients are not
        # compared.
        unscaled = dataclasses.replace(case, epilogue=dataclasses.replace(
            case.epilogue, scale=None))
        grads = {n: g / case.epilogue.scale for n, g in grads.items()}
        errs = dict(errs, grad={n: g / case.epilogue.scale for n, g in errs["grad"].items()})
        out = original_apply(unscaled, grads, params, state, step, errs)
        return out[:4] + (not all(np.all(np.isfinite(g)) for g in grads.values()), out[5])

    for want, spoils in [
            (lambda c: c.epilogue and c.epilogue.clip and c.epilogue.opt == "sgd" and c.k > 1
             and c.windows > 1 and c.epilogue.scale is None and len(c.params) > 1
             and any(p.shards > 1 for p in c.params.values()),
             [("run every micro-batch", per_micro_batch),
              ("clipped per parameter", per_parameter)]),
            (lambda c: c.epilogue and c.epilogue.inf_window is not None,
             [("a non-finite window not skipped", not_skipped)])]:
        case = next(c for c in map(gen_case.make_case, range(1, 500)) if want(c))
        directory = tempfile.mkdtemp(prefix="difftest-selfcheck-epilogue-")
        try:
            rc, output, expected = difftest.execute(case, directory, opts)
            outcome, why = difftest.classify(rc, output)
            problems = difftest.compare(case, directory, expected) if outcome == "passed" else []
            check("epilogue seed %d (%s) passes" % (case.seed, " ".join(
                t for t in case.tags() if t.startswith("epi"))),
                outcome == "passed" and not problems, why or "; ".join(problems[:2]))
            params, data = reference.draw_inputs(case)
            for name, spoil in spoils:
                reference_epilogue.apply = spoil
                try:
                    found = difftest.compare(case, directory,
                                             reference.expected_outputs(case, params, data))
                finally:
                    reference_epilogue.apply = original_apply
                check("a reference with the epilogue %s is reported" % name, bool(found),
                      "; ".join(found[:1]))
            nxt = next(i for i, r in enumerate(case.results) if r[0] == "next")
            path = os.path.join(directory, "out", "w0_k%d_r0_out%d.npy" % (case.k - 1, nxt))
            a = np.load(path)
            a.flat[0] += np.float32(0.01 + 0.02 * abs(float(a.flat[0])))
            np.save(path, a)
            found = difftest.compare(case, directory, expected)
            check("a next parameter 2% off on rank 0, window 0, is reported", bool(found),
                  "; ".join(found[:1]))
        finally:
            shutil.rmtree(directory, ignore_errors=True)

    # (4) The four outcomes.
    for rc, output, want in [
            (0, "", "passed"),
            (1, "rank 1: FAIL window 0: the gradient of @w differs", "failed"),
            (1, "/t/step.mlir:3:5: error: this op uses result #1\\ndist-run: the no_sync pipeline "
                "failed", "refused"),
            (139, "mpirun noticed that process rank 0 exited on signal 11 (Segmentation fault)",
             "crashed"),
            (1, "something went wrong", "crashed"),
            (None, "", "crashed")]:
        got = difftest.classify(rc, output.replace("\\n", "\n"))[0]
        check("classify(exit %s, %r...) = %s" % (rc, output[:30], want), got == want, got)

    passed = sum(results)
    print("%d passed, %d failed" % (passed, len(results) - passed))
    return 0 if passed == len(results) else 1
