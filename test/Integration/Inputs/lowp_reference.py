"""An independent reference for dist-run's f32 boundary (dist-run-lowp.test).

  lowp_reference.py make DIR           writes DIR/p (parameters), DIR/d (data)
  lowp_reference.py check DIR TYPE K   checks DIR/o, dist-run's --out-npy

The step (Inputs/dist-run-bf16.mlir, dist-run-f16.mlir) on 2 ranks: y = x W,
W = A + B, loss = 1/2 sum (y - t)^2, g = dA = dB = x^T (y - t), in f32 from
the parameters rounded to TYPE (bf16 or f16) by the boundary, g rounded to
TYPE; @a is replicated, @b fully sharded (rank r holds rows 2r, 2r + 1). The
synced gradient is G = 1/2 sum over ranks and micro-batches of g.

The reference rounds the f32 master parameters to TYPE exactly as the
boundary must (to nearest, ties to even: bf16 by bit manipulation, f16 by
numpy) and computes everything else in f64. Each number dist-run writes is
checked against a bound derived from the roundings the step does (Higham's
gamma_n = n u / (1 - n u) for n roundings of unit roundoff u; u = 2^-24 for
f32, 2^-8 bf16, 2^-11 f16), never tuned to the numbers:
- the loss: f32 arithmetic only (the sum A + B, the 4-term dot products, the
  difference, the square and the 15-term sum; the f16 step's loss is summed
  in f64 and rounded to f32 once), so a parameter rounded the wrong way,
  which moves a parameter by 2^-8 (bf16) of itself, is far outside it;
- the gradients: the f32 error of g, g's rounding to TYPE (u |g| plus half
  TYPE's smallest subnormal), then the accumulation over K micro-batches and
  2 ranks: reduced in f32, at most K f32 additions on any term (gamma_K
  (f32) of the sum of magnitudes) and the final rounding to TYPE; reduced in
  TYPE, at most K additions each rounded to f32 and then to TYPE (u' = u +
  2^-24 + u 2^-24 each, double rounding included) and the halving by 1/W
  (exact but in TYPE's subnormals). A lost or doubled micro-batch, a wrong
  shard or a wrong scale is far outside these.
Replicated gradients must be equal on both ranks (the same sum of the same
two numbers). Window 1 starts from window 0's parameters after dist-run's
SGD, master -= f32(lr * G) in f32, recomputed from dist-run's own G: each
window is checked from its own inputs.
"""
import sys

import numpy as np

LR = 1e-3
RANKS = 2
WINDOWS = 2
U32 = 2.0**-24
TYPES = {  # unit roundoff, half the smallest subnormal
    "bf16": (2.0**-8, 2.0**-134),
    "f16": (2.0**-11, 2.0**-25),
}


