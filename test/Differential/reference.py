"""The numpy reference of a gen_case.Case, written by hand.

Inputs are drawn here (float32, as dist-run reads them) and everything after
is float64: per rank and micro-batch the forward, the MSE loss scaled by 1/K
and the backward; per window the full-batch gradient
G = (1/W) sum_ranks sum_k g_{rank,k} (BACKGROUND.md), each rank's shard of it
(without the 1/W for a gradient the step returns in the "sum" form)
as the runtime places shards (row-major mesh coordinates, the position along
the group's axes in the order given), then SGD with dist-run's learning rate.
Nothing here comes from the compiler or from examples/gen_toy.py.
"""

import numpy as np

import reference_epilogue
import rounding
from rounding import ROUNDOFF, round_to

GELU_C = rounding.GELU_C


def act_forward(act, z):
    if act == "relu":
        return np.maximum(z, 0.0)
    if act == "tanh":
        return np.tanh(z)
    if act == "gelu":
        return 0.5 * z * (1.0 + np.tanh(GELU_C * (z + 0.044715 * z ** 3)))
    return z


def act_derivative(act, z):
    if act == "relu":
        return (z > 0).astype(np.float64)
    if act == "tanh":
        return 1.0 - np.tanh(z) ** 2
    if act == "gelu":
        t = np.tanh(GELU_C * (z + 0.044715 * z ** 3))
        return 0.5 * (1.0 + t) + 0.5 * z * (1.0 - t * t) * GELU_C * (1.0 + 3 * 0.044715 * z * z)
    return np.ones_like(z)


def _scale(layer):
    return layer.scale if layer.scale is not None else 1.0


def _weight_and_bias(layer, params):
    p = params[layer.weight]
    if layer.packed:
        return p[:, :layer.din], p[:, layer.din]
    return p, (params[layer.bias] if layer.bias else None)


def micro_step(case, params, x, y, perr=None):
    """Forward and backward of one micro-batch: (loss, {param: local grad},
    dx, errors). `perr` bounds how far the float32 parameters of the run
    under test may be from `params` (zero if None); `errors` holds the
    same bounds for what the float32 step computes (rounding.py):
    {"loss": float, "grads": {param: array}, "dx": array}.
    An inf in the data (Epilogue.inf_window) gives NaNs quietly."""
    with np.errstate(invalid="ignore", over="ignore"):
        return _micro_step(case, params, x, y, perr or {})


