"""Elementwise ATen ops, creation ops and conversions: one linalg.generic
each, operands broadcast as PyTorch broadcasts them, computed in the type
PyTorch computes in (the result type; for comparisons the operands'
promoted type)."""

from .mlir import Body, Tensor, is_float
from .ops import arith, elementwise, float_op, register, result_elem


def _compute(ctx):
    return ctx.result()[1]


# -- arithmetic ---------------------------------------------------------------

def _binary(kind):
    def handler(ctx, a, b, alpha=1):
        elem = _compute(ctx)

        def fn(body: Body, v):
            y = v[1]
            if alpha != 1:
                y = arith(body, "mul", y, body.const(alpha, elem), elem)
            return arith(body, kind, v[0], y, elem)
        return elementwise(ctx, [a, b], elem, elem, fn)
    return handler


register("aten.add.Tensor", "aten.add.Scalar", "prims.add.default")(_binary("add"))
register("aten.sub.Tensor", "aten.sub.Scalar", "prims.sub.default")(_binary("sub"))
register("aten.mul.Tensor", "aten.mul.Scalar", "prims.mul.default")(_binary("mul"))
register("aten.maximum.default", "prims.maximum.default")(_binary("max"))
register("aten.minimum.default", "prims.minimum.default")(_binary("min"))


@register("aten.div.Tensor", "aten.div.Scalar", "prims.div.default")
def _div(ctx, a, b):
    elem = _compute(ctx)
    return elementwise(ctx, [a, b], elem, elem, lambda body, v: arith(body, "div", v[0], v[1], elem))


def _unary(math_op):
    def handler(ctx, x):
        elem = _compute(ctx)
        if not is_float(elem):
            raise ctx.error("expected a floating-point result, got %s" % elem)
        return elementwise(ctx, [x], elem, elem,
                           lambda body, v: float_op(body, math_op, v, elem))
    return handler


for _name, _op in [("exp", "math.exp"), ("log", "math.log"), ("tanh", "math.tanh"),
                   ("erf", "math.erf"), ("rsqrt", "math.rsqrt"), ("sqrt", "math.sqrt"),
                   ("cos", "math.cos"), ("sin", "math.sin"), ("log1p", "math.log1p"),
                   ("expm1", "math.expm1")]:
    register("aten.%s.default" % _name, "prims.%s.default" % _name)(_unary(_op))


@register("aten.neg.default", "prims.neg.default")
def _neg(ctx, x):
    elem = _compute(ctx)
    if is_float(elem):
        return elementwise(ctx, [x], elem, elem, lambda b, v: b.op("arith.negf %s : %s" % (v[0], elem)))
    return elementwise(ctx, [x], elem, elem,
                       lambda b, v: arith(b, "sub", b.const(0, elem), v[0], elem))


@register("aten.abs.default", "prims.abs.default")
def _abs(ctx, x):
    elem = _compute(ctx)
    op = "math.absf" if is_float(elem) else "math.absi"
    return elementwise(ctx, [x], elem, elem, lambda b, v: float_op(b, op, v, elem))


@register("aten.reciprocal.default", "prims.reciprocal.default")
def _reciprocal(ctx, x):
    elem = _compute(ctx)
    return elementwise(ctx, [x], elem, elem,
                       lambda b, v: arith(b, "div", b.const(1.0, elem), v[0], elem))


@register("aten.sigmoid.default")
def _sigmoid(ctx, x):
    elem = _compute(ctx)

    def fn(b, v):  # 1 / (1 + exp(-x)), as ATen's CPU kernel
        e = float_op(b, "math.exp", [b.op("arith.negf %s : %s" % (v[0], elem))], elem)
        return arith(b, "div", b.const(1.0, elem), arith(b, "add", b.const(1.0, elem), e, elem), elem)
    return elementwise(ctx, [x], elem, elem, fn)


@register("aten.relu.default")
def _relu(ctx, x):
    elem = _compute(ctx)
    return elementwise(ctx, [x], elem, elem, lambda b, v: arith(b, "max", v[0], b.const(0, elem), elem))


