"""dist against PyTorch: every window's losses and every parameter's
gradient (unsharded).

The bound. Both sides compute in f32 from the same parameters and data,
and differ only by the order of f32 operations (BLAS blocking, reduction
order, fused vs unfused expressions) and the few ops computed by other
formulas (erf, exp: libm vs ATen's vectorized kernels). Each such
difference is a few units of roundoff u = 2^-24 relative to the magnitudes
summed. A gradient entry is a sum over the W*K*B*T tokens of a window of
products through the model's depth; its rounding error is bounded by about
(n_terms * u) times the sum of the magnitudes of its terms, which for
these models is within a small factor of the largest gradient entry of the
tensor. Hence one bound per tensor, on the largest entry:

    max |g_dist - g_torch| <= GRAD_RTOL * max |g_torch|,   GRAD_RTOL = 2^-12

2^-12 = 2.4e-4 is 4096 u: room for the model's depth and the sums'
lengths, and still three orders of magnitude below the errors the
comparison exists to catch: a lost micro-batch changes a gradient by about
1/K of its size (25% at K = 4), a gradient averaged twice by 1 - 1/W (50%
or more). `docs/PyTorch.md` gives the measured errors, against PyTorch f32
and (`--f64`) against a float64 reference.

Losses: each micro-batch's loss on each rank, a sum over B*T tokens of
log-softmax terms of size ~ln(V): |l_dist - l_torch| <= LOSS_RTOL * |l_torch|,
LOSS_RTOL = 2^-16.
Parameters evolve by SGD between windows on both sides; the bound holds
after three windows because the updates are of size lr * g, far below
the parameters, so the divergence of the trajectories stays at roundoff.

With the optimizer in the step (epilogue.py), the parameters it yields
after window w are compared with PyTorch's after its step. Each update is
lr times a linear function of the (clipped) gradients, whose relative error
is within GRAD_RTOL, and each parameter is a sum of f32 values; so per
tensor

    max |p_dist - p_torch| <= GRAD_RTOL * (max |p_torch| + sum_{v<=w} max |d_v|)

with d_v = PyTorch's update in window v. The total norm of
clip_grad_norm_: the gradients' errors bound its error by their 2-norm,
|n_dist - n_torch| <= GRAD_RTOL * sqrt(sum_p size_p * max |g_p|^2).
"""

from typing import Dict, List

import numpy as np

GRAD_RTOL = 2.0 ** -12
LOSS_RTOL = 2.0 ** -16


def compare_window(window: int, dist_grads: Dict[str, np.ndarray],
                   torch_grads: Dict[str, np.ndarray], dist_losses: np.ndarray,
                   torch_losses: np.ndarray) -> List[str]:
    """The failures of one window, one line each (empty: it passed); also
    prints the window's summary."""
    failures = []
    worst_name, worst = None, 0.0
    for name, ref in torch_grads.items():
        got = dist_grads[name]
        if got.shape != ref.shape:
            failures.append("window %d: %s has shape %s, PyTorch's %s"
                            % (window, name, got.shape, ref.shape))
            continue
        if not (np.all(np.isfinite(got)) and np.all(np.isfinite(ref))):
            failures.append("window %d: the gradient of %s has non-finite entries (dist: %s, "
                            "PyTorch: %s)" % (window, name, not np.all(np.isfinite(got)),
                                              not np.all(np.isfinite(ref))))
            continue
        scale = float(np.max(np.abs(ref))) if ref.size else 0.0
        err = float(np.max(np.abs(got.astype(np.float64) - ref))) if ref.size else 0.0
        rel = err / scale if scale else (0.0 if err == 0 else float("inf"))
        if rel > worst or worst_name is None:
            worst_name, worst = name, rel
        if err > GRAD_RTOL * scale:
            failures.append("window %d: gradient of %s differs from PyTorch DDP: max |diff| "
                            "%.3g > 2^-12 * max |g| = %.3g (%.3g of max |g|)"
                            % (window, name, err, GRAD_RTOL * scale, rel))
    loss_err = np.abs(dist_losses - torch_losses)
    loss_bad = ~(loss_err <= LOSS_RTOL * np.abs(torch_losses))  # NaN fails
    for m, r in zip(*np.nonzero(loss_bad)):
        failures.append("window %d: micro-batch %d on rank %d: loss %.9g, PyTorch's %.9g"
                        % (window, m, r, dist_losses[m, r], torch_losses[m, r]))
    print("window %d: loss (rank 0, sum of the K scaled micro-batch losses) dist %.7f "
          "PyTorch %.7f; worst gradient %s at %.2e of its max |g| (bound %.2e); "
          "worst loss difference %.2e"
          % (window, dist_losses[:, 0].sum(), torch_losses[:, 0].sum(), worst_name, worst,
             GRAD_RTOL, float(loss_err.max()) if loss_err.size else 0.0))
    return failures


def compare_epilogue(window: int, dist_next, torch_next, torch_prev, drift, dist_norm,
                     torch_norm, torch_grads) -> List[str]:
    """The failures of one window's epilogue: the next parameters, and the
    norm (None: no clipping). `drift` {param: sum of max |update|} is
    updated with this window's PyTorch update of each parameter."""
    failures, worst = [], (0.0, None)
    for name, ref in torch_next.items():
        got = dist_next[name].astype(np.float64)
        drift[name] = drift.get(name, 0.0) + (float(np.max(np.abs(ref - torch_prev[name])))
                                              if ref.size else 0.0)
        scale = (float(np.max(np.abs(ref))) if ref.size else 0.0) + drift[name]
        err = float(np.max(np.abs(got - ref))) if ref.size else 0.0
        if not np.all(np.isfinite(got)) or not err <= GRAD_RTOL * scale:
            failures.append("window %d: the epilogue's next %s differs from PyTorch's "
                            "optimizer step: max |diff| %.3g > %.3g (2^-12 * (max |p| + "
                            "updates so far))" % (window, name, err, GRAD_RTOL * scale))
        if scale:
            worst = max(worst, (err / scale, name))
    text = "window %d: epilogue: worst next parameter %s at %.2e of max |p| + updates" % (
        window, worst[1], worst[0])
    if torch_norm is not None:
        bound = GRAD_RTOL * float(np.sqrt(sum(g.size * float(np.max(np.abs(g))) ** 2
                                              for g in torch_grads.values() if g.size)))
        err = abs(dist_norm - torch_norm)
        if not err <= bound:
            failures.append("window %d: clip_grad_norm_'s total norm: dist %.9g, PyTorch "
                            "%.9g (bound %.3g)" % (window, dist_norm, torch_norm, bound))
        text += "; total norm dist %.7f PyTorch %.7f (diff %.2e, bound %.2e)" % (
            dist_norm, torch_norm, err, bound)
    print(text)
    return failures


def _worst(got: Dict[str, np.ndarray], exact: Dict[str, np.ndarray]):
    worst = (0.0, None)
    for name, ref in exact.items():
        scale = float(np.max(np.abs(ref)))
        if scale:
            worst = max(worst, (float(np.max(np.abs(got[name] - ref))) / scale, name))
    return worst


def report_f64(exact, dist_grads, torch_grads) -> None:
    """Prints how far each f32 side is from a float64 reference (window 0)."""
    d, t = _worst(dist_grads, exact), _worst(torch_grads, exact)
    print("window 0 against float64: dist worst %.2e of max |g| (%s), PyTorch f32 worst "
          "%.2e (%s)" % (d[0], d[1], t[0], t[1]))