def _micro_step(case, params, x, y, perr):
    def err(name):
        return perr.get(name, np.zeros(params[name].shape)) if name else 0.0

    def weight_err(layer):
        e = err(layer.weight)
        return e[:, :layer.din] if layer.packed else e

    def bias_errs(layer):
        """The biases' values and bounds: (|b| + |b2|, e(b) + e(b2))."""
        _, b = _weight_and_bias(layer, params)
        mag = (np.abs(b) if b is not None else 0.0) + \
            (np.abs(params[layer.bias2]) if layer.bias2 else 0.0)
        e = (err(layer.weight)[:, layer.din] if layer.packed else err(layer.bias)) + \
            err(layer.bias2)
        return mag, e

    h, eh, saved = x, np.zeros(x.shape), []
    for l in case.layers:
        w, b = _weight_and_bias(l, params)
        s = abs(_scale(l))
        z = h @ (_scale(l) * w).T
        if b is not None:
            z = z + b
        if l.bias2:
            z = z + params[l.bias2]
        bmag, be = bias_errs(l)
        ez = s * (eh @ np.abs(w).T + np.abs(h) @ weight_err(l).T) + be + \
            rounding.gamma(l.din + 3) * (s * np.abs(h) @ np.abs(w).T + bmag)
        saved.append((h, eh, z, ez))
        h = act_forward(l.act, z)
        eh = rounding.act_bounds(l.act, z, ez)[0]
    diff = h - y
    ediff = eh + rounding.U * np.abs(diff)
    scale = 1.0 / (case.batch * case.layers[-1].dout * case.k)
    loss = float(np.sum(diff * diff) * scale)
    eloss = float(scale * (np.sum(2 * np.abs(diff) * ediff)
                           + rounding.gamma(diff.size + 3) * np.sum(diff * diff)))
    # GradScaler's scale multiplies the loss the backward starts from.
    loss_scale = case.epilogue.scale if case.epilogue and case.epilogue.scale else 1.0
    dh = 2.0 * scale * loss_scale * diff
    edh = 2.0 * scale * loss_scale * (ediff + 4 * rounding.U * np.abs(diff))
    grads = {name: np.zeros(p.shape) for name, p in case.params.items()}
    egrads = {name: np.zeros(p.shape) for name, p in case.params.items()}
    # A tied parameter's uses add up: one rounding per use, on their sum.
    mags = {name: np.zeros(p.shape) for name, p in case.params.items()}
    for l, (h_in, eh_in, z, ez) in reversed(list(zip(case.layers, saved))):
        dfz = act_derivative(l.act, z)
        edf = rounding.act_bounds(l.act, z, ez)[1]
        dz = dh * dfz
        edz = edh * (np.abs(dfz) + edf) + np.abs(dh) * edf + rounding.U * np.abs(dz)
        s = abs(_scale(l))
        dw, db = _scale(l) * (dz.T @ h_in), dz.sum(axis=0)
        mdw = s * (np.abs(dz).T @ np.abs(h_in))
        edw = s * (edz.T @ np.abs(h_in) + np.abs(dz).T @ eh_in) + \
            rounding.gamma(case.batch + 2) * mdw
        edb = edz.sum(axis=0) + rounding.gamma(case.batch) * np.abs(dz).sum(axis=0)
        mdb = np.abs(dz).sum(axis=0)
        uses = [(l.weight, (slice(None), slice(0, l.din)) if l.packed else Ellipsis, dw, edw,
                 mdw)]
        if l.packed:
            uses.append((l.weight, (slice(None), l.din), db, edb, mdb))
        uses += [(n, Ellipsis, db, edb, mdb) for n in (l.bias, l.bias2) if n]
        for name, where, g, e, m in uses:
            grads[name][where] += g
            egrads[name][where] += e
            mags[name][where] += m
        w = _weight_and_bias(l, params)[0]
        dh = dz @ (_scale(l) * w)
        edh = s * (edz @ np.abs(w) + np.abs(dz) @ weight_err(l)) + \
            rounding.gamma(l.dout + 2) * s * (np.abs(dz) @ np.abs(w))
    for name in egrads:
        egrads[name] += rounding.gamma(len(case.layers) + 1) * mags[name]
    return loss, grads, dh, {"loss": eloss, "grads": egrads, "dx": edh}


def shard_index(case, param, rank):
    """The rank's position in the parameter's shard group (runtime order)."""
    shape = case.meshes[param.mesh]
    coords, r = [0] * len(shape), rank
    for i in reversed(range(len(shape))):
        coords[i] = r % shape[i]
        r //= shape[i]
    axes = param.axes if param.axes is not None else list(range(len(shape)))
    order = 0
    for a in axes:
        order = order * shape[a] + coords[a]
    return order


