"""Indexing: gathers (embedding, gather, index, index_select), scatters
(scatter of one position per row, index_put with accumulation: the
embedding's gradient).

PyTorch raises on an index out of range; a compiled step must not read or
write out of bounds instead. Each op checks its indices (cf.assert: the job
aborts naming the op and the user's line) and clamps them, so that no
reordering of the check can let an access go out of bounds.
"""

from .mlir import Tensor, tensor_type
from .ops import arith, normalize_dim, register


def _origin_text(ctx):
    node = getattr(ctx, "node", None)
    origin = node.meta.get("dist_origin") if node is not None else None
    op = str(node.target) if node is not None else "an index op"
    return "%s at %s" % (op, origin.describe() if origin else "an op PyTorch added")


def assert_none(ctx, t: Tensor, is_bad, message: str):
    """cf.assert that is_bad(body, i64 value) holds for no element of the
    integer tensor t: the job aborts with `message` (and the user's line)."""
    b = ctx.builder
    rank = len(t.shape)
    init = b.splat(False, [], "i1")

    def body(bb, v):
        bad = is_bad(bb, bb.convert(v[0], t.elem, "i64"))
        return bb.op("arith.ori %s, %s : i1" % (v[1], bad))
    any_bad = b.generic([], "i1", [(t, ["d%d" % d for d in range(rank)])], body,
                        ["reduction"] * rank, [], init, hint="oob")
    flag = b.op("tensor.extract %s[] : %s" % (any_bad.ssa, any_bad.type), "oob")
    ok = b.op("arith.xori %s, %s : i1" % (flag, b.op("arith.constant true", "t")), "ok")
    text = "dist_torch: %s in %s" % (message, _origin_text(ctx))
    b.op('cf.assert %s, "%s"' % (ok, text.replace("\\", "/").replace('"', "'")), results=0)


def outside(bb, i: str, lo: int, hi: int) -> str:
    """i < lo or i >= hi, on i64 values."""
    low = bb.op("arith.cmpi slt, %s, %s : i64" % (i, bb.const(lo, "i64")))
    high = bb.op("arith.cmpi sge, %s, %s : i64" % (i, bb.const(hi, "i64")))
    return bb.op("arith.ori %s, %s : i1" % (low, high))


def _check_indices(ctx, idx: Tensor, size: int, wrap: bool):
    """Every index lies in [0, size) ([-size, size) if wrap)."""
    lo = -size if wrap else 0
    assert_none(ctx, idx, lambda bb, i: outside(bb, i, lo, size),
                "index out of range [%d, %d)" % (lo, size))


def _safe_index(bb, value: str, elem: str, size: int, wrap: bool) -> str:
    """`value` as an index in [0, size): wrapped if negative (when allowed),
    0 where out of range (the check above has failed the job then)."""
    i = bb.convert(value, elem, "i64")
    if wrap:
        neg = bb.op("arith.cmpi slt, %s, %s : i64" % (i, bb.const(0, "i64")))
        i = bb.op("arith.select %s, %s, %s : i64" % (
            neg, arith(bb, "add", i, bb.const(size, "i64"), "i64"), i))
    bad = outside(bb, i, 0, size)
    i = bb.op("arith.select %s, %s, %s : i64" % (bad, bb.const(0, "i64"), i))
    return bb.op("arith.index_cast %s : i64 to index" % i)


def _extract(bb, t: Tensor, logical_indices):
    stored = [None] * len(t.shape)
    for i, v in enumerate(logical_indices):
        stored[t.stored_dim(i)] = v
    return bb.op("tensor.extract %s[%s] : %s" % (t.ssa, ", ".join(stored), t.type))


def _gather_rows(ctx, table: Tensor, idx: Tensor, wrap: bool):
    """out[i..., j...] = table[idx[i...], j...]."""
    _check_indices(ctx, idx, table.shape[0], wrap)
    out_shape, elem = ctx.result()
    s, rest = len(idx.shape), len(table.shape) - 1

    def body(bb, v):
        row = _safe_index(bb, v[0], idx.elem, table.shape[0], wrap)
        cols = [bb.index(s + j) for j in range(rest)]
        return _extract(bb, table, [row] + cols)
    return ctx.builder.generic(out_shape, elem, [(idx, ["d%d" % d for d in range(s)])],
                               body, hint="gather")


@register("aten.embedding.default")
def _embedding(ctx, weight, indices, padding_idx=-1, *_):
    return _gather_rows(ctx, weight, indices, wrap=False)


@register("aten.index.Tensor")
def _index(ctx, x, indices):
    if len(indices) != 1 or indices[0] is None or indices[0].elem == "i1":
        raise ctx.error("only indexing of dim 0 by one integer tensor is supported")
    return _gather_rows(ctx, x, indices[0], wrap=True)


