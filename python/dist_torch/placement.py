"""Where each parameter lives: the per-parameter placement a user gives.

The names follow PyTorch: `replicate` is DDP, `fully_shard` is FSDP2's
(`reshard_after_forward=True` is ZeRO-3, False ZeRO-2), and a 2-D mesh with
`shard_axes` and `replicate_axes` is HSDP. A placement becomes one
`dist.parameter` (docs/Design.md, "The input model"): dim 0 sharded over
the shard group, padded as FSDP pads it when the group does not divide it
(`unsharded_dim0`); `param_dtype` / `reduce_dtype` are FSDP2's
MixedPrecisionPolicy; `stash` is dist's stash point.
"""

import dataclasses
import fnmatch
import math
from typing import Dict, List, Optional, Sequence, Tuple

import torch

from .mlir import Builder, Tensor, element_type, tensor_type


@dataclasses.dataclass(frozen=True)
class Mesh:
    shape: Tuple[int, ...]
    name: str = "mesh"

    @property
    def size(self) -> int:
        return math.prod(self.shape)


@dataclasses.dataclass(frozen=True)
class Placement:
    mesh: Mesh
    sharded: bool = False
    reshard_after_forward: bool = True  # ZeRO-3; False: ZeRO-2
    shard_axes: Tuple[int, ...] = ()  # () = every axis
    replicate_axes: Tuple[int, ...] = ()
    param_dtype: Optional[torch.dtype] = None
    reduce_dtype: Optional[torch.dtype] = None
    stash: Optional[str] = None  # local, shard or synced

    @property
    def group_size(self) -> int:
        axes = self.shard_axes or tuple(range(len(self.mesh.shape)))
        return math.prod(self.mesh.shape[a] for a in axes)

    def local_shape(self, full: Sequence[int]) -> Tuple[int, ...]:
        if not self.sharded:
            return tuple(full)
        if not full:
            raise ValueError("a scalar parameter cannot be sharded along dim 0")
        rows = -(-full[0] // self.group_size)
        return (rows,) + tuple(full[1:])

    def declaration(self, name: str, full: Sequence[int], held: str, compute: str) -> str:
        local = self.local_shape(full)
        text = 'dist.parameter @"%s" : %s %s on @%s' % (
            name, tensor_type(local, held),
            "fully_sharded" if self.sharded else "replicated", self.mesh.name)
        if self.shard_axes:
            text += " axes = [%s]" % ", ".join(map(str, self.shard_axes))
        if self.replicate_axes:
            text += " replicate_axes = [%s]" % ", ".join(map(str, self.replicate_axes))
        if self.sharded and full[0] % self.group_size:
            text += " unsharded_dim0 = %d" % full[0]
        if compute != held:
            text += " param_dtype = %s" % compute
        if self.reduce_dtype is not None:
            text += " reduce_dtype = %s" % element_type(self.reduce_dtype)
        if self.stash:
            text += " stash = %s" % self.stash
        return text

    def synchronize(self, builder: Builder, local: Tensor, full: Sequence[int],
                    compute: str) -> Tensor:
        axes = " axes = [%s]" % ", ".join(map(str, self.shard_axes)) if self.shard_axes else ""
        kind = "fully_sharded" if self.sharded else "replicated"
        ssa = builder.op("dist.synchronize %s on @%s%s kind = %s : %s -> %s" % (
            local.ssa, self.mesh.name, axes, kind, local.type,
            tensor_type(full, compute)), "p")
        return Tensor(ssa, tuple(full), compute)


# -- presets and the command line's placement spec -----------------------------

PRESETS = ("ddp", "zero2", "zero3", "hsdp", "hsdp2")


def preset(kind: str, world: int, **mixed) -> Placement:
    """ddp, zero2, zero3 on a 1-D mesh of `world`; hsdp (ZeRO-3 within a
    node, replicated across) / hsdp2 (ZeRO-2 within) on [world/2, 2]."""
    if kind in ("hsdp", "hsdp2"):
        if world % 2 or world < 4:
            raise ValueError("hsdp needs a world of at least 4 that 2 divides, got %d" % world)
        mesh = Mesh((world // 2, 2))
        return Placement(mesh, True, kind == "hsdp", (1,), (0,), **mixed)
    mesh = Mesh((world,))
    if kind == "ddp":
        return Placement(mesh, False, **mixed)
    if kind in ("zero2", "zero3"):
        return Placement(mesh, True, kind == "zero3", **mixed)
    raise ValueError("unknown placement '%s' (expected one of %s)" % (kind, ", ".join(PRESETS)))


_DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32,
           "f64": torch.float64}


def _with_options(placement: Placement, options: List[str], spec: str) -> Placement:
    """KIND/OPTION/...: bf16, f16 (param_dtype), reduce-<dtype>,
    stash-<local|shard|synced>."""
    for option in options:
        if option in _DTYPES:
            placement = dataclasses.replace(placement, param_dtype=_DTYPES[option])
        elif option.startswith("reduce-") and option[7:] in _DTYPES:
            placement = dataclasses.replace(placement, reduce_dtype=_DTYPES[option[7:]])
        elif option.startswith("stash-") and option[6:] in ("local", "shard", "synced"):
            placement = dataclasses.replace(placement, stash=option[6:])
        else:
            raise ValueError("unknown placement option '%s' in '%s' (expected bf16, f16, "
                             "reduce-<bf16|f16|f32|f64>, stash-<local|shard|synced>)"
                             % (option, spec))
    return placement


def parse_spec(spec: str, shapes: Dict[str, Sequence[int]], world: int) -> Dict[str, Placement]:
    """'zero3' for every parameter, or 'PATTERN=KIND,...' (fnmatch patterns
    over parameter names, first match wins; '*' the rest), e.g.
    '*wte*=zero3,*ln*=ddp,*=zero2'. A kind may carry options after '/':
    'zero3/bf16/reduce-f32' (FSDP2's MixedPrecisionPolicy), '/stash-synced'.
    With any hsdp kind the mesh is [W/2, 2] for every parameter (one mesh per
    module). A 0-d parameter (a scalar) is replicated whatever its kind:
    there is no dim 0 to shard. `shapes` maps each parameter to its shape."""
    rules = []
    parts = [p.strip() for p in spec.split(",") if p.strip()]
    for part in parts:
        pattern, eq, kind = part.rpartition("=")
        if not eq and len(parts) > 1:
            raise ValueError("placement '%s' in '%s' has no PATTERN= (only a spec of one "
                             "kind for every parameter may omit it)" % (part, spec))
        kind, *options = kind.strip().split("/")
        rules.append((pattern.strip() or "*", kind, options))
    hybrid = any(k.startswith("hsdp") for _, k, _ in rules)
    out = {}
    for name, shape in shapes.items():
        rule = next((r for r in rules if fnmatch.fnmatchcase(name, r[0])), None)
        if rule is None:
            raise ValueError("no placement for parameter '%s' in '%s'" % (name, spec))
        _, kind, options = rule
        placement = preset(kind, world)
        if not shape and placement.sharded:
            placement = preset("ddp", world)
            if hybrid:
                placement = dataclasses.replace(placement, mesh=Mesh((world // 2, 2)))
        elif hybrid and not kind.startswith("hsdp"):
            placement = dataclasses.replace(placement, mesh=Mesh((world // 2, 2)))
        out[name] = _with_options(placement, options, spec)
    return out