@register("aten.pow.Tensor_Scalar", "aten.pow.Tensor_Tensor", "aten.pow.Scalar",
          "prims.pow.default")
def _pow(ctx, base, exponent):
    elem = _compute(ctx)
    if not is_float(elem):
        raise ctx.error("integer powers are not supported")
    if not isinstance(exponent, Tensor):
        # ATen's CPU kernel special-cases these exponents; so do we.
        e = float(exponent)
        special = {2.0: lambda b, x: arith(b, "mul", x, x, elem),
                   3.0: lambda b, x: arith(b, "mul", arith(b, "mul", x, x, elem), x, elem),
                   0.5: lambda b, x: float_op(b, "math.sqrt", [x], elem),
                   -0.5: lambda b, x: float_op(b, "math.rsqrt", [x], elem),
                   -1.0: lambda b, x: arith(b, "div", b.const(1.0, elem), x, elem),
                   1.0: lambda b, x: x}
        if e in special:
            return elementwise(ctx, [base], elem, elem, lambda b, v: special[e](b, v[0]))
    return elementwise(ctx, [base, exponent], elem, elem,
                       lambda b, v: float_op(b, "math.powf", v, elem))


@register("aten.clamp.default", "aten.clamp_min.default", "aten.clamp_max.default")
def _clamp(ctx, x, lo=None, hi=None):
    elem = _compute(ctx)
    name = str(ctx.node.target)
    if name.endswith("clamp_max.default"):
        lo, hi = None, lo

    def fn(b, v):
        y = v[0]
        if lo is not None:
            y = arith(b, "max", y, b.const(lo, elem), elem)
        if hi is not None:
            y = arith(b, "min", y, b.const(hi, elem), elem)
        return y
    return elementwise(ctx, [x], elem, elem, fn)


# -- comparisons, selection, logic ------------------------------------------

_FLOAT_PRED = {"eq": "oeq", "ne": "une", "lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge"}
_INT_PRED = {"eq": "eq", "ne": "ne", "lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge"}


def _compare(kind):
    def handler(ctx, a, b):
        compute = result_elem([a, b])
        if compute == "i1":
            compute = "i8"  # ordered comparisons of bools as 0/1

        def fn(body, v):
            if is_float(compute):
                return body.op("arith.cmpf %s, %s, %s : %s" % (_FLOAT_PRED[kind], v[0], v[1], compute))
            return body.op("arith.cmpi %s, %s, %s : %s" % (_INT_PRED[kind], v[0], v[1], compute))
        return elementwise(ctx, [a, b], compute, "i1", fn)
    return handler


for _kind in _FLOAT_PRED:
    register("aten.%s.Tensor" % _kind, "aten.%s.Scalar" % _kind,
             "prims.%s.default" % _kind)(_compare(_kind))


@register("aten.where.self", "prims.where.default")
def _where(ctx, cond, a, b):
    """The condition read as i1, the values in the result type."""
    elem = _compute(ctx)
    return elementwise(ctx, [cond, a, b], ["i1", elem, elem], elem,
                       lambda body, v: body.op("arith.select %s, %s, %s : %s"
                                               % (v[0], v[1], v[2], elem)))


@register("aten.logical_not.default", "aten.bitwise_not.default")
def _not(ctx, x):
    elem = _compute(ctx)
    if elem != "i1":
        if str(ctx.node.target).startswith("aten.bitwise_not"):
            raise ctx.error("bitwise_not of %s is not supported" % elem)
    return elementwise(ctx, [x], "i1", "i1",
                       lambda b, v: b.op("arith.xori %s, %s : i1" % (v[0], b.const(True, "i1"))))


def _logical(op):
    def handler(ctx, a, b):
        return elementwise(ctx, [a, b], "i1", "i1",
                           lambda body, v: body.op("%s %s, %s : i1" % (op, v[0], v[1])))
    return handler


register("aten.logical_and.default", "aten.bitwise_and.Tensor")(_logical("arith.andi"))
register("aten.logical_or.default", "aten.bitwise_or.Tensor")(_logical("arith.ori"))


