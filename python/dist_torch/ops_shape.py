"""Views and layout: reshape as tensor.collapse_shape / expand_shape,
permutations kept pending (ops fold them into their indexing maps), slices
as tensor.extract_slice, concatenation and slice_scatter as
tensor.insert_slice, expand as a broadcasting linalg.generic."""

import math

from .mlir import Tensor, tensor_type
from .ops import normalize_dim, register


@register("aten.view.default", "aten._unsafe_view.default", "aten.reshape.default",
          "prims.reshape.default", "aten._reshape_alias.default")
def _view(ctx, x, shape, *_):
    shape = list(shape)
    if -1 in shape:
        known = math.prod(d for d in shape if d != -1)
        shape[shape.index(-1)] = math.prod(x.shape) // known if known else 0
    if math.prod(shape) != math.prod(x.shape):
        raise ctx.error("cannot view %s as %s" % (list(x.shape), shape))
    return ctx.builder.reshape(x, shape)


@register("aten.unsqueeze.default")
def _unsqueeze(ctx, x, dim):
    dim = normalize_dim(ctx, dim, len(x.shape) + 1)
    shape = list(x.shape)
    shape.insert(dim, 1)
    return ctx.builder.reshape(x, shape)


@register("aten.squeeze.dim", "aten.squeeze.default", "aten.squeeze.dims",
          "prims.squeeze.default")
def _squeeze(ctx, x, dims=None):
    rank = len(x.shape)
    if dims is None:
        dims = [d for d in range(rank) if x.shape[d] == 1]
    elif isinstance(dims, int):
        dims = [dims]
    dims = {normalize_dim(ctx, d, rank) for d in dims}
    shape = [d for i, d in enumerate(x.shape) if not (i in dims and d == 1)]
    return ctx.builder.reshape(x, shape)


@register("aten.permute.default", "prims.transpose.default")
def _permute(ctx, x, dims):
    rank = len(x.shape)
    dims = [normalize_dim(ctx, d, rank) for d in dims]
    base = x.perm if x.perm is not None else tuple(range(rank))
    perm = tuple(base[d] for d in dims)
    shape = tuple(x.shape[d] for d in dims)
    return Tensor(x.ssa, shape, x.elem, None if perm == tuple(range(rank)) else perm)


@register("aten.t.default")
def _t(ctx, x):
    return _permute(ctx, x, list(reversed(range(len(x.shape)))))


@register("aten.transpose.int")
def _transpose(ctx, x, a, b):
    dims = list(range(len(x.shape)))
    a, b = normalize_dim(ctx, a, len(dims)), normalize_dim(ctx, b, len(dims))
    dims[a], dims[b] = dims[b], dims[a]
    return _permute(ctx, x, dims)


def _broadcast_to(ctx, x, shape, kept):
    """x read in loops over `shape`, its dim i on loop kept[i] (unit dims of
    x against larger extents are broadcast)."""
    shape = tuple(shape)
    if shape == x.shape and kept == list(range(len(shape))):
        return x
    exprs = []
    for i, d in enumerate(x.shape):
        if d == shape[kept[i]]:
            exprs.append("d%d" % kept[i])
        elif d == 1:
            exprs.append(None)
        else:
            raise ctx.error("cannot expand %s to %s" % (list(x.shape), list(shape)))
    return ctx.builder.generic(shape, x.elem, [(x, exprs)], lambda b, v: v[0], hint="bc")


@register("aten.expand.default")
def _expand(ctx, x, sizes, implicit=False):
    offset = len(sizes) - len(x.shape)
    shape = [x.shape[i - offset] if s == -1 else s for i, s in enumerate(sizes)]
    return _broadcast_to(ctx, x, shape, list(range(offset, len(sizes))))


@register("prims.broadcast_in_dim.default")
def _broadcast_in_dim(ctx, x, shape, dims):
    return _broadcast_to(ctx, x, shape, list(dims))