@register("aten.index_select.default")
def _index_select(ctx, x, dim, index):
    dim = normalize_dim(ctx, dim, len(x.shape))
    _check_indices(ctx, index, x.shape[dim], wrap=False)
    out_shape, elem = ctx.result()
    rank = len(x.shape)

    def body(bb, v):
        ids = [bb.index(d) for d in range(rank)]
        ids[dim] = _safe_index(bb, v[0], index.elem, x.shape[dim], False)
        return _extract(bb, x, ids)
    return ctx.builder.generic(out_shape, elem, [(index, ["d%d" % dim])], body, hint="gather")


@register("aten.gather.default")
def _gather(ctx, x, dim, index, sparse_grad=False):
    rank = len(x.shape)
    dim = normalize_dim(ctx, dim, rank)
    _check_indices(ctx, index, x.shape[dim], wrap=False)
    out_shape, elem = ctx.result()

    def body(bb, v):
        ids = [bb.index(d) for d in range(rank)]
        ids[dim] = _safe_index(bb, v[0], index.elem, x.shape[dim], False)
        return _extract(bb, x, ids)
    return ctx.builder.generic(out_shape, elem, [(index, ["d%d" % d for d in range(rank)])],
                               body, hint="gather")


def _scatter_one(ctx, x, dim, index, src):
    """out = x with out[i with dim = index[i with dim = 0]] = src, for an
    index of extent 1 along dim covering x elsewhere."""
    rank = len(x.shape)
    dim = normalize_dim(ctx, dim, rank)
    if index.shape[dim] != 1 or any(index.shape[d] != x.shape[d]
                                    for d in range(rank) if d != dim):
        raise ctx.error("scatter is supported for one index per row along dim %d "
                        "(index %s, self %s)" % (dim, list(index.shape), list(x.shape)))
    _check_indices(ctx, index, x.shape[dim], wrap=False)
    elem = x.elem
    ids = ["d%d" % d for d in range(rank)]
    idx_exprs = [None if d == dim else "d%d" % d for d in range(rank)]
    inputs = [(x, ids), (index, idx_exprs)]
    if isinstance(src, Tensor):
        inputs.append((src, idx_exprs))

    def body(bb, v):
        here = bb.op("arith.index_cast %s : index to i64" % bb.index(dim))
        target = bb.convert(v[1], index.elem, "i64")
        hit = bb.op("arith.cmpi eq, %s, %s : i64" % (here, target))
        value = bb.convert(v[2], src.elem, elem) if isinstance(src, Tensor) \
            else bb.const(src, elem)
        return bb.op("arith.select %s, %s, %s : %s" % (hit, value, v[0], elem))
    return ctx.builder.generic(x.shape, elem, inputs, body, hint="scatter")


@register("aten.scatter.value", "aten.scatter.src")
def _scatter(ctx, x, dim, index, src):
    return _scatter_one(ctx, x, dim, index, src)


@register("aten.index_put.default", "aten.index_put_.default",
          "aten._index_put_impl_.default")
def _index_put(ctx, x, indices, values, accumulate=False, *_):
    """x[idx[n]] (+)= values[n] for n in order, as PyTorch's CPU kernel
    accumulates: one scf.for over the index."""
    b = ctx.builder
    if len(indices) != 1 or indices[0] is None or indices[0].elem == "i1":
        raise ctx.error("only index_put on dim 0 with one integer index is supported")
    idx = indices[0]
    rows, rest = x.shape[0], list(x.shape[1:])
    n = 1
    for d in idx.shape:
        n *= d
    if list(values.shape) != list(idx.shape) + rest:
        raise ctx.error("index_put with values of shape %s for index %s into %s "
                        "is not supported" % (list(values.shape), list(idx.shape),
                                              list(x.shape)))
    _check_indices(ctx, idx, rows, wrap=True)
    idx = b.reshape(idx, [n])
    values = b.materialize(b.reshape(values, [n] + rest))
    row_shape = [1] + rest
    zeros = [0] * len(rest)

    def body(iv, acc):
        raw = b.op("tensor.extract %s[%s] : %s" % (idx.ssa, iv, idx.type), "id")
        row = b.scalar_ops(lambda bb: _safe_index(bb, raw, idx.elem, rows, True))
        src = _slice_at(b, values, [iv] + zeros, row_shape)
        current = Tensor(acc, x.shape, x.elem)
        if accumulate:
            cur = _slice_at(b, current, [row] + zeros, row_shape)
            src = _add(b, cur, src)
        return _insert_at(b, src, current, [row] + zeros)
    return b.for_loop(n, x, body, "scatter")


