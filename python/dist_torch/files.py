"""The run directory both sides read: the initial parameters and every
rank's data, as .npy files in dist-run's layout (docs/Design.md, "Running
any step"), and dist-run's results read back.

    params/<name>.npy              one distinct parameter, unsharded
    data/w<w>_k<k>_r<r>_a<a>.npy   step argument a (after the parameters)
    data/count, data/first         how many data arguments, the first's index
    out/                           dist-run --out-npy
    torch/                         the PyTorch reference (oracle.py)
    torch-spoiled-<kind>/          a reference made wrong on purpose
"""

import os
from typing import Dict, List, Optional

import numpy as np
import torch

from .placement import Placement


def data_path(workdir: str, window: int, micro: int, rank: int, i: int) -> str:
    with open(os.path.join(workdir, "data", "first")) as f:
        first = int(f.read())
    return os.path.join(workdir, "data", "w%d_k%d_r%d_a%d.npy" % (window, micro, rank, first + i))


def write_params(model: torch.nn.Module, workdir: str) -> None:
    os.makedirs(os.path.join(workdir, "params"), exist_ok=True)
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue  # frozen: a constant of the traced step
        np.save(os.path.join(workdir, "params", name + ".npy"),
                p.detach().to(torch.float32).numpy())


def load_params(model: torch.nn.Module, workdir: str) -> None:
    with torch.no_grad():
        for name, p in model.named_parameters():
            if not p.requires_grad:
                continue
            p.copy_(torch.from_numpy(np.load(os.path.join(workdir, "params", name + ".npy"))))


def read_initial_params(workdir: str, names: List[str]) -> Dict[str, np.ndarray]:
    return {n: np.load(os.path.join(workdir, "params", n + ".npy")) for n in names}


def write_data(recipe, workdir: str, world: int, k: int, windows: int, micro_batch: int,
               first: int, seed: int) -> None:
    d = os.path.join(workdir, "data")
    os.makedirs(d, exist_ok=True)
    count = None
    for w in range(windows):
        for micro in range(k):
            for r in range(world):
                batch = recipe.draw(micro_batch, seed, w, micro, r)
                count = len(batch)
                for i, t in enumerate(batch):
                    np.save(os.path.join(d, "w%d_k%d_r%d_a%d.npy" % (w, micro, r, first + i)),
                            t.numpy())
    with open(os.path.join(d, "count"), "w") as f:
        f.write(str(count))
    with open(os.path.join(d, "first"), "w") as f:
        f.write(str(first))


def shard_index(placement: Placement, rank: int) -> int:
    """The shard a rank holds: its position in the parameter's shard group
    (row-major over the shard axes), as dist-run places shards."""
    shape = placement.mesh.shape
    coords, r = [], rank
    for extent in reversed(shape):
        coords.append(r % extent)
        r //= extent
    coords.reverse()
    axes = placement.shard_axes or tuple(range(len(shape)))
    index = 0
    for a in axes:
        index = index * shape[a] + coords[a]
    return index


def read_dist_grads(workdir: str, window: int, world: int, names: List[str],
                    placements: Dict[str, Placement], full_shapes: Dict[str, tuple]):
    """The window's gradients dist-run wrote, unsharded: (grads, problems),
    problems naming replicas that disagree (they must be bitwise equal)."""
    return _read_unsharded(
        lambda r, i: "w%d_r%d_grad%d.npy" % (window, r, 1 + i), "gradient",
        workdir, world, names, placements, full_shapes)


def read_dist_epilogue(workdir: str, window: int, k: int, world: int, names: List[str],
                       placements: Dict[str, Placement], full_shapes: Dict[str, tuple],
                       norm_result: Optional[int]):
    """What the window's epilogue yielded: the next parameters (results
    1 + n ... of the sync step, after the loss and the n gradients; written
    with the last micro-batch's results), unsharded, and the total norm
    (result `norm_result`, or None): (params, norm, problems)."""
    n = len(names)
    name = lambda r, i: "w%d_k%d_r%d_out%d.npy" % (window, k - 1, r, i)  # noqa: E731
    params, problems = _read_unsharded(lambda r, i: name(r, 1 + n + i), "next value",
                                       workdir, world, names, placements, full_shapes)
    norm = None
    if norm_result is not None:
        norm = float(np.load(os.path.join(workdir, "out", name(0, norm_result))))
    return params, norm, problems


def _read_unsharded(path_of, what: str, workdir: str, world: int, names: List[str],
                    placements: Dict[str, Placement], full_shapes: Dict[str, tuple]):
    out = os.path.join(workdir, "out")
    values, problems = {}, []
    for i, name in enumerate(names):
        pl = placements[name]
        per_rank = [np.load(os.path.join(out, path_of(r, i))) for r in range(world)]
        if not pl.sharded:
            for r in range(1, world):
                if not np.array_equal(per_rank[r], per_rank[0]):
                    problems.append("%s: rank %d's %s differs from rank 0's" % (name, r, what))
            values[name] = per_rank[0]
            continue
        shards = {}
        for r in range(world):
            index = shard_index(pl, r)
            if index in shards:
                if not np.array_equal(shards[index], per_rank[r]):
                    problems.append("%s: rank %d's shard %d of the %s differs from its "
                                    "replica" % (name, r, index, what))
            else:
                shards[index] = per_rank[r]
        full = np.concatenate([shards[i] for i in range(len(shards))], axis=0)
        rows = full_shapes[name][0]
        if np.any(full[rows:] != 0):
            problems.append("%s: the padding rows' %s is not zero" % (name, what))
        values[name] = full[:rows]
    return values, problems


def read_dist_losses(workdir: str, window: int, k: int, world: int):
    out = os.path.join(workdir, "out")
    return np.array([[float(np.load(os.path.join(out, "w%d_k%d_r%d_out0.npy" % (window, m, r))))
                      for r in range(world)] for m in range(k)])


def read_torch_losses(workdir: str, reference: str, window: int, k: int, world: int):
    t = os.path.join(workdir, reference)
    return np.array([[float(np.load(os.path.join(t, "w%d_k%d_r%d_loss.npy" % (window, m, r))))
                      for r in range(world)] for m in range(k)])


def read_torch_grads(workdir: str, reference: str, window: int, names: List[str]):
    t = os.path.join(workdir, reference)
    return {n: np.load(os.path.join(t, "w%d_%s.npy" % (window, n))) for n in names}


def read_torch_epilogue(workdir: str, reference: str, window: int, names: List[str],
                        with_norm: bool):
    """The reference's parameters after the window's optimizer step, and
    clip_grad_norm_'s total norm (None without clipping)."""
    t = os.path.join(workdir, reference)
    params = {n: np.load(os.path.join(t, "w%d_next_%s.npy" % (window, n))) for n in names}
    norm = float(np.load(os.path.join(t, "w%d_norm.npy" % window))) if with_norm else None
    return params, norm