def _slice_bounds(ctx, size, start, end, step):
    start = 0 if start is None else start
    end = size if end is None else end
    if step is None:
        step = 1
    if step <= 0:
        raise ctx.error("slice step must be positive")
    if start < 0:
        start += size
    if end < 0:
        end += size
    start = min(max(start, 0), size)
    end = min(max(end, start), size)
    return start, (end - start + step - 1) // step, step


def _extract(ctx, x, offsets, sizes, strides, result_shape, drop=None):
    """tensor.extract_slice on x's stored dims, logical args given."""
    rank = len(x.shape)
    so, ss, st = [0] * rank, [0] * rank, [1] * rank
    for i in range(rank):
        j = x.stored_dim(i)
        so[j], ss[j], st[j] = offsets[i], sizes[i], strides[i]
    stored_result = [ss[j] for j in range(rank)]
    perm = x.perm
    if drop is not None:
        j = x.stored_dim(drop)
        stored_result.pop(j)
        if perm is not None:
            perm = tuple(p - (p > j) for i, p in enumerate(perm) if i != drop)
    ssa = ctx.builder.op("tensor.extract_slice %s[%s] [%s] [%s] : %s to %s" % (
        x.ssa, ", ".join(map(str, so)), ", ".join(map(str, ss)), ", ".join(map(str, st)),
        x.type, tensor_type(stored_result, x.elem)), "sl")
    return Tensor(ssa, tuple(result_shape), x.elem, perm)


@register("aten.slice.Tensor")
def _slice(ctx, x, dim=0, start=None, end=None, step=1):
    rank = len(x.shape)
    dim = normalize_dim(ctx, dim, rank)
    start, length, step = _slice_bounds(ctx, x.shape[dim], start, end, step)
    if start == 0 and length == x.shape[dim] and step == 1:
        return x
    offsets, sizes, strides = [0] * rank, list(x.shape), [1] * rank
    offsets[dim], sizes[dim], strides[dim] = start, length, step
    return _extract(ctx, x, offsets, sizes, strides, sizes)


@register("aten.select.int")
def _select(ctx, x, dim, index):
    rank = len(x.shape)
    dim = normalize_dim(ctx, dim, rank)
    if index < 0:
        index += x.shape[dim]
    offsets, sizes = [0] * rank, list(x.shape)
    offsets[dim], sizes[dim] = index, 1
    shape = [d for i, d in enumerate(x.shape) if i != dim]
    return _extract(ctx, x, offsets, sizes, [1] * rank, shape, drop=dim)


