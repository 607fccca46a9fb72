"""The negative log-likelihood loss and its gradient, with ATen's eager
semantics.

PyTorch 1.13's decompositions of nll_loss_forward / nll_loss_backward
gather at the target before masking and mask only a non-negative
ignore_index: with nanoGPT's ignore_index=-1 (or the default -100) and a
target holding it they gather out of bounds and average over every
position. These handlers follow ATen's kernels instead: a position whose
target is ignore_index contributes nothing and its weight is 0; the mean
divides by the sum of the weights (total_weight); any other target must lie
in [0, C) (checked: the job aborts naming the op, as PyTorch raises).
"""

from .mlir import Tensor
from .ops import arith, register
from .ops_index import _extract, assert_none, outside

_NONE, _MEAN, _SUM = 0, 1, 2


def _check_targets(ctx, target: Tensor, classes: int, ignore_index: int):
    def bad(bb, t):
        ignored = bb.op("arith.cmpi eq, %s, %s : i64" % (t, bb.const(ignore_index, "i64")))
        kept = bb.op("arith.xori %s, %s : i1" % (ignored, bb.const(True, "i1")))
        return bb.op("arith.andi %s, %s : i1" % (outside(bb, t, 0, classes), kept))
    assert_none(ctx, target, bad, "target out of range [0, %d) and not ignore_index %d"
                % (classes, ignore_index))


def _class_weight(bb, t: str, ignore_index: int, weight, classes: int, elem: str) -> str:
    """The position's weight: 0 if ignored, else weight[t] (or 1)."""
    ignored = bb.op("arith.cmpi eq, %s, %s : i64" % (t, bb.const(ignore_index, "i64")))
    if weight is None:
        w = bb.const(1.0, elem)
    else:
        w = _extract(bb, weight, [_safe(bb, t, classes)])
    return bb.op("arith.select %s, %s, %s : %s" % (ignored, bb.const(0.0, elem), w, elem))


def _safe(bb, t: str, classes: int) -> str:
    bad = outside(bb, t, 0, classes)
    safe = bb.op("arith.select %s, %s, %s : i64" % (bad, bb.const(0, "i64"), t))
    return bb.op("arith.index_cast %s : i64 to index" % safe)


def _rows(x: Tensor):
    return (x.shape[0], x.shape[1]) if len(x.shape) == 2 else (None, x.shape[0])


@register("aten.nll_loss_forward.default")
def _nll_loss_forward(ctx, x, target, weight, reduction, ignore_index):
    n, classes = _rows(x)
    elem = x.elem
    _check_targets(ctx, target, classes, ignore_index)
    b = ctx.builder
    tids = ["d0"] if n is not None else []

    def per_position(want_loss):
        def body(bb, v):
            t = bb.convert(v[0], target.elem, "i64")
            w = _class_weight(bb, t, ignore_index, weight, classes, elem)
            if not want_loss:
                return w
            ids = ([bb.index(0)] if n is not None else []) + [_safe(bb, t, classes)]
            picked = _extract(bb, x, ids)
            return bb.op("arith.negf %s : %s" % (arith(bb, "mul", picked, w, elem), elem))
        return body
    shape = [n] if n is not None else []
    losses = b.generic(shape, elem, [(target, tids)], per_position(True), hint="nll")
    weights = b.generic(shape, elem, [(target, tids)], per_position(False), hint="nllw")
    if reduction == _NONE:
        return losses, b.splat(0.0, [], elem)

    def total(t):
        rank = len(t.shape)
        init = b.splat(0.0, [], elem)
        return b.generic([], elem, [(t, ["d%d" % d for d in range(rank)])],
                         lambda bb, v: arith(bb, "add", v[1], v[0], elem),
                         ["reduction"] * rank, [], init, hint="sum")
    loss_sum, weight_sum = total(losses), total(weights)
    if reduction == _SUM:
        return loss_sum, weight_sum
    mean = b.generic([], elem, [(loss_sum, []), (weight_sum, [])],
                     lambda bb, v: arith(bb, "div", v[0], v[1], elem), hint="mean")
    return mean, weight_sum


@register("aten.nll_loss_backward.default")
def _nll_loss_backward(ctx, grad, x, target, weight, reduction, ignore_index, total_weight):
    n, classes = _rows(x)
    elem = x.elem
    rank = len(x.shape)
    tids = ["d0"] if n is not None else []
    gids = tids if reduction == _NONE else []

    def body(bb, v):
        t = bb.convert(v[0], target.elem, "i64")
        here = bb.op("arith.index_cast %s : index to i64" % bb.index(rank - 1))
        hit = bb.op("arith.cmpi eq, %s, %s : i64" % (here, t))
        w = _class_weight(bb, t, ignore_index, weight, classes, elem)
        g = v[1]
        if reduction == _MEAN:
            g = arith(bb, "div", g, v[2], elem)
        value = bb.op("arith.negf %s : %s" % (arith(bb, "mul", w, g, elem), elem))
        return bb.op("arith.select %s, %s, %s : %s" % (hit, value, bb.const(0.0, elem), elem))
    inputs = [(target, tids), (grad, gids)]
    if reduction == _MEAN:
        inputs.append((total_weight, []))
    return ctx.builder.generic(x.shape, elem, inputs, body, hint="nllgrad")
