"""dist-torch: PyTorch models through dist.

    dist-torch emit  MODEL.py [--config ci] [--world 2] [--k 4] [--placement SPEC] [-o step.mlir]
    dist-torch train MODEL.py [--config ci] [--world 2] [--k 4] [--windows 3]
                     [--placement SPEC] [--lr 0.1] [--workdir DIR] [--no-compare]
                     [--spoil KIND [--reuse]] [OPTIMIZER OPTIONS]
                     [-- DIST-RUN OPTIONS]

    OPTIMIZER OPTIONS: [--epilogue] [--clip MAX_NORM] [--momentum M]
                       [--weight-decay WD] [--nesterov]

`emit` traces MODEL.py's training step (python/dist_torch/recipe.py) and
writes it as a dist module. `train` also runs it: W ranks under mpirun,
windows of K micro-batches with no_sync, SGD between windows (dist-run,
which checks each window against always-sync accumulation itself), then
the same model, initial parameters and data under PyTorch's
DistributedDataParallel with no_sync (gloo), and compares every window's
losses and gradients (compare.py states the bound). Exit 0 when all agree.

The optimizer options put the optimizer in the compiled step, once per
window (a dist.epilogue, python/dist_torch/epilogue.py):
clip_grad_norm_(max_norm) and torch.optim.SGD(lr, momentum, weight_decay,
nesterov), traced from PyTorch; the reference runs the same calls after
DDP's last backward, and the parameters after each window and the total
norm are compared too. Any of them implies --epilogue.

SPEC places parameters: one of ddp, zero2, zero3, hsdp (ZeRO-3 within
pairs of ranks, replicated across: W >= 4), hsdp2, for all, or
'PATTERN=KIND,...' per parameter (fnmatch on names, first match wins); a
kind takes options after '/': bf16 or f16 (FSDP2's param_dtype),
reduce-<dtype>, stash-<local|shard|synced> (docs/PyTorch.md).
With --spoil (drop-micro-batch, double-average; with the optimizer in the
step also epilogue-every-micro-batch, clip-per-parameter) the PyTorch
reference is made wrong on purpose and the
command succeeds only if the comparison catches it; --reuse compares the
dist run already in --workdir (same options) instead of running it again.
"""

import argparse
import os
import shutil
import sys
import tempfile
import time

import torch

from . import compare, epilogue, files, oracle, placement, recipe as recipes, run
from .emit import emit_module
from .mlir import EmitError
from .trace import TraceError, distinct_parameters, trace_step