def local_part(case, param, full, rank):
    """The rank's rows; a dim 0 the group does not divide is first padded
    with zero rows to ceil(rows / shards) per rank (FSDP's padding)."""
    if not param.sharded:
        return full
    rows = -(-full.shape[0] // param.shards)
    padded = np.zeros((rows * param.shards,) + full.shape[1:], dtype=full.dtype)
    padded[:full.shape[0]] = full
    s = shard_index(case, param, rank)
    return padded[s * rows:(s + 1) * rows]


def draw_inputs(case):
    """Float32 parameters {name: full array} and data[window][micro][rank] = (x, y)."""
    rng = np.random.default_rng(case.seed)
    params = {}
    for name, p in case.params.items():
        fan_in = p.shape[1] if len(p.shape) > 1 else p.shape[0]
        params[name] = rng.uniform(-1, 1, p.shape).astype(np.float32) / np.float32(np.sqrt(fan_in))
    d0, dl = case.layers[0].din, case.layers[-1].dout
    data = [[[(rng.uniform(-1, 1, (case.batch, d0)).astype(np.float32),
               rng.uniform(-1, 1, (case.batch, dl)).astype(np.float32))
              for _ in range(case.world)] for _ in range(case.k)] for _ in range(case.windows)]
    e = case.epilogue
    if e is not None and e.inf_window is not None:  # after the draws: same streams
        data[e.inf_window][0][0][0][0, 0] = np.float32(np.inf)
    return params, data




def expected_outputs(case, params32, data):
    """What every rank must return, per window:
    [{"grad": {(rank, param): array}, "out": {(micro, rank, result kind): array},
      "epilogue": {(rank, result): array}, "err": {the same keys: array},
      "slack": {(rank, param): array}}].

    "err" bounds how far a float32 run may be from each value (rounding.py),
    the parameters it starts each window from included: window w's are the
    result of w float32 updates.

    A mixed-precision parameter (Param.compute) enters the model rounded to
    its compute type, and each micro-batch's gradient leaves it rounded
    (computed in f32 there, in float64 here: the two may round to adjacent
    values, 2 u |g| apart). The sync then sums the K W terms in the reduce
    type, each partial sum rounded: at most (K + W + 2) u sum |g| / W
    (recursive summation, Higham's gamma_n, with the pre-averaging and the
    conversions), and a parameter held in the compute type rounds the synced
    gradient once more. "slack" is that bound per element, added to the
    tolerance; zero for f32 parameters."""
    U, gamma = rounding.U, rounding.gamma
    params = {n: v.astype(np.float64) for n, v in params32.items()}
    perr = {n: np.zeros(v.shape) for n, v in params.items()}
    if case.epilogue:
        state, step = reference_epilogue.initial_state(case)
        serr = {key: np.zeros(v.shape) for key, v in state.items()}
    windows = []
    for w in range(case.windows):
        total = {n: np.zeros(p.shape) for n, p in case.params.items()}
        etotal = {n: np.zeros(p.shape) for n, p in case.params.items()}
        magnitude = {n: np.zeros(p.shape) for n, p in case.params.items()}
        used = {n: round_to(v, case.params[n].compute) if case.params[n].compute != "f32" else v
                for n, v in params.items()}
        out, err = {}, {}
        for k in range(case.k):
            for r in range(case.world):
                x, y = (a.astype(np.float64) for a in data[w][k][r])
                loss, grads, dx, e = micro_step(case, used, x, y, perr)
                for n in total:
                    g = grads[n]
                    if case.params[n].compute != "f32":
                        g = round_to(g, case.params[n].compute)
                    total[n] += g
                    etotal[n] += e["grads"][n]
                    magnitude[n] += np.abs(g)
                out[(k, r, "loss")] = np.array(loss).reshape(() if case.loss_rank0 else (1,))
                err[("out", k, r, "loss")] = np.full(out[(k, r, "loss")].shape, e["loss"])
                out[(k, r, "dx")], err[("out", k, r, "dx")] = dx, e["dx"]
                if case.gradnorm:
                    g, eg = grads[case.gradnorm], e["grads"][case.gradnorm]
                    out[(k, r, "gradnorm")] = np.array([np.sum(g ** 2)])
                    err[("out", k, r, "gradnorm")] = np.array([
                        np.sum(2 * np.abs(g) * eg) + gamma(g.size + 1) * np.sum(g ** 2)])
        # A gradient returned in the "sum" form is not averaged (Case.sync_forms).
        div = {n: 1 if case.sync_forms.get(n) == "sum" else case.world for n in total}
        full = {n: g / div[n] for n, g in total.items()}
        efull = {n: (etotal[n] + gamma(case.k + case.world + 2) * magnitude[n]) / div[n]
                 for n in total}
        grad = {(r, n): local_part(case, case.params[n], full[n], r)
                for r in range(case.world) for n in case.params}
        for r in range(case.world):
            for n in case.params:
                err[("grad", r, n)] = local_part(case, case.params[n], efull[n], r)
        slack = {}
        for n, p in case.params.items():
            bound = np.zeros(p.shape)
            if p.compute != "f32":
                terms = case.k + case.world + 2
                # Held in the compute type, the synced gradient is rounded
                # once more, by at most u |G| <= u sum |g| / W.
                rounds = 2 + (p.held != "f32")
                bound = ((rounds * ROUNDOFF[p.compute] + terms * ROUNDOFF[p.reduce])
                         * magnitude[n] / case.world)
            for r in range(case.world):
                slack[(r, n)] = local_part(case, p, bound, r)
        window = {"grad": grad, "out": out, "slack": slack, "err": err}
        windows.append(window)
        if not case.epilogue:
            for n in params:
                step_n = case.lr * full[n]
                params[n] = params[n] - step_n
                perr[n] = perr[n] + case.lr * efull[n] + \
                    2 * U * (np.abs(params[n]) + np.abs(step_n))
            continue
        # The epilogue's results, per rank (the backward's gradients carry
        # the loss scale: Epilogue.scale multiplies the loss's seed).
        params, state, step, norm, window["skipped"], e = reference_epilogue.apply(
            case, full, params, state, step, {"grad": efull, "param": perr, "state": serr})
        perr, serr = e["param"], e["state"]
        epi = window["epilogue"] = {}
        for r in range(case.world):
            for res in case.results:
                p = case.params.get(res[1]) if len(res) > 1 else None
                if res[0] == "next":
                    epi[(r, res)] = local_part(case, p, params[res[1]], r)
                    err[("epilogue", r, res)] = local_part(case, p, perr[res[1]], r)
                elif res[0] == "next_state":
                    key = (res[1], res[2])
                    epi[(r, res)] = local_part(case, p, state[key], r)
                    err[("epilogue", r, res)] = local_part(case, p, serr[key], r)
                elif res[0] == "next_step":
                    epi[(r, res)] = np.array(step)
                    err[("epilogue", r, res)] = np.zeros(())
                elif res[0] == "norm":
                    epi[(r, res)] = np.array(norm)
                    err[("epilogue", r, res)] = np.array(e["norm"] if e["norm"] is not None
                                                         else np.nan)
    return windows


def finite_difference_check(case, params32, data, eps=1e-6, samples=6):
    """Checks micro_step's gradients against central differences of the
    loss (float64); returns a list of mismatch descriptions."""
    rng = np.random.default_rng(case.seed + 1)
    params = {n: v.astype(np.float64) for n, v in params32.items()}
    x, y = (a.astype(np.float64) for a in data[0][0][0])
    _, grads, dx, _ = micro_step(case, params, x, y)
    problems = []

    def check(what, analytic, bump):
        for _ in range(samples):
            idx = tuple(rng.integers(0, d) for d in analytic.shape)
            plus, minus = bump(idx, eps), bump(idx, -eps)
            numeric = (plus - minus) / (2 * eps)
            if abs(numeric - analytic[idx]) > 1e-6 + 1e-4 * abs(numeric):
                problems.append("%s%s: backward %.9g, finite difference %.9g"
                                % (what, list(idx), analytic[idx], numeric))

    for name in params:
        def bump(idx, e, name=name):
            changed = dict(params)
            changed[name] = params[name].copy()
            changed[name][idx] += e
            return micro_step(case, changed, x, y)[0]
        check(name, grads[name], bump)

    def bump_x(idx, e):
        changed = x.copy()
        changed[idx] += e
        return micro_step(case, params, changed, y)[0]
    check("dx", dx, bump_x)
    return problems
