"""The reference: the same model, initial parameters and data under PyTorch's
own DistributedDataParallel (gloo, CPU, one process per rank), K
micro-batches per window, the first K-1 under `ddp.no_sync()`, then SGD.

Writes, per window w, micro-batch k and rank r, the loss each micro-batch
returned (`<reference>/w<w>_k<k>_r<r>_loss.npy`, scaled by 1/K as the
compiled step's), and per window rank 0's gradients after the window's last
backward (`<reference>/w<w>_<param>.npy`, unsharded: DDP's average over the ranks; every
rank's are compared with rank 0's here, DDP's own invariant).

With an optimizer (epilogue.Optimizer), the window ends as a user's loop
does: `torch.nn.utils.clip_grad_norm_(ddp.parameters(), max_norm)` (its
total norm saved, `w<w>_norm.npy`), then `torch.optim.SGD(...).step()`;
rank 0 saves the parameters after it (`w<w>_next_<param>.npy`).

`spoil` makes a wrong reference on purpose, to show that the comparison
fails on the mistakes it exists to catch: `drop-micro-batch` skips the
backward of micro-batch 1 (a lost micro-batch), `double-average` divides
every gradient by W once more (averaged twice); with an optimizer,
`epilogue-every-micro-batch` clips and steps after every micro-batch (the
optimizer inside the accumulation loop), `clip-per-parameter` clips each
gradient by its own norm (a norm not summed over the parameters).
"""

import contextlib
import datetime
import os
import socket
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel

from . import gloo
from . import recipe as recipes
from .files import data_path, load_params

SPOILS = ("drop-micro-batch", "double-average")
EPILOGUE_SPOILS = ("epilogue-every-micro-batch", "clip-per-parameter")

# A reference that has not finished in this long is stuck (gloo's own
# default waits 30 minutes in a collective): its ranks are stopped and the
# run fails with the reason, instead of outliving the test's timeout.
TIMEOUT_S = float(os.environ.get("DIST_TORCH_REFERENCE_TIMEOUT_S", "600"))


class OracleError(Exception):
    pass


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rank_main(rank, *args):
    gloo.run_rank(rank, _rank_work, *args)


def _rank_work(rank, world, port, path, config, workdir, k, windows, lr, spoil, reference,
               seed, optimizer):
    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=TIMEOUT_S))
    recipe = recipes.load(path, config)
    model = recipe.build(seed)  # frozen parameters as the traced step's
    load_params(model, workdir)
    ddp = DistributedDataParallel(model)
    trained = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    opt = optimizer.torch_optimizer([p for _, p in trained]) if optimizer else \
        torch.optim.SGD(ddp.parameters(), lr=lr)

    def window_step():
        norm = None
        if optimizer and optimizer.clip is not None:
            ps = [p for _, p in trained]
            if spoil == "clip-per-parameter":
                norm = torch.linalg.vector_norm(torch.stack([
                    torch.nn.utils.clip_grad_norm_([p], optimizer.clip) for p in ps]))
            else:
                norm = torch.nn.utils.clip_grad_norm_(ps, optimizer.clip)
        opt.step()
        return norm
    out = os.path.join(workdir, reference)
    for w in range(windows):
        for micro in range(k):
            batch = [torch.from_numpy(np.load(data_path(workdir, w, micro, rank, i)))
                     for i in range(_data_count(workdir))]
            last = micro == k - 1
            with (ddp.no_sync() if not last else contextlib.nullcontext()):
                loss = recipe.loss(ddp, *batch) / k
                if not (spoil == "drop-micro-batch" and micro == 1):
                    loss.backward()
            if spoil == "epilogue-every-micro-batch" and not last:
                window_step()
            np.save(os.path.join(out, "w%d_k%d_r%d_loss.npy" % (w, micro, rank)),
                    loss.detach().reshape(()).numpy())
        if spoil == "double-average":
            for _, p in trained:
                p.grad /= world
        grads = [p.grad.detach().clone() for _, p in trained]
        # DDP's invariant: every rank holds the same averaged gradient
        # (non-finite entries too; compare.py fails them).
        for (n, _), g in zip(trained, grads):
            ref = g.clone()
            dist.broadcast(ref, 0)
            if not torch.allclose(ref, g, rtol=0, atol=0, equal_nan=True):
                raise RuntimeError("rank %d: DDP's gradient of %s differs from rank 0's "
                                   "by %g" % (rank, n, float((ref - g).abs().max())))
        if rank == 0:
            for (n, _), g in zip(trained, grads):
                np.save(os.path.join(out, "w%d_%s.npy" % (w, n)), g.numpy())
        norm = window_step()
        if rank == 0 and optimizer:
            if norm is not None:
                np.save(os.path.join(out, "w%d_norm.npy" % w), norm.detach().numpy())
            for n, p in trained:
                np.save(os.path.join(out, "w%d_next_%s.npy" % (w, n)),
                        p.detach().numpy())
        opt.zero_grad(set_to_none=False)
    dist.barrier()  # leave together; gloo.run_rank ends the process


def _data_count(workdir: str) -> int:
    with open(os.path.join(workdir, "data", "count")) as f:
        return int(f.read())


def run(path: str, config: str, workdir: str, world: int, k: int, windows: int,
        lr: float, spoil: str = "", reference: str = "torch", seed: int = 0,
        optimizer=None) -> None:
    """Runs the DDP reference; its files land in workdir/<reference>.
    `optimizer`: an epilogue.Optimizer run once per window, else SGD(lr)."""
    os.makedirs(os.path.join(workdir, reference), exist_ok=True)
    context = mp.start_processes(_rank_main, args=(world, _free_port(), path, config, workdir,
                                                   k, windows, lr, spoil, reference, seed,
                                                   optimizer),
                                 nprocs=world, join=False, start_method="spawn")
    deadline = time.monotonic() + TIMEOUT_S
    while not _joined(context):
        if time.monotonic() > deadline:
            alive = [r for r, p in enumerate(context.processes) if p.is_alive()]
            for r in alive:
                context.processes[r].kill()
            raise OracleError("the PyTorch DDP reference did not finish in %g s (ranks %s "
                              "still running; DIST_TORCH_REFERENCE_TIMEOUT_S sets the limit)"
                              % (TIMEOUT_S, alive or "none"))

def _joined(context) -> bool:
    """Whether every rank has ended; a rank that failed (its traceback is on
    stderr) stops the others and fails the reference."""
    try:
        return context.join(timeout=1)
    except mp.ProcessExitedException as e:
        raise OracleError("the PyTorch DDP reference failed: rank %d exited with code %s "
                          "(its traceback is above)" % (e.error_index, e.exit_code)) from None


def f64_reference(path: str, config: str, workdir: str, world: int, k: int, seed: int = 0):
    """Window 0's gradients in float64, in one process: the same model,
    parameters and data, (1/W) sum over ranks and micro-batches of the
    gradient of loss / K. No DDP, no f32: the scale of f32 rounding on
    both sides (compare.py)."""
    torch.set_num_threads(1)
    recipe = recipes.load(path, config)
    model = recipe.build(seed)
    load_params(model, workdir)
    model = model.double()
    for rank in range(world):
        for micro in range(k):
            batch = [torch.from_numpy(np.load(data_path(workdir, 0, micro, rank, i)))
                     for i in range(_data_count(workdir))]
            batch = [b.double() if b.is_floating_point() else b for b in batch]
            (recipe.loss(model, *batch) / k).backward()
    return {n: (p.grad / world).numpy() for n, p in model.named_parameters()
            if p.requires_grad}