# -- conversions and identities ---------------------------------------------

@register("aten._to_copy.default", "prims.convert_element_type.default")
def _convert(ctx, x, dtype=None, **_):
    elem = _compute(ctx)
    if not isinstance(x, Tensor):
        raise ctx.error("expected a tensor operand")
    if x.elem == elem:
        return x
    ids = ["d%d" % i for i in range(len(x.shape))]
    return ctx.builder.generic(x.shape, elem, [(x, ids)],
                               lambda b, v: b.convert(v[0], x.elem, elem))


@register("aten.clone.default", "aten.detach.default", "aten.alias.default",
          "aten.lift_fresh_copy.default", "prims.view_of.default",
          "aten.contiguous.default")
def _identity(ctx, x, *_, **__):
    return x


# -- creation -----------------------------------------------------------------

@register("aten.full.default", "aten.full_like.default", "aten.new_full.default",
          "aten.zeros.default", "aten.zeros_like.default", "aten.new_zeros.default",
          "aten.ones.default", "aten.ones_like.default", "aten.new_ones.default",
          "aten.scalar_tensor.default", "aten.empty.memory_format",
          "aten.empty_like.default", "aten.new_empty.default", "aten.fill.Scalar")
def _full(ctx, *args, **_):
    shape, elem = ctx.result()
    name = str(ctx.node.target)
    if "zeros" in name or "empty" in name:
        value = 0
    elif "ones" in name:
        value = 1
    elif name.startswith("aten.scalar_tensor"):
        value = args[0]
    else:
        value = args[-1]  # full(size, v), full_like(x, v), new_full(x, size, v), fill(x, v)
    if isinstance(value, Tensor):
        raise ctx.error("a fill value that is a tensor is not supported")
    return ctx.builder.splat(value, shape, elem)


@register("aten.arange.default", "aten.arange.start", "aten.arange.start_step")
def _arange(ctx, *args, **_):
    shape, elem = ctx.result()
    nums = [a for a in args if isinstance(a, (int, float))]
    start, step = (0, 1)
    if len(nums) >= 2:
        start = nums[0]
    if len(nums) >= 3:
        step = nums[2]

    def fn(b, _v):
        i = b.op("arith.index_cast %s : index to i64" % b.index(0))
        if not is_float(elem):
            v = arith(b, "add", b.const(start, "i64"),
                      arith(b, "mul", i, b.const(step, "i64"), "i64"), "i64")
            return b.convert(v, "i64", elem)
        fi = b.convert(i, "i64", "f64")
        v = arith(b, "add", b.const(float(start), "f64"),
                  arith(b, "mul", fi, b.const(float(step), "f64"), "f64"), "f64")
        return b.convert(v, "f64", elem)
    return ctx.builder.generic(shape, elem, [], fn)


def _triangle(lower):
    def handler(ctx, x, diagonal=0):
        elem = x.elem
        rank = len(x.shape)
        if rank < 2:
            raise ctx.error("expected at least 2 dims")

        def fn(b, v):
            i = b.op("arith.index_cast %s : index to i64" % b.index(rank - 2))
            j = b.op("arith.index_cast %s : index to i64" % b.index(rank - 1))
            d = arith(b, "sub", j, i, "i64")
            keep = b.op("arith.cmpi %s, %s, %s : i64" % ("sle" if lower else "sge", d,
                                                         b.const(diagonal, "i64")))
            return b.op("arith.select %s, %s, %s : %s" % (keep, v[0], b.const(0, elem), elem))
        return ctx.builder.generic(x.shape, elem, [(x, ["d%d" % i for i in range(rank)])], fn)
    return handler


register("aten.tril.default")(_triangle(True))
register("aten.triu.default")(_triangle(False))