@register("aten.split.Tensor", "aten.split_with_sizes.default")
def _split(ctx, x, split, dim=0):
    dim = normalize_dim(ctx, dim, len(x.shape))
    size = x.shape[dim]
    sizes = [split] * (size // split) + ([size % split] if size % split else []) \
        if isinstance(split, int) else list(split)
    out, start = [], 0
    for s in sizes:
        out.append(_slice(ctx, x, dim, start, start + s, 1))
        start += s
    return tuple(out)


@register("aten.unbind.int")
def _unbind(ctx, x, dim=0):
    dim = normalize_dim(ctx, dim, len(x.shape))
    return tuple(_select(ctx, x, dim, i) for i in range(x.shape[dim]))


def _insert(ctx, src, dest, offsets, strides):
    src = ctx.builder.materialize(src)
    ssa = ctx.builder.op("tensor.insert_slice %s into %s[%s] [%s] [%s] : %s into %s" % (
        src.ssa, dest.ssa, ", ".join(map(str, offsets)), ", ".join(map(str, src.shape)),
        ", ".join(map(str, strides)), src.type, dest.type), "ins")
    return Tensor(ssa, dest.shape, dest.elem)


@register("aten.cat.default")
def _cat(ctx, tensors, dim=0):
    tensors = [t for t in tensors if not (len(t.shape) == 1 and t.shape[0] == 0)]
    shape, elem = ctx.result()
    dim = normalize_dim(ctx, dim, len(shape))
    out = Tensor(ctx.builder.empty(shape, elem), tuple(shape), elem)
    offset = 0
    for t in tensors:
        if t.elem != elem:
            raise ctx.error("cat of mixed element types is not supported")
        offsets = [0] * len(shape)
        offsets[dim] = offset
        out = _insert(ctx, t, out, offsets, [1] * len(shape))
        offset += t.shape[dim]
    return out


@register("aten.slice_scatter.default")
def _slice_scatter(ctx, base, src, dim=0, start=None, end=None, step=1):
    rank = len(base.shape)
    dim = normalize_dim(ctx, dim, rank)
    start, _, step = _slice_bounds(ctx, base.shape[dim], start, end, step)
    offsets, strides = [0] * rank, [1] * rank
    offsets[dim], strides[dim] = start, step
    return _insert(ctx, src, ctx.builder.materialize(base), offsets, strides)


@register("aten.select_scatter.default")
def _select_scatter(ctx, base, src, dim, index):
    rank = len(base.shape)
    dim = normalize_dim(ctx, dim, rank)
    if index < 0:
        index += base.shape[dim]
    shape = list(src.shape)
    shape.insert(dim, 1)
    src = ctx.builder.reshape(src, shape)
    offsets = [0] * rank
    offsets[dim] = index
    return _insert(ctx, src, ctx.builder.materialize(base), offsets, [1] * rank)


@register("aten.stack.default")
def _stack(ctx, tensors, dim=0):
    shape, elem = ctx.result()
    dim = normalize_dim(ctx, dim, len(shape))
    out = Tensor(ctx.builder.empty(shape, elem), tuple(shape), elem)
    for i, t in enumerate(tensors):
        unit = list(t.shape)
        unit.insert(dim, 1)
        offsets = [0] * len(shape)
        offsets[dim] = i
        out = _insert(ctx, ctx.builder.reshape(t, unit), out, offsets, [1] * len(shape))
    return out


@register("aten.repeat.default")
def _repeat(ctx, x, repeats):
    """Tiles: out[.., i, ..] = x[.., i mod n, ..] (new leading dims
    broadcast), the modulo in the indexing map."""
    offset = len(repeats) - len(x.shape)
    if offset < 0:
        raise ctx.error("repeat with fewer repeats than dims")
    shape = [r * (x.shape[i - offset] if i >= offset else 1) for i, r in enumerate(repeats)]
    exprs = []
    for j, n in enumerate(x.shape):
        d, r = "d%d" % (offset + j), repeats[offset + j]
        exprs.append(None if n == 1 and r > 1 else d if r == 1 else "%s mod %d" % (d, n))
    return ctx.builder.generic(shape, x.elem, [(x, exprs)], lambda b, v: v[0], hint="tile")


@register("aten.flip.default")
def _flip(ctx, x, dims):
    """out[.., i, ..] = x[.., n - 1 - i, ..] on the flipped dims."""
    rank = len(x.shape)
    dims = {normalize_dim(ctx, d, rank) for d in dims}
    exprs = ["%d - d%d" % (x.shape[i] - 1, i) if i in dims and x.shape[i] > 1 else "d%d" % i
             for i in range(rank)]
    return ctx.builder.generic(x.shape, x.elem, [(x, exprs)], lambda b, v: v[0], hint="flip")


@register("aten.constant_pad_nd.default")
def _pad(ctx, x, pad, value=0):
    """F.pad's constant mode: pad[2k], pad[2k+1] before and after the k-th
    dim from the last; negative amounts crop (the gradient of a pad)."""
    shape, elem = ctx.result()
    rank = len(x.shape)
    offsets, starts, sizes = [0] * rank, [0] * rank, list(x.shape)
    for k in range(len(pad) // 2):
        d = rank - 1 - k
        before, after = pad[2 * k], pad[2 * k + 1]
        if before < 0:
            starts[d], sizes[d] = -before, sizes[d] + before
        else:
            offsets[d] = before
        if after < 0:
            sizes[d] += after
    if any(s <= 0 for s in sizes):
        return ctx.builder.splat(value, shape, elem)
    if starts != [0] * rank or sizes != list(x.shape):
        x = _extract(ctx, x, starts, sizes, [1] * rank, sizes)
    if tuple(sizes) == tuple(shape):
        return x
    base = ctx.builder.splat(value, shape, elem)
    return _insert(ctx, x, base, offsets, [1] * rank)
