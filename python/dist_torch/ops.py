"""The ATen op table and what its handlers share.

A handler takes the emitter context and the node's arguments (Tensors for
tensor operands, Python values otherwise) and returns a Tensor, or a tuple
of them for a multi-result op. It writes MLIR through `ctx.builder`, raises
`ctx.error(...)` for a form it does not cover, and must produce the shape
and element type PyTorch recorded (the emitter checks each node).
"""

from typing import Callable, Dict, List, Optional, Sequence, Union

import torch

from .mlir import Body, Builder, EmitError, Tensor, is_float

HANDLERS: Dict[str, Callable] = {}


def register(*names: str):
    def wrap(fn):
        for n in names:
            HANDLERS[n] = fn
        return fn
    return wrap


class Context:
    """What a handler may use of the emitter."""

    def __init__(self, builder: Builder):
        self.builder = builder

    def error(self, message: str) -> EmitError:
        return EmitError(message)

    def result(self):
        """(shape, element type) PyTorch recorded for the op's result."""
        raise NotImplementedError


Operand = Union[Tensor, int, float, bool]


def torch_dtype(elem: str) -> torch.dtype:
    return {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16,
            "bf16": torch.bfloat16, "i64": torch.int64, "i32": torch.int32,
            "i16": torch.int16, "i8": torch.int8, "i1": torch.bool}[elem]


def mlir_elem(dtype: torch.dtype) -> str:
    from .mlir import element_type
    return element_type(dtype)


def result_elem(operands: Sequence[Operand]) -> str:
    """PyTorch's type promotion of the operands (torch.result_type), with
    rank-0 tensors taking part as PyTorch's dimensionless operands do."""
    samples = []
    for o in operands:
        if isinstance(o, Tensor):
            samples.append(torch.empty((1,) if o.shape else (),
                                       dtype=torch_dtype(o.elem)))
        else:
            samples.append(o)
    result = samples[0]
    if len(samples) == 1:
        if isinstance(result, torch.Tensor):
            return mlir_elem(result.dtype)
        return mlir_elem(torch.tensor(result).dtype)
    dtype = torch.result_type(samples[0], samples[1])
    for s in samples[2:]:
        dtype = torch.promote_types(dtype, torch.result_type(torch.empty((), dtype=dtype), s)
                                    if not isinstance(s, torch.Tensor) else s.dtype)
    return mlir_elem(dtype)


def broadcast_shape(ctx: Context, shapes: Sequence[Sequence[int]]) -> List[int]:
    rank = max((len(s) for s in shapes), default=0)
    out = [1] * rank
    for s in shapes:
        for i, d in enumerate(s):
            j = rank - len(s) + i
            if d == out[j] or d == 1:
                continue
            if out[j] != 1:
                raise ctx.error("shapes %s do not broadcast" % (list(shapes),))
            out[j] = d
    return out


def broadcast_exprs(shape: Sequence[int], out_shape: Sequence[int]) -> List[Optional[str]]:
    """The affine expressions of an operand of `shape` read in loops over
    `out_shape` (right-aligned; a unit dim against a larger one is None)."""
    offset = len(out_shape) - len(shape)
    exprs = []
    for i, d in enumerate(shape):
        if d == out_shape[offset + i]:
            exprs.append("d%d" % (offset + i))
        else:
            exprs.append(None)
    return exprs


def elementwise(ctx: Context, operands: Sequence[Operand], compute, out_elem: str,
                fn: Callable[[Body, List[str]], str],
                out_shape: Optional[Sequence[int]] = None) -> Tensor:
    """fn over the broadcast operands, each converted to `compute` (a Python
    scalar becomes a constant of it; a list gives each operand's type); fn
    returns a value of `out_elem`."""
    types = list(compute) if isinstance(compute, (list, tuple)) else [compute] * len(operands)
    tensors = [o for o in operands if isinstance(o, Tensor)]
    if out_shape is None:
        out_shape = broadcast_shape(ctx, [t.shape for t in tensors])
    inputs = [(t, broadcast_exprs(t.shape, out_shape)) for t in tensors]

    def body(b: Body, args: List[str]) -> str:
        values, k = [], 0
        for o, want in zip(operands, types):
            if isinstance(o, Tensor):
                values.append(b.convert(args[k], o.elem, want))
                k += 1
            else:
                values.append(b.const(o, want))
        return fn(b, values)
    return ctx.builder.generic(out_shape, out_elem, inputs, body)


def float_op(b: Body, name: str, args: Sequence[str], elem: str) -> str:
    return b.op("%s %s : %s" % (name, ", ".join(args), elem))


def arith(b: Body, kind: str, x: str, y: str, elem: str) -> str:
    """x (kind) y for add, sub, mul, div, max, min in `elem`."""
    if is_float(elem):
        name = {"add": "arith.addf", "sub": "arith.subf", "mul": "arith.mulf",
                "div": "arith.divf", "max": "arith.maximumf",
                "min": "arith.minimumf"}[kind]
    else:
        name = {"add": "arith.addi", "sub": "arith.subi", "mul": "arith.muli",
                "div": "arith.divsi", "max": "arith.maxsi",
                "min": "arith.minsi"}[kind]
    return float_op(b, name, [x, y], elem)


def normalize_dim(ctx: Context, dim: int, rank: int) -> int:
    if rank == 0 and dim in (0, -1):
        return 0
    if not -rank <= dim < rank:
        raise ctx.error("dim %d out of range for rank %d" % (dim, rank))
    return dim % rank


def dims_list(ctx: Context, dims, rank: int) -> List[int]:
    if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
        return list(range(rank))
    if isinstance(dims, int):
        dims = [dims]
    return sorted({normalize_dim(ctx, d, rank) for d in dims})