@register("aten.sign.default", "aten.sgn.default", "prims.sign.default")
def _sign(ctx, x):
    """(0 < x) - (x < 0), as ATen's kernel: 0 for zeros and NaN."""
    elem = _compute(ctx)

    def fn(b, v):
        zero = b.const(0, elem)
        if is_float(elem):
            pos = b.op("arith.cmpf olt, %s, %s : %s" % (zero, v[0], elem))
            neg = b.op("arith.cmpf olt, %s, %s : %s" % (v[0], zero, elem))
        else:
            pos = b.op("arith.cmpi slt, %s, %s : %s" % (zero, v[0], elem))
            neg = b.op("arith.cmpi slt, %s, %s : %s" % (v[0], zero, elem))
        return arith(b, "sub", b.convert(pos, "i1", elem), b.convert(neg, "i1", elem), elem)
    return elementwise(ctx, [x], elem, elem, fn)


@register("aten.eye.default", "aten.eye.m")
def _eye(ctx, *_, **__):
    shape, elem = ctx.result()

    def fn(b, _v):
        on = b.op("arith.cmpi eq, %s, %s : index" % (b.index(0), b.index(1)))
        return b.op("arith.select %s, %s, %s : %s" % (on, b.const(1, elem), b.const(0, elem),
                                                      elem))
    return ctx.builder.generic(shape, elem, [], fn, hint="eye")


def _floor_div(b, x, y, elem):
    """floor(x / y): math.floor of the true quotient for floats (ATen's
    div_floor computes it more carefully near integers), arith's floor
    division for integers."""
    if is_float(elem):
        return b.op("math.floor %s : %s" % (arith(b, "div", x, y, elem), elem))
    return b.op("arith.floordivsi %s, %s : %s" % (x, y, elem))


def _trunc_div(b, x, y, elem):
    if is_float(elem):
        return b.op("math.trunc %s : %s" % (arith(b, "div", x, y, elem), elem))
    return b.op("arith.divsi %s, %s : %s" % (x, y, elem))


@register("aten.div.Tensor_mode", "aten.div.Scalar_mode")
def _div_mode(ctx, a, b, rounding_mode=None):
    elem = _compute(ctx)
    if rounding_mode is None:
        return _div(ctx, a, b)
    if rounding_mode not in ("floor", "trunc"):
        raise ctx.error("division with rounding_mode=%r is not supported" % rounding_mode)
    rounded = _floor_div if rounding_mode == "floor" else _trunc_div
    return elementwise(ctx, [a, b], elem, elem, lambda body, v: rounded(body, v[0], v[1], elem))


@register("aten.remainder.Scalar", "aten.remainder.Tensor")
def _remainder(ctx, a, b):
    """a - floor(a / b) * b: the sign of the divisor (Python's %), ATen's
    formula for floats; for integers the C remainder, moved by b where the
    signs differ."""
    elem = _compute(ctx)

    def fn(body, v):
        x, y = v
        if is_float(elem):
            q = _floor_div(body, x, y, elem)
            return arith(body, "sub", x, arith(body, "mul", q, y, elem), elem)
        r = body.op("arith.remsi %s, %s : %s" % (x, y, elem))
        zero = body.const(0, elem)
        nonzero = body.op("arith.cmpi ne, %s, %s : %s" % (r, zero, elem))
        r_neg = body.op("arith.cmpi slt, %s, %s : %s" % (r, zero, elem))
        y_neg = body.op("arith.cmpi slt, %s, %s : %s" % (y, zero, elem))
        differ = body.op("arith.xori %s, %s : i1" % (r_neg, y_neg))
        fix = body.op("arith.andi %s, %s : i1" % (nonzero, differ))
        return body.op("arith.select %s, %s, %s : %s" % (fix, arith(body, "add", r, y, elem),
                                                         r, elem))
    return elementwise(ctx, [a, b], elem, elem, fn)


@register("aten.fmod.Scalar", "aten.fmod.Tensor")
def _fmod(ctx, a, b):
    """The C remainder: the sign of the dividend."""
    elem = _compute(ctx)
    op = "arith.remf" if is_float(elem) else "arith.remsi"
    return elementwise(ctx, [a, b], elem, elem, lambda body, v: float_op(body, op, v, elem))
