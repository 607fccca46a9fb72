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


def initial_state(case):
    """{(param, slot): zeros} and the step count, as dist-run starts them."""
    e = case.epilogue
    state = {(n, s): np.zeros(p.shape) for n, p in case.params.items() for s in e.state()}
    return state, 0.0


def apply(case, grads, params, state, step):
    """One window's epilogue on the full (unsharded) synced gradients.
    Returns (params, state, step, norm, skipped)."""
    e = case.epilogue
    g = dict(grads)
    skipped = False
    if e.scale is not None:
        g = {n: v / e.scale for n, v in g.items()}
        skipped = not all(np.all(np.isfinite(v)) for v in g.values())
    norm = None
    if e.clip is not None:
        norm = float(np.sqrt(sum(np.sum(v * v) for v in g.values())))
        coef = min(e.clip / (norm + 1e-6), 1.0)
        g = {n: v * coef for n, v in g.items()}
    if skipped:
        return dict(params), dict(state), step, norm, True
    new_params, new_state = {}, {}
    if e.opt == "adamw":
        step += 1
        b1, b2 = e.betas
        bc1, bc2 = 1 - b1 ** step, 1 - b2 ** step
    for n, p in params.items():
        if e.opt == "sgd":
            new_params[n] = p - e.lr * (g[n] + e.wd * p)
        elif e.opt == "momentum":
            buf = e.momentum * state[(n, "buf")] + (g[n] + e.wd * p)
            new_state[(n, "buf")] = buf
            new_params[n] = p - e.lr * buf
        else:
            m = b1 * state[(n, "m")] + (1 - b1) * g[n]
            v = b2 * state[(n, "v")] + (1 - b2) * g[n] * g[n]
            new_state[(n, "m")], new_state[(n, "v")] = m, v
            decayed = p * (1 - e.lr * e.wd)
            new_params[n] = decayed - (e.lr / bc1) * m / (np.sqrt(v) / np.sqrt(bc2) + e.eps)
    return new_params, new_state, step, norm, False
