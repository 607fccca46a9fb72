"""The numpy reference of examples/shard/mlp_dp_w2.mlir, for shard-to-dist.test.

  shard_mlp_reference.py write DIR [--world 2] [--k 2] [--seed 3]
      writes DIR/p/<param>.npy (the whole parameters) and
      DIR/d/w0_k<k>_r<r>_a<a>.npy (rank r's half of micro-batch k: x is
      argument 4 of @step, t argument 5), as dist-run's --params-npy and
      --data-npy read them;
  shard_mlp_reference.py check DIR [--world 2] [--k 2] [--scale 1]
      compares what dist-run --out-npy DIR/o wrote for window 0 with the
      gradients of the unpartitioned step on the whole batch, computed here
      in float64: every rank's gradient of every parameter and every rank's
      per-row squared error of every micro-batch, each within twice a
      first-order bound on float32 rounding (test/Differential/rounding.py,
      difftest's model; relu's derivative either value within the bound of
      its kink). --bf16 PARAM rounds its compiled gradient through
      bfloat16 first (the check must then fail). --scale multiplies the reference
      gradients (0.5 = the mean over 2 ranks, the other convention: the
      check must then fail). Exits 1 on a mismatch.

The reference is the step as the frontend wrote it before shard split it:
one batch of 16 rows per micro-batch, L_k = sum((y - t)^2) / (16 * 8 * K),
G = sum over k of dL_k/dparam. Its backward is checked against central
finite differences first, so that it is not the compiled code's derivation
repeated.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "Differential"))
import rounding  # noqa: E402

BATCH, IN, HIDDEN, OUT = 16, 12, 24, 8
SHAPES = {"w1": (HIDDEN, IN), "b1": (HIDDEN,), "w2": (OUT, HIDDEN), "b2": (OUT,)}


def forward(p, x, t, k):
    z = x @ p["w1"].T + p["b1"]
    h = np.maximum(z, 0.0)
    y = h @ p["w2"].T + p["b2"]
    loss = ((y - t) ** 2).sum() / (BATCH * OUT * k)
    return z, h, y, loss


def backward(p, x, t, k):
    z, h, y, _ = forward(p, x, t, k)
    dy = 2.0 * (y - t) / (BATCH * OUT * k)
    dz = (dy @ p["w2"]) * (z > 0)
    return {"w1": dz.T @ x, "b1": dz.sum(0), "w2": dy.T @ h, "b2": dy.sum(0)}


def backward_bound(p, x, t, k, world):
    """Bounds on |float32 - float64| of backward's gradients and of the
    per-row squared errors (rounding.py); the batch's rows are summed on
    `world` ranks, then over the k micro-batches."""
    U, gamma = rounding.U, rounding.gamma
    a = {n: np.abs(v) for n, v in p.items()}
    z, h, y, _ = forward(p, x, t, k)
    ez = gamma(IN + 2) * (np.abs(x) @ a["w1"].T + a["b1"])
    ey = ez @ a["w2"].T + gamma(HIDDEN + 2) * (np.abs(h) @ a["w2"].T + a["b2"])
    d = y - t
    ed = ey + U * np.abs(d)
    c = 2.0 / (BATCH * OUT * k)
    dy, edy = c * d, c * (ed + 3 * U * np.abs(d))
    dh = dy @ p["w2"]
    edh = edy @ a["w2"] + gamma(OUT + 1) * np.abs(dy) @ a["w2"]
    dz = dh * (z > 0)
    flip = np.abs(z) <= ez
    edz = edh * ((z > 0) | flip) + np.abs(dh) * flip
    rows = gamma(BATCH // world + world + k + 2)
    grads = {"w1": edz.T @ np.abs(x) + rows * np.abs(dz).T @ np.abs(x),
             "b1": edz.sum(0) + rows * np.abs(dz).sum(0),
             "w2": edy.T @ np.abs(h) + np.abs(dy).T @ ez + rows * np.abs(dy).T @ np.abs(h),
             "b2": edy.sum(0) + rows * np.abs(dy).sum(0)}
    return grads, (2 * np.abs(d) * ed).sum(1) + gamma(OUT + 2) * (d * d).sum(1)


def check_backward(p, x, t, k):
    """The analytic backward against central differences, every entry."""
    grads = backward(p, x, t, k)
    eps = 1e-6
    for name, g in grads.items():
        for i in np.ndindex(g.shape):
            plus = {n: v.copy() for n, v in p.items()}
            minus = {n: v.copy() for n, v in p.items()}
            plus[name][i] += eps
            minus[name][i] -= eps
            fd = (forward(plus, x, t, k)[3] - forward(minus, x, t, k)[3]) / (2 * eps)
            if abs(fd - g[i]) > 1e-6 + 1e-4 * abs(fd):
                sys.exit("reference backward wrong at %s%s: %g, finite differences %g"
                         % (name, i, g[i], fd))


def npy(path):
    return np.load(path).astype(np.float64)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("action", choices=["write", "check"])
    parser.add_argument("dir")
    parser.add_argument("--world", type=int, default=2)
    parser.add_argument("--k", type=int, default=2)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--bf16", metavar="PARAM",
                        help="round the compiled gradient of PARAM through bfloat16 first "
                        "(relative error up to 2^-9: the check must then fail)")
    a = parser.parse_args()
    rows = BATCH // a.world
    pdir, ddir, odir = (os.path.join(a.dir, s) for s in ("p", "d", "o"))

    if a.action == "write":
        rng = np.random.default_rng(a.seed)
        for name, shape in SHAPES.items():
            np.save(os.path.join(pdir, name + ".npy"),
                    (0.3 * rng.standard_normal(shape)).astype("<f4"))
        for k in range(a.k):
            for r in range(a.world):
                np.save(os.path.join(ddir, "w0_k%d_r%d_a4.npy" % (k, r)),
                        rng.standard_normal((rows, IN)).astype("<f4"))
                np.save(os.path.join(ddir, "w0_k%d_r%d_a5.npy" % (k, r)),
                        rng.standard_normal((rows, OUT)).astype("<f4"))
        return

    params = {n: npy(os.path.join(pdir, n + ".npy")) for n in SHAPES}
    expected = {n: np.zeros(s) for n, s in SHAPES.items()}
    bound = {n: np.zeros(s) for n, s in SHAPES.items()}
    failures = 0
    for k in range(a.k):
        # The whole micro-batch: rank r held rows [r * rows, (r + 1) * rows).
        x = np.concatenate([npy(os.path.join(ddir, "w0_k%d_r%d_a4.npy" % (k, r)))
                            for r in range(a.world)])
        t = np.concatenate([npy(os.path.join(ddir, "w0_k%d_r%d_a5.npy" % (k, r)))
                            for r in range(a.world)])
        if k == 0:
            check_backward(params, x, t, a.k)
        egrads, esqerr = backward_bound(params, x, t, a.k, a.world)
        for name, g in backward(params, x, t, a.k).items():
            expected[name] += g
            bound[name] += egrads[name] + rounding.gamma(a.k) * np.abs(g)
        _, _, y, _ = forward(params, x, t, a.k)
        sqerr = ((y - t) ** 2).sum(1)
        for r in range(a.world):
            got = npy(os.path.join(odir, "w0_k%d_r%d_out4.npy" % (k, r)))
            want = sqerr[r * rows:(r + 1) * rows]
            tol = rounding.SAFETY * esqerr[r * rows:(r + 1) * rows]
            if got.shape != want.shape or np.any(np.abs(got - want) > tol):
                print("micro-batch %d rank %d: squared errors differ by %g"
                      % (k, r, np.abs(got - want).max()))
                failures += 1
    # results.txt names each result: "<res> grad <param> <shape>".
    tied = {}
    for line in open(os.path.join(odir, "results.txt")):
        fields = line.split()
        if fields[1] == "grad":
            tied[fields[2]] = int(fields[0])
    if sorted(tied) != sorted(SHAPES):
        sys.exit("expected gradients of %s, but results.txt ties %s"
                 % (sorted(SHAPES), sorted(tied)))
    for name in SHAPES:
        want = a.scale * expected[name]
        tol = rounding.SAFETY * a.scale * bound[name]
        for r in range(a.world):
            got = npy(os.path.join(odir, "w0_r%d_grad%d.npy" % (r, tied[name])))
            if name == a.bf16:
                got = rounding.round_to(got, "bf16")
            if got.shape != want.shape or np.any(np.abs(got - want) > tol):
                err = np.abs(got - want).max() if got.shape == want.shape else float("inf")
                print("rank %d: gradient of %s differs from the reference by %g"
                      % (r, name, err))
                failures += 1
            else:
                print("rank %d: gradient of %s matches (max |diff| %.1e, %.2g of its bound; "
                      "max |g| %.3g)" % (r, name, np.abs(got - want).max(),
                                         np.max(np.abs(got - want) / np.maximum(tol, 1e-300)),
                                         np.abs(want).max()))
    print("%d mismatches" % failures)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
