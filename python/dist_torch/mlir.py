"""The MLIR text the emitter writes: types, constants, values and linalg.

A `Tensor` is an SSA value of the function with the logical shape PyTorch
gave it. A permutation may be pending (`perm`): the logical tensor is the
stored one with its dims permuted, which a linalg op folds into its
indexing maps instead of copying (PyTorch's graphs transpose every weight
twice between forward and backward).
"""

import dataclasses
import math
import struct
from typing import Callable, List, Optional, Sequence, Tuple

import torch

_DTYPES = {
    torch.float32: "f32", torch.float64: "f64", torch.float16: "f16",
    torch.bfloat16: "bf16", torch.int64: "i64", torch.int32: "i32",
    torch.int16: "i16", torch.int8: "i8", torch.bool: "i1",
}
_WIDTH = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}


class EmitError(Exception):
    """A graph the emitter cannot write; the message names the op."""


def element_type(dtype: torch.dtype) -> str:
    if dtype not in _DTYPES:
        raise EmitError("element type %s is not supported (dist takes %s)"
                        % (dtype, ", ".join(str(d) for d in _DTYPES)))
    return _DTYPES[dtype]


def is_float(elem: str) -> bool:
    return elem in _WIDTH


def tensor_type(shape: Sequence[int], elem: str) -> str:
    return "tensor<%s%s>" % ("".join("%dx" % d for d in shape), elem)


