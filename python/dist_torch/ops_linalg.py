"""Contractions and reductions.

Contractions (mm, bmm) are linalg.generic ops in the form the lowering
sends to BLAS (docs/Design.md, "Compute"): one M, N, K loop (and a batch
loop), each operand read through a permutation, body acc + a * b; a
pending transpose of an operand is folded into its indexing map.
Reductions accumulate in the result type, or in f32 for bf16 and f16 as
PyTorch's CPU kernels do.
"""

import math

from .mlir import Tensor, is_float
from .ops import arith, dims_list, elementwise, register


def _contract(ctx, a, b, batch):
    shape, elem = ctx.result()
    init = ctx.builder.splat(0, shape, elem)

    def body(bb, v):
        x, y = bb.convert(v[0], a.elem, elem), bb.convert(v[1], b.elem, elem)
        return arith(bb, "add", v[2], arith(bb, "mul", x, y, elem), elem)
    if batch:  # loops (b, m, n, k)
        ins = [(a, ["d0", "d1", "d3"]), (b, ["d0", "d3", "d2"])]
        loops = ["parallel", "parallel", "parallel", "reduction"]
        out = ["d0", "d1", "d2"]
    else:  # loops (m, n, k)
        ins = [(a, ["d0", "d2"]), (b, ["d2", "d1"])]
        loops = ["parallel", "parallel", "reduction"]
        out = ["d0", "d1"]
    return ctx.builder.generic(shape, elem, ins, body, loops, out, init, hint="mm")


@register("aten.mm.default")
def _mm(ctx, a, b):
    return _contract(ctx, a, b, batch=False)


@register("aten.bmm.default")
def _bmm(ctx, a, b):
    return _contract(ctx, a, b, batch=True)


@register("aten.baddbmm.default")
def _baddbmm(ctx, c, a, b, beta=1, alpha=1):
    """beta * c + alpha * (a @ b), c broadcast; c is ignored for beta = 0,
    as ATen ignores it (NaN in c does not propagate)."""
    product = _contract(ctx, a, b, batch=True)
    _, elem = ctx.result()

    def fn(body, v):
        p = v[1] if alpha == 1 else arith(body, "mul", v[1], body.const(alpha, elem), elem)
        if beta == 0:
            return p
        q = v[0] if beta == 1 else arith(body, "mul", v[0], body.const(beta, elem), elem)
        return arith(body, "add", q, p, elem)
    return elementwise(ctx, [c, product], elem, elem, fn, out_shape=product.shape)


def _accumulator(elem):
    return "f32" if elem in ("bf16", "f16") else elem


def _reduce(ctx, x, dims, kind, acc_elem, keepdim):
    """Reduces the logical dims `dims` of x: result without them (or with
    unit dims where keepdim), element type acc_elem."""
    rank = len(x.shape)
    kept = [d for d in range(rank) if d not in dims]
    out_shape = [x.shape[d] for d in kept]
    if kind == "sum":
        start = 0
    elif is_float(acc_elem):
        start = float("-inf") if kind == "max" else float("inf")
    else:
        bits = 1 if acc_elem == "i1" else int(acc_elem[1:])
        start = -(2 ** (bits - 1)) if kind == "max" else 2 ** (bits - 1) - 1
    init = ctx.builder.splat(start, out_shape, acc_elem)

    def body(b, v):
        op = {"sum": "add", "max": "max", "min": "min"}[kind]
        return arith(b, op, v[1], b.convert(v[0], x.elem, acc_elem), acc_elem)
    loops = ["reduction" if d in dims else "parallel" for d in range(rank)]
    out = ctx.builder.generic(out_shape, acc_elem, [(x, ["d%d" % d for d in range(rank)])],
                              body, loops, ["d%d" % d for d in kept], init, hint="red")
    if keepdim:
        out = ctx.builder.reshape(out, [1 if d in dims else x.shape[d] for d in range(rank)])
    return out


def _convert(ctx, t, elem):
    if t.elem == elem:
        return t
    ids = ["d%d" % i for i in range(len(t.shape))]
    return ctx.builder.generic(t.shape, elem, [(t, ids)],
                               lambda b, v: b.convert(v[0], t.elem, elem))


def _scale(ctx, t, factor):
    ids = ["d%d" % i for i in range(len(t.shape))]
    return ctx.builder.generic(t.shape, t.elem, [(t, ids)],
                               lambda b, v: arith(b, "div", v[0], b.const(factor, t.elem), t.elem))


@register("aten.sum.dim_IntList", "aten.sum.default", "prims.sum.default")
def _sum(ctx, x, dims=None, keepdim=False, dtype=None, **_):
    _, elem = ctx.result()
    dims = dims_list(ctx, dims, len(x.shape))
    acc = _accumulator(elem)
    return _convert(ctx, _reduce(ctx, x, dims, "sum", acc, keepdim), elem)


