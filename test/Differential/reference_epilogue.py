"""The numpy reference of a Case's optimizer epilogue (gen_case.Epilogue),
float64, on the unsharded window gradients, written from PyTorch's
definitions, not from the compiler or emit_epilogue.py:

  torch.cuda.amp.GradScaler: unscale_ multiplies every .grad by 1/S and
  records whether any is inf or NaN; step() skips optimizer.step() then
  (nothing changes: parameters, state, AdamW's step count).
  torch.nn.utils.clip_grad_norm_(max_norm): total = the 2-norm of all the
  gradients' 2-norms; each gradient is multiplied by
  clamp(max_norm / (total + 1e-6), max=1).
  torch.optim.SGD(lr, momentum, weight_decay): d = g + wd p; with momentum
  buf = mu buf + d (buf starts as d: mu * 0 + d); p -= lr (buf or d).
  torch.optim.AdamW(lr, betas, eps, weight_decay): step t += 1;
  p *= 1 - lr wd; m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
  p -= (lr / (1 - b1^t)) m / (sqrt(v) / sqrt(1 - b2^t) + eps).
"""

import numpy as np

import rounding


def initial_state(case):
    """{(param, slot): zeros} and the step count, as dist-run starts them."""
    e = case.epilogue
    state = {(n, s): np.zeros(p.shape) for n, p in case.params.items() for s in e.state()}
    return state, 0.0


def _correction_error(beta, t):
    """The relative error of a bias correction 1 - beta^t computed in float32
    from the float32 constant beta (off by U relative, so beta^t by t U) with
    powf (within 2 ulp): 1 - 0.999 loses ten bits to the cancellation."""
    bt = beta ** t
    return bt * (t + 4) * rounding.U / (1 - bt) + rounding.U


def apply(case, grads, params, state, step, errs):
    """One window's epilogue on the full (unsharded) synced gradients.
    `errs` bounds the float32 run's distance from the float64 values
    (rounding.py): {"grad": {n: e}, "param": {n: e}, "state": {(n, slot): e}}.
    Returns (params, state, step, norm, skipped, errs): errs as given, for
    the new parameters and state, and "norm" for the norm."""
    U, gamma = rounding.U, rounding.gamma
    e = case.epilogue
    g, eg = dict(grads), dict(errs["grad"])
    ep, es = errs["param"], errs["state"]
    skipped = False
    if e.scale is not None:
        g = {n: v / e.scale for n, v in g.items()}
        eg = {n: v / e.scale + 2 * U * np.abs(g[n]) for n, v in eg.items()}
        skipped = not all(np.all(np.isfinite(v)) for v in g.values())
    norm = enorm = None
    if e.clip is not None:
        norm = float(np.sqrt(sum(np.sum(v * v) for v in g.values())))
    if e.clip is not None and not skipped:
        size = sum(v.size for v in g.values())
        # d norm = sum g dg / norm; the sum of squares rounds within gamma.
        enorm = (sum(float(np.sum(np.abs(v) * eg[n])) for n, v in g.items()) / max(norm, 1e-300)
                 + gamma(size + 2) * norm)
        raw = e.clip / (norm + 1e-6)
        coef = min(raw, 1.0)
        # min(raw, 1) is 1-Lipschitz in raw, and raw moves by raw enorm /
        # (norm + 1e-6); both sides take 1 when even norm + enorm does.
        ecoef = 0.0 if e.clip / (norm + enorm + 1e-6) >= 1.0 else \
            raw * enorm / (norm + 1e-6) + 3 * U * coef
        eg = {n: v * coef + np.abs(g[n]) * ecoef + U * np.abs(g[n] * coef) for n, v in eg.items()}
        g = {n: v * coef for n, v in g.items()}
    if skipped:
        return dict(params), dict(state), step, norm, True, {
            "param": dict(ep), "state": dict(es), "norm": enorm}
    new_params, new_state, new_ep, new_es = {}, {}, {}, {}
    if e.opt == "adamw":
        step += 1
        b1, b2 = e.betas
        bc1, bc2 = 1 - b1 ** step, 1 - b2 ** step
        rbc1, rbc2 = _correction_error(b1, step), _correction_error(b2, step)
    for n, p in params.items():
        if e.opt == "sgd":
            d = g[n] + e.wd * p
            new_params[n] = p - e.lr * d
            new_ep[n] = ep[n] * (1 + e.lr * e.wd) + e.lr * eg[n] + \
                4 * U * (np.abs(p) + e.lr * (np.abs(g[n]) + e.wd * np.abs(p)))
        elif e.opt == "momentum":
            buf = e.momentum * state[(n, "buf")] + (g[n] + e.wd * p)
            new_state[(n, "buf")] = buf
            new_es[(n, "buf")] = e.momentum * es[(n, "buf")] + eg[n] + e.wd * ep[n] + \
                4 * U * (e.momentum * np.abs(state[(n, "buf")]) + np.abs(g[n]) + e.wd * np.abs(p))
            new_params[n] = p - e.lr * buf
            new_ep[n] = ep[n] + e.lr * new_es[(n, "buf")] + 2 * U * (np.abs(p) + e.lr * np.abs(buf))
        else:
            m = b1 * state[(n, "m")] + (1 - b1) * g[n]
            v = b2 * state[(n, "v")] + (1 - b2) * g[n] * g[n]
            new_state[(n, "m")], new_state[(n, "v")] = m, v
            em = b1 * es[(n, "m")] + (1 - b1) * eg[n] + \
                4 * U * (b1 * np.abs(state[(n, "m")]) + (1 - b1) * np.abs(g[n]))
            ev = b2 * es[(n, "v")] + (1 - b2) * 2 * np.abs(g[n]) * eg[n] + \
                5 * U * (b2 * state[(n, "v")] + (1 - b2) * g[n] * g[n])
            new_es[(n, "m")], new_es[(n, "v")] = em, ev
            decayed = p * (1 - e.lr * e.wd)
            root = np.sqrt(v)
            denom = root / np.sqrt(bc2) + e.eps
            update = (e.lr / bc1) * m / denom
            new_params[n] = decayed - update
            # |sqrt(a) - sqrt(b)| <= min(|a - b| / (2 sqrt(b)), sqrt(|a - b|)).
            eroot = np.minimum(ev / np.maximum(2 * root, 1e-300), np.sqrt(ev)) + U * root
            edenom = eroot / np.sqrt(bc2) + (root / np.sqrt(bc2)) * (rbc2 / 2 + 2 * U) + \
                U * denom
            low = np.maximum(denom - edenom, e.eps)
            eupdate = (e.lr / bc1) * (em / low + np.abs(m) * edenom / (low * denom)) + \
                np.abs(update) * (rbc1 + 4 * U)
            new_ep[n] = ep[n] * (1 - e.lr * e.wd) + eupdate + \
                3 * U * (np.abs(p) + np.abs(update))
    return new_params, new_state, step, norm, False, {
        "param": new_ep, "state": new_es, "norm": enorm}
