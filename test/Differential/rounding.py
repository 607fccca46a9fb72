"""How far a float32 run of a Case's step may be from reference.py's float64.

reference.py carries, next to every float64 value v, a bound e on |v32 - v|,
where v32 is what any float32 evaluation of the same formulas computes from
float32 inputs within their own bounds. The bounds are first order, built
from the standard model of floating point (Higham, "Accuracy and Stability
of Numerical Algorithms", 2nd ed., ch. 2-3):
- one rounded operation: fl(a op b) = (a op b)(1 + d), |d| <= U = 2^-24;
- a sum or dot product of n terms, in any order or blocking: within
  gamma(n) = n U of the sum of the terms' magnitudes;
- a function f of an input off by e: off by at most sup|f'| e;
- glibc's tanhf: within 2 ulp, 4 U |tanh| (glibc manual, "Known Maximum
  Errors in Math Functions"; the lowering calls libm's tanhf);
- relu's derivative is a step: where |z| <= e(z) it may take either value.
A constant of the emitted IR is rounded to float32 too; every count below
is at least the number of rounded operations of emit_mlir.py's formula.

difftest.py accepts |got - want| <= SAFETY e. SAFETY = 2 covers the dropped
second-order terms (products of two errors, about U^2 relative) and the
float64 reference's own rounding (2^-53, 2^29 times below U). With these
bounds a gradient rounded once through bfloat16 (relative error up to 2^-9)
fails (selfcheck.py), where BACKGROUND.md's full-batch tolerance (rtol
5e-3) let it pass.
"""

import numpy as np

# Unit roundoff u (half an ulp at 1) of the types a parameter computes or
# reduces in.
ROUNDOFF = {"f32": 2.0 ** -24, "bf16": 2.0 ** -8, "f16": 2.0 ** -11}
U = ROUNDOFF["f32"]
SAFETY = 2.0
TANH_ULP = 4 * U  # relative error of glibc's tanhf
GELU_C = np.sqrt(2.0 / np.pi)
GELU_K = 0.044715


def gamma(n):
    return n * U


def _sup(f):
    """sup |f| on [-30, 30] (both activations are flat beyond), 1% up."""
    z = np.linspace(-30, 30, 600001)
    return 1.01 * float(np.max(np.abs(f(z))))


def _gelu_parts(z):
    t = np.tanh(GELU_C * (z + GELU_K * z ** 3))
    return t, GELU_C * (1 + 3 * GELU_K * z * z)


def _gelu_d1(z):
    t, du = _gelu_parts(z)
    return 0.5 * (1 + t) + 0.5 * z * (1 - t * t) * du


def _gelu_d2(z):
    t, du = _gelu_parts(z)
    ddu = GELU_C * 6 * GELU_K * z
    return (1 - t * t) * du + 0.5 * z * (-2 * t * (1 - t * t) * du * du + (1 - t * t) * ddu)


# Lipschitz constants: sup |f'| and sup |f''| over the reals.
LIPSCHITZ = {"identity": (1.0, 0.0), "relu": (1.0, 0.0),
             "tanh": (1.0, _sup(lambda z: 2 * np.tanh(z) * (1 - np.tanh(z) ** 2))),
             "gelu": (_sup(_gelu_d1), _sup(_gelu_d2))}


def act_bounds(act, z, ez):
    """(e(f(z)), e(f'(z))): the bounds on act(z) and its derivative computed
    in float32 from a z within ez."""
    l1, l2 = LIPSCHITZ[act]
    if act == "identity":
        return ez, np.zeros_like(z)
    if act == "relu":  # max and select are exact; the select may flip
        return l1 * ez, (np.abs(z) <= ez).astype(np.float64)
    a = np.abs(z)
    if act == "tanh":
        t = np.tanh(z)
        # t (tanhf) rounds once; 1 - t t three more times.
        return l1 * ez + TANH_ULP * np.abs(t), l2 * ez + (2 * TANH_ULP + 3 * U) * (1 + t * t)
    t, du = _gelu_parts(z)
    # The tanh's argument c (z + k z^3): five rounded operations.
    et = (1 - t * t) * 5 * U * GELU_C * (a + GELU_K * a ** 3) + TANH_ULP * np.abs(t)
    value = 0.5 * a * (et + 4 * U * (1 + np.abs(t)))
    left = 0.5 * et + 2 * U * (1 + np.abs(t))
    right = 0.5 * a * np.abs(du) * (2 * np.abs(t) * et + 8 * U * (1 + t * t))
    return l1 * ez + value, l2 * ez + left + right + U * np.abs(_gelu_d1(z))


def round_to(x, dtype):
    """`x` rounded to nearest even in `dtype` (through float32, as the model
    holds it), back as float64. numpy has no bfloat16: its bits are the top
    16 of a float32, rounded here on the integer."""
    x32 = np.asarray(x, dtype=np.float32)
    if dtype == "f32":
        return x32.astype(np.float64)
    if dtype == "f16":
        return x32.astype(np.float16).astype(np.float64)
    bits = x32.view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)
