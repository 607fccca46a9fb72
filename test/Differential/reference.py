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

GELU_C = np.sqrt(2.0 / np.pi)


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


def micro_step(case, params, x, y):
    """Forward and backward of one micro-batch: (loss, {param: local grad}, dx).
    An inf in the data (Epilogue.inf_window) gives NaNs quietly."""
    with np.errstate(invalid="ignore", over="ignore"):
        return _micro_step(case, params, x, y)


def _micro_step(case, params, x, y):
    h, saved = x, []
    for l in case.layers:
        w, b = _weight_and_bias(l, params)
        z = h @ (_scale(l) * w).T
        if b is not None:
            z = z + b
        if l.bias2:
            z = z + params[l.bias2]
        saved.append((h, z))
        h = act_forward(l.act, z)
    diff = h - y
    scale = 1.0 / (case.batch * case.layers[-1].dout * case.k)
    loss = float(np.sum(diff * diff) * scale)
    # GradScaler's scale multiplies the loss the backward starts from.
    loss_scale = case.epilogue.scale if case.epilogue and case.epilogue.scale else 1.0
    dh = 2.0 * scale * loss_scale * diff
    grads = {name: np.zeros(p.shape) for name, p in case.params.items()}
    for l, (h_in, z) in reversed(list(zip(case.layers, saved))):
        dz = dh * act_derivative(l.act, z)
        dw, db = _scale(l) * (dz.T @ h_in), dz.sum(axis=0)
        if l.packed:
            grads[l.weight][:, :l.din] += dw
            grads[l.weight][:, l.din] += db
        else:
            grads[l.weight] += dw
        if l.bias:
            grads[l.bias] += db
        if l.bias2:
            grads[l.bias2] += db
        dh = dz @ (_scale(l) * _weight_and_bias(l, params)[0])
    return loss, grads, dh


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


# Unit roundoff u (half an ulp at 1) of the types a parameter computes or
# reduces in.
ROUNDOFF = {"f32": 2.0 ** -24, "bf16": 2.0 ** -8, "f16": 2.0 ** -11}


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


def expected_outputs(case, params32, data):
    """What every rank must return, per window:
    [{"grad": {(rank, param): array}, "out": {(micro, rank, result kind): array},
      "slack": {(rank, param): array}}].

    A mixed-precision parameter (Param.compute) enters the model rounded to
    its compute type, and each micro-batch's gradient leaves it rounded
    (computed in f32 there, in float64 here: the two may round to adjacent
    values, 2 u |g| apart). The sync then sums the K W terms in the reduce
    type, each partial sum rounded: at most (K + W + 2) u sum |g| / W
    (recursive summation, Higham's gamma_n, with the pre-averaging and the
    conversions), and a parameter held in the compute type rounds the synced
    gradient once more. "slack" is that bound per element, added to the
    tolerance; zero for f32 parameters."""
    params = {n: v.astype(np.float64) for n, v in params32.items()}
    if case.epilogue:
        state, step = reference_epilogue.initial_state(case)
    windows = []
    for w in range(case.windows):
        total = {n: np.zeros(p.shape) for n, p in case.params.items()}
        magnitude = {n: np.zeros(p.shape) for n, p in case.params.items()}
        used = {n: round_to(v, case.params[n].compute) if case.params[n].compute != "f32" else v
                for n, v in params.items()}
        out = {}
        for k in range(case.k):
            for r in range(case.world):
                x, y = (a.astype(np.float64) for a in data[w][k][r])
                loss, grads, dx = micro_step(case, used, x, y)
                for n in total:
                    g = grads[n]
                    if case.params[n].compute != "f32":
                        g = round_to(g, case.params[n].compute)
                    total[n] += g
                    magnitude[n] += np.abs(g)
                out[(k, r, "loss")] = np.array(loss).reshape(() if case.loss_rank0 else (1,))
                out[(k, r, "dx")] = dx
                if case.gradnorm:
                    out[(k, r, "gradnorm")] = np.array([np.sum(grads[case.gradnorm] ** 2)])
        # A gradient returned in the "sum" form is not averaged (Case.sync_forms).
        full = {n: g / (1 if case.sync_forms.get(n) == "sum" else case.world)
                for n, g in total.items()}
        grad = {(r, n): local_part(case, case.params[n], full[n], r)
                for r in range(case.world) for n in case.params}
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
        window = {"grad": grad, "out": out, "slack": slack}
        windows.append(window)
        if not case.epilogue:
            for n in params:
                params[n] = params[n] - case.lr * full[n]
            continue
        # The epilogue's results, per rank (the backward's gradients carry
        # the loss scale: Epilogue.scale multiplies the loss's seed).
        params, state, step, norm, window["skipped"] = reference_epilogue.apply(
            case, full, params, state, step)
        epi = window["epilogue"] = {}
        for r in range(case.world):
            for res in case.results:
                p = case.params.get(res[1]) if len(res) > 1 else None
                if res[0] == "next":
                    epi[(r, res)] = local_part(case, p, params[res[1]], r)
                elif res[0] == "next_state":
                    epi[(r, res)] = local_part(case, p, state[(res[1], res[2])], r)
                elif res[0] == "next_step":
                    epi[(r, res)] = np.array(step)
                elif res[0] == "norm":
                    epi[(r, res)] = np.array(norm)
    return windows


def finite_difference_check(case, params32, data, eps=1e-6, samples=6):
    """Checks micro_step's gradients against central differences of the
    loss (float64); returns a list of mismatch descriptions."""
    rng = np.random.default_rng(case.seed + 1)
    params = {n: v.astype(np.float64) for n, v in params32.items()}
    x, y = (a.astype(np.float64) for a in data[0][0][0])
    _, grads, dx = micro_step(case, params, x, y)
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