@register("aten.scatter_add.default")
def _scatter_add(ctx, x, dim, index, src):
    """out = x; out[i with dim = index[i]] += src[i] for every position i of
    index in row-major order (ATen's CPU order): one scf.for over them."""
    b = ctx.builder
    rank = len(x.shape)
    dim = normalize_dim(ctx, dim, rank)
    if any(index.shape[d] > src.shape[d] or (d != dim and index.shape[d] > x.shape[d])
           for d in range(rank)):
        raise ctx.error("scatter_add with index %s, src %s, self %s is not supported"
                        % (list(index.shape), list(src.shape), list(x.shape)))
    _check_indices(ctx, index, x.shape[dim], wrap=False)
    n = 1
    for d in index.shape:
        n *= d
    index, src = b.materialize(index), b.materialize(src)

    def body(iv, acc):
        def position(bb):
            flat = bb.op("arith.index_cast %s : index to i64" % iv)
            coords = []
            for d in reversed(range(rank)):
                extent = bb.const(index.shape[d], "i64")
                coords.append(bb.op("arith.index_cast %s : i64 to index"
                                    % bb.op("arith.remsi %s, %s : i64" % (flat, extent))))
                flat = bb.op("arith.divsi %s, %s : i64" % (flat, extent))
            coords.reverse()
            raw = _extract(bb, index, coords)
            target = list(coords)
            target[dim] = _safe_index(bb, raw, index.elem, x.shape[dim], False)
            value = bb.convert(_extract(bb, src, coords), src.elem, x.elem)
            old = bb.op("tensor.extract %s[%s] : %s" % (acc, ", ".join(target),
                                                        tensor_type(x.shape, x.elem)))
            new = arith(bb, "add", old, value, x.elem)
            return bb.op("tensor.insert %s into %s[%s] : %s" % (
                new, acc, ", ".join(target), tensor_type(x.shape, x.elem)))
        return b.scalar_ops(position)
    return b.for_loop(n, x, body, "scatter")


def _slice_at(b, t: Tensor, offsets, shape) -> Tensor:
    """The slice of `t` at `offsets` (SSA values or ints) of `shape`."""
    ssa = b.op("tensor.extract_slice %s[%s] [%s] [%s] : %s to %s" % (
        t.ssa, ", ".join(map(str, offsets)), ", ".join(map(str, shape)),
        ", ".join(["1"] * len(shape)), t.type, tensor_type(shape, t.elem)), "sl")
    return Tensor(ssa, tuple(shape), t.elem)


def _insert_at(b, src: Tensor, dest: Tensor, offsets) -> str:
    return b.op("tensor.insert_slice %s into %s[%s] [%s] [%s] : %s into %s" % (
        src.ssa, dest.ssa, ", ".join(map(str, offsets)), ", ".join(map(str, src.shape)),
        ", ".join(["1"] * len(src.shape)), src.type, dest.type), "put")


def _add(b, x: Tensor, y: Tensor) -> Tensor:
    ids = ["d%d" % d for d in range(len(x.shape))]
    return b.generic(x.shape, x.elem, [(x, ids), (y, ids)],
                     lambda bb, v: arith(bb, "add", v[0], bb.convert(v[1], y.elem, x.elem),
                                         x.elem))


@register("aten.index_add.default")
def _index_add(ctx, x, dim, index, source, alpha=1):
    """out = x; out[.., index[j], ..] += alpha * source[.., j, ..] along dim
    for j in order (index_select's gradient): one scf.for over the index."""
    b = ctx.builder
    rank = len(x.shape)
    dim = normalize_dim(ctx, dim, rank)
    if len(index.shape) != 1:
        raise ctx.error("index_add with a %d-D index is not supported" % len(index.shape))
    _check_indices(ctx, index, x.shape[dim], wrap=False)
    source = b.materialize(source)
    if alpha != 1:
        ids = ["d%d" % d for d in range(rank)]
        source = b.generic(source.shape, source.elem, [(source, ids)],
                           lambda bb, v: arith(bb, "mul", v[0], bb.const(alpha, source.elem),
                                               source.elem))
    unit = list(x.shape)
    unit[dim] = 1

    def body(iv, acc):
        raw = b.op("tensor.extract %s[%s] : %s" % (index.ssa, iv, index.type), "id")
        row = b.scalar_ops(lambda bb: _safe_index(bb, raw, index.elem, x.shape[dim], False))
        at = [0] * rank
        at[dim] = iv
        src = _slice_at(b, source, at, unit)
        current = Tensor(acc, x.shape, x.elem)
        at[dim] = row
        return _insert_at(b, _add(b, _slice_at(b, current, at, unit), src), current, at)
    return b.for_loop(index.shape[0], x, body, "scatter")