@register("aten.mean.dim", "aten.mean.default")
def _mean(ctx, x, dims=None, keepdim=False, dtype=None, **_):
    _, elem = ctx.result()
    dims = dims_list(ctx, dims, len(x.shape))
    acc = _accumulator(elem)
    total = _reduce(ctx, x, dims, "sum", acc, keepdim)
    count = math.prod(x.shape[d] for d in dims)
    return _convert(ctx, _scale(ctx, total, count), elem)


def _extremum(kind):
    def handler(ctx, x, dims=None, keepdim=False):
        _, elem = ctx.result()
        return _reduce(ctx, x, dims_list(ctx, dims, len(x.shape)), kind, elem, keepdim)
    return handler


register("aten.amax.default", "prims.amax.default")(_extremum("max"))
register("aten.amin.default", "prims.amin.default")(_extremum("min"))


@register("prims.var.default", "aten.var.correction")
def _var(ctx, x, dims=None, correction=None, keepdim=False, **kwargs):
    """sum((x - mean)^2) / (N - correction), two passes."""
    _, elem = ctx.result()
    return _var_mean(ctx, x, elem, dims, correction, keepdim, **kwargs)[0]


@register("aten.var_mean.correction")
def _var_mean_op(ctx, x, dims=None, correction=None, keepdim=False, **kwargs):
    return _var_mean(ctx, x, x.elem, dims, correction, keepdim, **kwargs)


def _var_mean(ctx, x, elem, dims, correction, keepdim, **kwargs):
    """(variance, mean) over dims: the mean first, then the squared
    deviations, as two passes (ATen uses Welford's; both are within a few
    roundoffs of the exact value)."""
    if correction is None:
        correction = kwargs.get("correction", 1)
    rank = len(x.shape)
    dims = dims_list(ctx, dims, rank)
    acc = _accumulator(elem)
    count = math.prod(x.shape[d] for d in dims)
    mean = _scale(ctx, _reduce(ctx, x, dims, "sum", acc, True), count)
    mean_exprs = [None if d in dims else "d%d" % d for d in range(rank)]

    def squared(b, v):
        d = arith(b, "sub", b.convert(v[0], x.elem, acc), v[1], acc)
        return arith(b, "mul", d, d, acc)
    dev = ctx.builder.generic(x.shape, acc, [(x, ["d%d" % d for d in range(rank)]),
                                             (mean, mean_exprs)], squared)
    var = _scale(ctx, _reduce(ctx, dev, dims, "sum", acc, keepdim), max(count - correction, 0))
    if not keepdim:
        mean = ctx.builder.reshape(mean, [x.shape[d] for d in range(rank) if d not in dims])
    return _convert(ctx, var, elem), _convert(ctx, mean, elem)


@register("aten.linalg_vector_norm.default")
def _vector_norm(ctx, x, ord=2, dims=None, keepdim=False, dtype=None):
    """(sum |x|^ord)^(1/ord) over dims (ord 2: sqrt of the sum of squares;
    inf: the largest |x|), accumulated as the sums above."""
    _, elem = ctx.result()
    dims = dims_list(ctx, dims, len(x.shape))
    acc = _accumulator(elem)
    rank = len(x.shape)
    ids = ["d%d" % d for d in range(rank)]
    if ord in (float("inf"), float("-inf")):
        mags = ctx.builder.generic(x.shape, acc, [(x, ids)],
                                   lambda b, v: b.op("math.absf %s : %s" % (
                                       b.convert(v[0], x.elem, acc), acc)))
        kind = "max" if ord > 0 else "min"
        return _convert(ctx, _reduce(ctx, mags, dims, kind, acc, keepdim), elem)
    if ord <= 0:
        raise ctx.error("vector norms of order %r are not supported" % ord)

    def power(b, v):
        m = b.op("math.absf %s : %s" % (b.convert(v[0], x.elem, acc), acc))
        if ord == 2:
            return arith(b, "mul", m, m, acc)
        if ord == 1:
            return m
        return b.op("math.powf %s, %s : %s" % (m, b.const(float(ord), acc), acc))
    total = _reduce(ctx, ctx.builder.generic(x.shape, acc, [(x, ids)], power),
                    dims, "sum", acc, keepdim)
    out_ids = ["d%d" % d for d in range(len(total.shape))]

    def root(b, v):
        if ord == 2:
            return b.op("math.sqrt %s : %s" % (v[0], acc))
        if ord == 1:
            return v[0]
        return b.op("math.powf %s, %s : %s" % (v[0], b.const(1.0 / ord, acc), acc))
    return _convert(ctx, ctx.builder.generic(total.shape, acc, [(total, out_ids)], root), elem)