def _args(argv):
    p = argparse.ArgumentParser(prog="dist-torch", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", choices=["emit", "train"])
    p.add_argument("model", help="a model file with dist_model, dist_batch, dist_loss")
    p.add_argument("--config", default="ci")
    p.add_argument("--world", type=int, default=2)
    p.add_argument("--k", type=int, default=4)
    p.add_argument("--windows", type=int, default=3)
    p.add_argument("--micro-batch", type=int, default=None,
                   help="sequences per rank per micro-batch (default: the file's)")
    p.add_argument("--placement", default="ddp")
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workdir", default=None, help="keep the run's files here")
    p.add_argument("-o", "--output", default=None)
    p.add_argument("--no-compare", action="store_true")
    p.add_argument("--f64", action="store_true",
                   help="also measure window 0 of both against a float64 reference")
    p.add_argument("--spoil", choices=oracle.SPOILS + oracle.EPILOGUE_SPOILS, default=None)
    p.add_argument("--epilogue", action="store_true",
                   help="SGD in the compiled step, once per window (dist.epilogue)")
    p.add_argument("--clip", type=float, default=None, metavar="MAX_NORM",
                   help="clip_grad_norm_ before the step (implies --epilogue)")
    p.add_argument("--momentum", type=float, default=0.0)
    p.add_argument("--weight-decay", type=float, default=0.0)
    p.add_argument("--nesterov", action="store_true")
    p.add_argument("--reuse", action="store_true",
                   help="with --spoil and --workdir: compare the dist run already there")
    p.add_argument("--dist-run", default=None)
    p.add_argument("dist_run_args", nargs="*", help="after --: passed to dist-run")
    return p.parse_args(argv)


def _trace(a, recipe):
    model = recipe.build(a.seed)
    micro_batch = a.micro_batch or recipe.default_micro_batch()
    batch = recipe.draw(micro_batch, a.seed, 0, 0, 0)
    shapes = {n: tuple(p.shape) for n, _, p in distinct_parameters(model)}
    placements = placement.parse_spec(a.placement, shapes, a.world)
    compute = {n: p.param_dtype for n, p in placements.items() if p.param_dtype is not None}
    step = trace_step(model, recipe.loss, batch, a.k, param_dtype=compute)
    return model, micro_batch, step, placements


def _optimizer(a):
    """The epilogue's optimizer, or None (dist-run's SGD between windows)."""
    if not (a.epilogue or a.clip is not None or a.momentum or a.weight_decay or a.nesterov):
        if a.spoil in oracle.EPILOGUE_SPOILS:
            raise ValueError("--spoil %s needs the optimizer in the step (--epilogue)"
                             % a.spoil)
        return None
    opt = epilogue.Optimizer(a.lr, a.momentum, a.weight_decay, a.nesterov, a.clip)
    opt.check()
    if a.spoil == "clip-per-parameter" and a.clip is None:
        raise ValueError("--spoil clip-per-parameter needs --clip")
    return opt


def _check_args(a):
    for name in ("world", "k", "windows"):
        if getattr(a, name) < 1:
            raise ValueError("--%s must be at least 1, got %d" % (name, getattr(a, name)))
    if a.micro_batch is not None and a.micro_batch < 1:
        raise ValueError("--micro-batch must be at least 1, got %d" % a.micro_batch)
    if not (a.lr == a.lr and abs(a.lr) != float("inf")):
        raise ValueError("--lr must be a finite number, got %r" % a.lr)


def _low_precision(placements) -> list:
    """Parameters computed or reduced in bf16/f16: PyTorch DDP in f32 is no
    reference for them within an f32 bound."""
    low = (torch.bfloat16, torch.float16)
    return sorted(n for n, p in placements.items()
                  if p.param_dtype in low or p.reduce_dtype in low)


def main(argv=None) -> int:
    a = _args(sys.argv[1:] if argv is None else argv)
    torch.set_num_threads(1)
    try:
        _check_args(a)
        recipe = recipes.load(a.model, a.config)
        optimizer = _optimizer(a)
        model, micro_batch, step, placements = _trace(a, recipe)
        text = emit_module(step, placements, a.model, optimizer)
        low = _low_precision(placements)
        if a.command == "train" and not a.no_compare and low:
            raise ValueError(
                "%d parameter(s) compute or reduce in bf16/f16 (%s...): the reference, "
                "PyTorch DDP in f32, does not bound their rounding; run with --no-compare "
                "(dist-run still checks no_sync against always-sync accumulation)"
                % (len(low), low[0]))
    except (EmitError, TraceError, ValueError, recipes.RecipeError) as e:
        print("dist-torch: error: %s" % e, file=sys.stderr)
        return 1
    if a.command == "emit":
        if a.output and a.output != "-":
            with open(a.output, "w") as f:
                f.write(text)
        else:
            sys.stdout.write(text)
        return 0

    if a.reuse and not (a.spoil and a.workdir):
        raise SystemExit("dist-torch: --reuse needs --spoil and --workdir")
    workdir = a.workdir or tempfile.mkdtemp(prefix="dist-torch-")
    if not a.reuse:
        _run_dist(a, workdir, text, model, recipe, step, micro_batch)
        if a.no_compare:
            return 0
    elif not os.path.isdir(os.path.join(workdir, "out")):
        raise SystemExit("dist-torch: --reuse: no dist run in %s" % workdir)
    sys.stdout.flush()
    start = time.time()
    reference = "torch" if not a.spoil else "torch-spoiled-" + a.spoil
    try:
        oracle.run(recipe.path, a.config, workdir, a.world, a.k, a.windows, a.lr,
                   a.spoil or "", reference, a.seed, optimizer)
    except oracle.OracleError as e:
        print("dist-torch: FAIL: %s" % e)
        return 1
    print("dist-torch: PyTorch DDP reference done (%.1f s)" % (time.time() - start))
    names = [p[0] for p in step.params]
    full = {name: tuple(p.shape) for name, _, p in step.params}
    failures, drift = [], {}
    prev = files.read_initial_params(workdir, names)
    for w in range(a.windows):
        grads, problems = files.read_dist_grads(workdir, w, a.world, names, placements, full)
        failures += ["window %d: %s" % (w, p) for p in problems]
        torch_grads = files.read_torch_grads(workdir, reference, w, names)
        failures += compare.compare_window(
            w, grads, torch_grads, files.read_dist_losses(workdir, w, a.k, a.world),
            files.read_torch_losses(workdir, reference, w, a.k, a.world))
        if optimizer is None:
            continue
        nxt, norm, problems = files.read_dist_epilogue(
            workdir, w, a.k, a.world, names, placements, full,
            optimizer.norm_result(len(names)))
        failures += ["window %d: %s" % (w, p) for p in problems]
        ref, ref_norm = files.read_torch_epilogue(workdir, reference, w, names,
                                                  optimizer.clip is not None)
        failures += compare.compare_epilogue(w, nxt, ref, prev, drift, norm, ref_norm,
                                             torch_grads)
        prev = ref
    if a.f64:
        exact = oracle.f64_reference(recipe.path, a.config, workdir, a.world, a.k, a.seed)
        grads, _ = files.read_dist_grads(workdir, 0, a.world, names, placements, full)
        compare.report_f64(exact, grads, files.read_torch_grads(workdir, reference, 0, names))
    for f in failures[:20]:
        print("dist-torch: mismatch: %s" % f)
    if a.spoil:
        if failures:
            print("dist-torch: PASS: the spoiled reference (%s) was caught: %d mismatches"
                  % (a.spoil, len(failures)))
            return 0
        print("dist-torch: FAIL: the spoiled reference (%s) was NOT caught" % a.spoil)
        return 1
    if failures:
        print("dist-torch: FAIL: %d mismatches against PyTorch DDP" % len(failures))
        return 1
    print("dist-torch: PASS: %d windows of losses and gradients%s agree with PyTorch DDP "
          "no_sync" % (a.windows, ", parameters after %s" % optimizer.describe()
                       if optimizer else ""))
    return 0


def _run_dist(a, workdir, text, model, recipe, step, micro_batch):
    """Writes the run directory and runs dist-run on it (exit 1 on failure)."""
    if os.path.exists(workdir):
        for sub in ("out", "torch", "data", "params"):
            shutil.rmtree(os.path.join(workdir, sub), ignore_errors=True)
    os.makedirs(workdir, exist_ok=True)
    with open(os.path.join(workdir, "step.mlir"), "w") as f:
        f.write(text)
    files.write_params(model, workdir)
    files.write_data(recipe, workdir, a.world, a.k, a.windows, micro_batch,
                     len(step.params), a.seed)
    tokens = a.world * a.k * micro_batch * _tokens_per_sequence(step)
    print("dist-torch: %s (%s): %d parameters in %d tensors, W=%d, K=%d, micro-batch %d, "
          "%d tokens per window; placement %s; files in %s"
          % (os.path.basename(a.model), a.config, sum(p[2].numel() for p in step.params),
             len(step.params), a.world, a.k, micro_batch, tokens, a.placement, workdir))
    sys.stdout.flush()
    start = time.time()
    proc = run.run_dist(workdir, a.world, a.k, a.windows, a.lr,
                        run.find_dist_run(a.dist_run), a.dist_run_args)
    run.relay(proc, prefix="  dist-run: ")
    if proc.returncode != 0:
        print("dist-torch: FAIL: dist-run exited %d" % proc.returncode)
        sys.exit(1)
    print("dist-torch: dist-run passed (%.1f s)" % (time.time() - start))


def _tokens_per_sequence(step) -> int:
    first = step.data[0]
    return first.shape[1] if first.dim() > 1 else 1


if __name__ == "__main__":
    sys.exit(main())