def float_literal(value: float, elem: str) -> str:
    """`value` rounded to `elem` as PyTorch rounds a Python scalar."""
    if elem == "f64":
        if math.isfinite(value):
            return repr(float(value))
        return "0x%016X" % struct.unpack("<Q", struct.pack("<d", value))[0]
    rounded = torch.tensor(value, dtype=torch.float64).to(
        {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[elem]).item()
    if math.isfinite(rounded):
        return repr(float(rounded))
    bits = {"f32": ("<f", "<I", "0x%08X"), "f16": ("<e", "<H", "0x%04X")}
    if elem == "bf16":
        word = struct.unpack("<I", struct.pack("<f", rounded))[0] >> 16
        return "0x%04X" % word
    pack, unpack, fmt = bits[elem]
    return fmt % struct.unpack(unpack, struct.pack(pack, rounded))[0]


def scalar_literal(value, elem: str) -> str:
    if elem == "i1":
        return "true" if value else "false"
    if is_float(elem):
        return float_literal(float(value), elem)
    if isinstance(value, float) and not value.is_integer():
        raise EmitError("the scalar %r is not an integer of type %s" % (value, elem))
    return str(int(value))


def constant_attr(value, elem: str) -> str:
    """The typed attribute of an arith.constant (a bool carries its type)."""
    if elem == "i1":
        return scalar_literal(value, elem)
    return "%s : %s" % (scalar_literal(value, elem), elem)


def affine_map(num_dims: int, exprs: Sequence[str]) -> str:
    dims = ", ".join("d%d" % i for i in range(num_dims))
    return "affine_map<(%s) -> (%s)>" % (dims, ", ".join(exprs))


@dataclasses.dataclass(frozen=True)
class Tensor:
    ssa: str
    shape: Tuple[int, ...]  # logical
    elem: str
    perm: Optional[Tuple[int, ...]] = None  # logical dim i = stored dim perm[i]

    @property
    def stored_shape(self) -> Tuple[int, ...]:
        if self.perm is None:
            return self.shape
        stored = [0] * len(self.shape)
        for i, j in enumerate(self.perm):
            stored[j] = self.shape[i]
        return tuple(stored)

    @property
    def type(self) -> str:
        return tensor_type(self.stored_shape, self.elem)

    def stored_dim(self, logical: int) -> int:
        return logical if self.perm is None else self.perm[logical]


class Body:
    """The scalar body of a linalg.generic."""

    def __init__(self, builder: "Builder"):
        self.builder = builder
        self.lines: List[str] = []

    def op(self, text: str, result: bool = True) -> str:
        if not result:
            self.lines.append(text)
            return ""
        name = self.builder.fresh("s")
        self.lines.append("%s = %s" % (name, text))
        return name

    def const(self, value, elem: str) -> str:
        return self.op("arith.constant %s" % constant_attr(value, elem))

    def index(self, dim: int) -> str:
        return self.op("linalg.index %d : index" % dim)

    def convert(self, value: str, src: str, dst: str) -> str:
        if src == dst:
            return value
        if is_float(src) and is_float(dst):
            if src in ("bf16", "f16") and dst in ("bf16", "f16"):
                value = self.convert(value, src, "f32")
                src = "f32"
            op = "arith.extf" if _WIDTH[dst] > _WIDTH[src] else "arith.truncf"
            return self.op("%s %s : %s to %s" % (op, value, src, dst))
        if src == "i1" and is_float(dst):
            return self.op("arith.uitofp %s : i1 to %s" % (value, dst))
        if is_float(dst):
            return self.op("arith.sitofp %s : %s to %s" % (value, src, dst))
        if dst == "i1":
            zero = self.const(0, src)
            pred = "une" if is_float(src) else "ne"
            cmp = "arith.cmpf" if is_float(src) else "arith.cmpi"
            return self.op("%s %s, %s, %s : %s" % (cmp, pred, value, zero, src))
        if is_float(src):
            return self.op("arith.fptosi %s : %s to %s" % (value, src, dst))
        width = lambda e: int(e[1:])  # noqa: E731
        if src == "i1":
            return self.op("arith.extui %s : i1 to %s" % (value, dst))
        op = "arith.extsi" if width(dst) > width(src) else "arith.trunci"
        return self.op("%s %s : %s to %s" % (op, value, src, dst))


class Builder:
    """Lines of one function body, with fresh SSA names and locations."""

    def __init__(self):
        self.lines: List[str] = []
        self._count = 0
        self.loc = "loc(unknown)"

    def fresh(self, hint: str = "v") -> str:
        self._count += 1
        return "%%%s%d" % (hint, self._count)

    def op(self, text: str, hint: str = "v", results: int = 1) -> str:
        if results == 0:
            self.lines.append("  %s %s" % (text, self.loc))
            return ""
        name = self.fresh(hint)
        self.lines.append("  %s = %s %s" % (name, text, self.loc))
        return name

    # -- tensors -----------------------------------------------------------

    def empty(self, shape: Sequence[int], elem: str) -> str:
        return self.op("tensor.empty() : %s" % tensor_type(shape, elem), "e")

    def splat(self, value, shape: Sequence[int], elem: str) -> Tensor:
        """A tensor of `value` (linalg.fill of tensor.empty)."""
        scalar = self.op("arith.constant %s" % constant_attr(value, elem), "c")
        out = self.empty(shape, elem)
        ty = tensor_type(shape, elem)
        ssa = self.op("linalg.fill ins(%s : %s) outs(%s : %s) -> %s"
                      % (scalar, elem, out, ty, ty), "fill")
        return Tensor(ssa, tuple(shape), elem)

    def materialize(self, t: Tensor) -> Tensor:
        """`t` with its pending permutation applied (linalg.transpose)."""
        if t.perm is None or t.perm == tuple(range(len(t.shape))):
            return Tensor(t.ssa, t.shape, t.elem)
        out = self.empty(t.shape, t.elem)
        ssa = self.op("linalg.transpose ins(%s : %s) outs(%s : %s) permutation = [%s]"
                      % (t.ssa, t.type, out, tensor_type(t.shape, t.elem),
                         ", ".join(str(p) for p in t.perm)), "tr")
        return Tensor(ssa, t.shape, t.elem)

    def collapse_unit_dims(self, t: Tensor, drop: Sequence[int]) -> Tensor:
        """Removes the stored unit dims `drop` of `t` (no pending perm left
        on the dropped dims: the result is indexed through stored dims)."""
        stored = t.stored_shape
        if not drop:
            return t
        assert all(stored[d] == 1 for d in drop)
        kept = [d for d in range(len(stored)) if d not in drop]
        groups: List[List[int]] = []
        pending: List[int] = []
        for d in range(len(stored)):
            pending.append(d)
            if d in kept:
                groups.append(pending)
                pending = []
        if pending:
            if groups:
                groups[-1].extend(pending)
        new_shape = [stored[d] for d in kept]
        reassoc = "[%s]" % ", ".join("[%s]" % ", ".join(str(d) for d in g) for g in groups)
        ssa = self.op("tensor.collapse_shape %s %s : %s into %s"
                      % (t.ssa, reassoc, t.type, tensor_type(new_shape, t.elem)), "cs")
        return Tensor(ssa, tuple(new_shape), t.elem)

    def generic(self, out_shape: Sequence[int], out_elem: str,
                inputs: Sequence[Tuple[Tensor, Sequence[Optional[str]]]],
                body: Callable[[Body, List[str]], str],
                loops: Optional[Sequence[str]] = None,
                out_exprs: Optional[Sequence[str]] = None,
                init: Optional[Tensor] = None, hint: str = "g") -> Tensor:
        """One linalg.generic.

        `inputs`: each tensor with one affine expression per logical dim
        (None: a unit dim the loops broadcast). `loops`: iterator types
        (default: all parallel over `out_shape`). `out_exprs`: the output's
        map (default: the first len(out_shape) loops). `init`: the output's
        initial value (a reduction's), else tensor.empty.
        """
        loops = list(loops) if loops is not None else ["parallel"] * len(out_shape)
        n = len(loops)
        out_exprs = list(out_exprs) if out_exprs is not None else \
            ["d%d" % i for i in range(len(out_shape))]
        maps, operands, types, elems = [], [], [], []
        for t, exprs in inputs:
            assert len(exprs) == len(t.shape), (exprs, t.shape)
            stored_exprs: List[Optional[str]] = [None] * len(t.shape)
            for logical, e in enumerate(exprs):
                stored_exprs[t.stored_dim(logical)] = e
            drop = [d for d, e in enumerate(stored_exprs) if e is None]
            source = self.collapse_unit_dims(t, drop)
            kept = [e for e in stored_exprs if e is not None]
            maps.append(affine_map(n, kept))
            operands.append(source.ssa)
            types.append(source.type)
            elems.append(t.elem)
        out_type = tensor_type(out_shape, out_elem)
        out = init.ssa if init is not None else self.empty(out_shape, out_elem)
        maps.append(affine_map(n, out_exprs))
        b = Body(self)
        args = [self.fresh("a") for _ in inputs]
        acc = self.fresh("acc")
        result = body(b, args + [acc])
        header = "linalg.generic {indexing_maps = [%s], iterator_types = [%s]}" % (
            ", ".join(maps), ", ".join('"%s"' % l for l in loops))
        ins = " ins(%s : %s)" % (", ".join(operands), ", ".join(types)) if inputs else ""
        text = "%s%s outs(%s : %s) {\n  ^bb0(%s):\n%s    linalg.yield %s : %s\n  } -> %s" % (
            header, ins, out, out_type,
            ", ".join("%s: %s" % (a, e) for a, e in zip(args + [acc], elems + [out_elem])),
            "".join("    %s\n" % l for l in b.lines), result, out_elem, out_type)
        return Tensor(self.op(text, hint), tuple(out_shape), out_elem)

    def for_loop(self, count: int, init: Tensor,
                 body: Callable[[str, str], str], hint: str = "loop") -> Tensor:
        """scf.for over [0, count) carrying a tensor of init's type: body(iv,
        acc) writes the body's ops (through this builder) and returns the
        next value of the tensor."""
        init = self.materialize(init)
        c0 = self.op("arith.constant 0 : index", "c")
        c1 = self.op("arith.constant 1 : index", "c")
        cn = self.op("arith.constant %d : index" % count, "c")
        iv, acc = self.fresh("i"), self.fresh("acc")
        outer, self.lines = self.lines, []
        try:
            new = body(iv, acc)
            inner = self.lines
        finally:
            self.lines = outer
        text = ("scf.for %s = %s to %s step %s iter_args(%s = %s) -> (%s) {\n%s\n"
                "    scf.yield %s : %s\n  }") % (iv, c0, cn, c1, acc, init.ssa, init.type,
                                               "\n".join("  " + l for l in inner), new,
                                               init.type)
        return Tensor(self.op(text, hint), init.shape, init.elem)

    def scalar_ops(self, fn: Callable[["Body"], str]) -> str:
        """Scalar ops written with a Body, placed here as ordinary lines."""
        body = Body(self)
        result = fn(body)
        self.lines.extend("  %s %s" % (l, self.loc) for l in body.lines)
        return result

    # -- shapes ------------------------------------------------------------

    def reshape(self, t: Tensor, shape: Sequence[int]) -> Tensor:
        """Row-major reshape (view, reshape, unsqueeze, squeeze)."""
        t = self.materialize(t)
        shape = tuple(shape)
        if shape == t.shape:
            return t
        groups = _reassociation(t.shape, shape)
        if groups is not None and len(shape) < len(t.shape):
            return self._collapse(t, shape, groups)
        if groups is not None and len(shape) > len(t.shape):
            return self._expand(t, shape, groups)
        numel = math.prod(t.shape)
        flat = self._collapse(t, (numel,), [list(range(len(t.shape)))]) \
            if len(t.shape) != 1 else t
        if shape == (numel,):
            return flat
        return self._expand(flat, shape, [list(range(len(shape)))] if shape else [])

    def _collapse(self, t: Tensor, shape, groups) -> Tensor:
        reassoc = "[%s]" % ", ".join("[%s]" % ", ".join(map(str, g)) for g in groups)
        ssa = self.op("tensor.collapse_shape %s %s : %s into %s"
                      % (t.ssa, reassoc, t.type, tensor_type(shape, t.elem)), "cs")
        return Tensor(ssa, tuple(shape), t.elem)

    def _expand(self, t: Tensor, shape, groups) -> Tensor:
        reassoc = "[%s]" % ", ".join("[%s]" % ", ".join(map(str, g)) for g in groups)
        ssa = self.op("tensor.expand_shape %s %s output_shape [%s] : %s into %s"
                      % (t.ssa, reassoc, ", ".join(map(str, shape)), t.type,
                         tensor_type(shape, t.elem)), "es")
        return Tensor(ssa, tuple(shape), t.elem)


def _reassociation(src: Sequence[int], dst: Sequence[int]):
    """Groups of the longer shape's dims whose products are the shorter
    shape's dims, in order; None when there are none (or equal ranks)."""
    if len(src) == len(dst):
        return None
    long, short = (src, dst) if len(src) > len(dst) else (dst, src)
    if not short:
        return [] if all(d == 1 for d in long) else None
    groups, i = [], 0
    for j, target in enumerate(short):
        group, prod = [], 1
        while i < len(long):
            group.append(i)
            prod *= long[i]
            i += 1
            if prod == target and (j == len(short) - 1 or i == len(long) or
                                   long[i] != 1 or short[j + 1] == 1):
                break
        if prod != target:
            return None
        groups.append(group)
    while i < len(long):  # trailing unit dims join the last group
        if long[i] != 1:
            return None
        groups[-1].append(i)
        i += 1
    return groups