def to_bf16(v):
    """float32 -> bf16 (returned as float32), to nearest, ties to even."""
    bits = np.asarray(v, np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return bits.astype(np.uint32).view(np.float32)


def to_type(v, dtype):
    if dtype == "bf16":
        return to_bf16(v)
    return np.asarray(v, np.float32).astype(np.float16).astype(np.float32)


def gamma(n, u):
    return n * u / (1 - n * u)


def make(root):
    rng = np.random.default_rng(2024)
    params = {}
    for name in "ab":
        p = rng.uniform(-0.5, 0.5, (4, 3)).astype(np.float32)
        # Ties of both types, where to nearest even differs from truncation
        # (1 + 3 ulp/2) and from ties away from zero (1 + ulp/2).
        p[0, :] = [1 + 2.0**-8, -(1 + 3 * 2.0**-8), 1 + 2.0**-11]
        p[3, 2] = 1 + 3 * 2.0**-11
        params[name] = p
        np.save("%s/p/%s.npy" % (root, name), p)
    for w in range(WINDOWS):
        for k in range(8):
            for r in range(RANKS):
                x = rng.uniform(-1, 1, (5, 4)).astype(np.float32)
                t = rng.uniform(-1, 1, (5, 3)).astype(np.float32)
                np.save("%s/d/w%d_k%d_r%d_a2.npy" % (root, w, k, r), x)
                np.save("%s/d/w%d_k%d_r%d_a3.npy" % (root, w, k, r), t)


def check(root, dtype, k, reduced_in_type):
    u, tiny = TYPES[dtype]
    # TYPE additions: f32 add, then rounded to TYPE.
    u_add = u + U32 + u * U32
    load = lambda name: np.load("%s/%s.npy" % (root, name)).astype(np.float64)
    master = {n: np.load("%s/p/%s.npy" % (root, n)) for n in "ab"}
    failures = 0

    def expect(what, got, want, tol):
        nonlocal failures
        err = np.abs(got - want)
        ratio = float(np.max(err / tol))
        ok = bool(np.all(err <= tol))
        failures += not ok
        print("%s %s: worst |error| / bound %.3g" % ("ok" if ok else "FAIL", what, ratio))

    for w in range(WINDOWS):
        seen = {n: to_type(master[n], dtype).astype(np.float64) for n in "ab"}
        W = seen["a"] + seen["b"]
        G = np.zeros((4, 3))
        magnitude = np.zeros((4, 3))  # sum over k, r of |g~| / W
        g_error = np.zeros((4, 3))  # sum over k, r of |g~ - g| / W
        for micro in range(k):
            for r in range(RANKS):
                x = load("d/w%d_k%d_r%d_a2" % (w, micro, r))
                t = load("d/w%d_k%d_r%d_a3" % (w, micro, r))
                y = x @ W
                d = y - t
                # The f32 error of d: A + B (1 rounding), the 4-term dot
                # product (4) and the difference (1).
                e_d = gamma(6, U32) * (np.abs(x) @ np.abs(W) + np.abs(t))
                loss = 0.5 * np.sum(d * d)
                # Squares (1 rounding), halving (exact), the 15-term sum
                # (14), the boundary's rounding of the f16 step's f64 loss
                # (1): gamma_16 of the sum of magnitudes, and d's error.
                loss_tol = (np.sum(0.5 * e_d * (2 * np.abs(d) + e_d)) +
                            gamma(16, U32) * np.sum(0.5 * (np.abs(d) + e_d)**2))
                got = load("o/w%d_k%d_r%d_out0" % (w, micro, r))
                expect("window %d micro-batch %d rank %d: loss" % (w, micro, r),
                       got, loss, loss_tol)
                g = x.T @ d
                # g's f32 error: d's, and the 5-term dot product (5).
                e_g = np.abs(x).T @ e_d + gamma(5, U32) * (np.abs(x).T @ (np.abs(d) + e_d))
                G += g / RANKS
                g_error += (e_g + u * (np.abs(g) + e_g) + tiny) / RANKS
                magnitude += ((np.abs(g) + e_g) * (1 + u) + tiny) / RANKS
        for res, name in ((1, "a"), (2, "b")):
            if reduced_in_type[name]:
                # K additions each, rounded twice; the halving in subnormals.
                tol = g_error + gamma(k, u_add) * magnitude + (k + 1) * tiny
            else:
                # K f32 additions each, then rounded to TYPE once.
                sum_tol = g_error + gamma(k, U32) * magnitude
                tol = sum_tol + u * (np.abs(G) + sum_tol) + tiny
            grads = [load("o/w%d_r%d_grad%d" % (w, r, res)) for r in range(RANKS)]
            if name == "a":
                if not np.array_equal(grads[0], grads[1]):
                    failures += 1
                    print("FAIL window %d: @a's gradient differs between the ranks" % w)
                full = grads[0]
            else:
                full = np.concatenate(grads)
            expect("window %d: gradient of @%s (reduced in %s)" %
                   (w, name, dtype if reduced_in_type[name] else "f32"), full, G, tol)
            # dist-run's SGD, from its own gradient.
            step = (LR * full).astype(np.float32)
            master[name] = (master[name] - step).astype(np.float32)
    print("%d failed" % failures)
    return failures


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
    else:
        dtype, k = sys.argv[3], int(sys.argv[4])
        # Which parameter each step reduces in its own type (the other in f32).
        reduced = {"bf16": {"a": False, "b": True}, "f16": {"a": True, "b": False}}[dtype]
        sys.exit(1 if check(sys.argv[2], dtype, k, reduced) else 0)
