"""The reference: the same model, initial parameters and data under PyTorch's
own DistributedDataParallel (gloo, CPU, one process per rank), K
micro-batches per window, the first K-1 under `ddp.no_sync()`, then SGD.

Writes, per window w, micro-batch k and rank r, the loss each micro-batch
returned (`<reference>/w<w>_k<k>_r<r>_loss.npy`, scaled by 1/K as the
compiled step's), and per window rank 0's gradients after the window's last
backward (`<reference>/w<w>_<param>.npy`, unsharded: DDP's average over the ranks; every
rank's are compared with rank 0's here, DDP's own invariant).

`spoil` makes a wrong reference on purpose, to show that the comparison
fails on the mistakes it exists to catch: `drop-micro-batch` skips the
backward of micro-batch 1 (a lost micro-batch), `double-average` divides
every gradient by W once more (averaged twice).
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

from . import recipe as recipes
from .files import data_path, load_params

SPOILS = ("drop-micro-batch", "double-average")

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


def _rank_main(rank, world, port, path, config, workdir, k, windows, lr, spoil, reference,
               seed):
    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=TIMEOUT_S))
    try:
        recipe = recipes.load(path, config)
        model = recipe.build(seed)  # frozen parameters as the traced step's
        load_params(model, workdir)
        ddp = DistributedDataParallel(model)
        opt = torch.optim.SGD(ddp.parameters(), lr=lr)
        trained = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
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
            opt.step()
            opt.zero_grad(set_to_none=False)
        dist.barrier()
    finally:
        dist.destroy_process_group()


def _data_count(workdir: str) -> int:
    with open(os.path.join(workdir, "data", "count")) as f:
        return int(f.read())


def run(path: str, config: str, workdir: str, world: int, k: int, windows: int,
        lr: float, spoil: str = "", reference: str = "torch", seed: int = 0) -> None:
    """Runs the DDP reference; its files land in workdir/<reference>."""
    os.makedirs(os.path.join(workdir, reference), exist_ok=True)
    context = mp.start_processes(_rank_main, args=(world, _free_port(), path, config, workdir,
                                                   k, windows, lr, spoil, reference, seed),
                                 nprocs=world, join=False, start_method="spawn")
    deadline = time.monotonic() + TIMEOUT_S
    while not context.join(timeout=1):
        if time.monotonic() > deadline:
            alive = [r for r, p in enumerate(context.processes) if p.is_alive()]
            for r in alive:
                context.processes[r].kill()
            raise OracleError("the PyTorch DDP reference did not finish in %g s (ranks %s "
                              "still running; DIST_TORCH_REFERENCE_TIMEOUT_S sets the limit)"
                              % (TIMEOUT_S, alive or "none"))



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
