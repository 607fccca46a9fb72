"""Random training steps in the frontend model of docs/Design.md.

A case is an MLP (1..4 layers, widths 2..16, relu / tanh-gelu / tanh /
identity) with an MSE loss scaled by 1/K, on a 1-D or 2-D mesh of 1..4
ranks, each parameter replicated (DDP), fully sharded (ZeRO-2: the backward
reuses the gathered value; ZeRO-3: it synchronizes the shard again) or hybrid
(HSDP), possibly tied (one weight used by two layers: one summed gradient),
possibly scaled before use (the layer computes with c W), packed (weight and
bias in one parameter, sliced), with two biases sharing one gradient value,
with dW accumulated in an scf.for, or with a parameter nothing reads,
possibly returning dx and a gradient norm as untied results, with shuffled
argument and result order, and possibly compiled under a stash budget (the
no_sync pipeline's stash-budget: the least the stashes can hold, all of
them local, or a value in between, computed here from the parameters). `make_case(seed)` draws one; `emit_mlir(case)`
writes @step in the form dist-run takes. Written apart from
examples/gen_toy.py on purpose: the tester must not share its mistakes.
"""

import random

# The data model (what a case is) lives in gen_model.py; its names are
# reachable here too (gen_case.Case, gen_case.Epilogue, ...).
from gen_model import Case, Epilogue, Layer, Param

ACTIVATIONS = ["relu", "gelu", "tanh", "identity"]


def _mesh_shapes(world):
    shapes = {1: [(1,), (1, 1)], 2: [(2,), (1, 2), (2, 1)], 3: [(3,), (1, 3), (3, 1)],
              4: [(4,), (2, 2), (1, 4), (4, 1)]}
    return shapes[world]


def _all_axes(rng, rank):
    """None (omitted) or every axis, spelled out (axes are strictly increasing)."""
    if rng.random() < 0.5:
        return None
    return list(range(rank))


def _draw_param_kind(rng, case_mode, mesh_rank):
    kinds = ["ddp", "zero2", "zero3"] + (["ddp2", "hsdp2", "hsdp3"] if mesh_rank == 2 else [])
    if case_mode != "mixed" and case_mode in kinds:
        return case_mode
    return rng.choice(kinds)


def _make_param(rng, name, kind, mesh_name, mesh_shape):
    rank = len(mesh_shape)
    world = 1
    for d in mesh_shape:
        world *= d
    if kind == "ddp":
        return Param(name, None, kind, mesh_name, _all_axes(rng, rank), [], 1, rng.random() < 0.5)
    if kind in ("zero2", "zero3"):
        return Param(name, None, kind, mesh_name, _all_axes(rng, rank), [], world,
                     kind == "zero3")
    shard_axis = rng.choice([0, 1])
    if kind == "ddp2":  # replicated on both axes, spelled as axes + replicate_axes
        return Param(name, None, kind, mesh_name, [shard_axis], [1 - shard_axis], 1,
                     rng.random() < 0.5)
    return Param(name, None, kind, mesh_name, [shard_axis], [1 - shard_axis],
                 mesh_shape[shard_axis], kind == "hsdp3")


def make_case(seed):
    rng = random.Random(seed)
    world = rng.choice([1, 2, 2, 3, 4, 4, 4])
    shape = rng.choice(_mesh_shapes(world))
    meshes = {"world": shape}
    others = [s for s in _mesh_shapes(world) if len(s) != len(shape)]
    if others and rng.random() < 0.2:
        meshes["grid"] = rng.choice(others)
    case_mode = rng.choice(["mixed", "mixed", "ddp", "ddp2", "zero2", "zero3", "hsdp2", "hsdp3"])
    k = rng.choice([1, 2, 3, 4, 4, 5, 8])
    uneven = random.Random("uneven-%d" % seed).random() < 0.35

    def rows(p, most):
        """A dim 0 for `p` of at most `most` rows: a multiple of its group
        unless the case is uneven."""
        if uneven:
            return rng.randint(1, most)
        return p.shards * rng.randint(1, max(1, most // p.shards))

    nlayers = rng.choice([1, 2, 2, 3, 3, 4])
    params = {}
    layers = []

    def new_param(name):
        mesh_name = rng.choice(sorted(meshes))
        kind = _draw_param_kind(rng, case_mode, len(meshes[mesh_name]))
        return _make_param(rng, name, kind, mesh_name, meshes[mesh_name])

    din = rng.randint(2, 16)
    for j in range(nlayers):
        act = rng.choice(ACTIVATIONS)
        # A tied layer reuses an earlier weight whose input width matches.
        candidates = [l for l in layers if l.owns and l.din == din]
        if candidates and rng.random() < 0.7:
            tied = rng.choice(candidates)
            layer = Layer(din, tied.dout, act, tied.weight, None, False)
        elif rng.random() < 0.08:
            w = new_param("l%d.wb" % j)
            dout = rows(w, 16)
            w.shape = (dout, din + 1)
            params[w.name] = w
            layer = Layer(din, dout, act, w.name, None, False, packed=True)
        else:
            w = new_param("l%d.w" % j)
            dout = rows(w, 16)
            w.shape = (dout, din)
            params[w.name] = w
            layer = Layer(din, dout, act, w.name, None, True)
        if rng.random() < 0.2:
            layer.scale = rng.choice([0.5, 2.0, -1.5])
        layer.loop = rng.random() < 0.08
        if not layer.packed and rng.random() < 0.75:
            b = new_param("l%d.b" % j)
            if layer.dout % b.shards and not uneven:
                b = _make_param(rng, b.name, "ddp", b.mesh, meshes[b.mesh])
            b.shape = (layer.dout,)
            params[b.name] = b
            layer.bias = b.name
            if rng.random() < 0.15:
                b2 = new_param("l%d.b2" % j)
                if layer.dout % b2.shards and not uneven:
                    b2 = _make_param(rng, b2.name, "ddp", b2.mesh, meshes[b2.mesh])
                b2.shape = (layer.dout,)
                params[b2.name] = b2
                layer.bias2 = b2.name
        layers.append(layer)
        # Sometimes give this layer the input width of an earlier one, so
        # that the next layer can tie to it, when divisibility allows.
        if j + 1 < nlayers and layer.owns and rng.random() < 0.35:
            want = rng.choice([l.din for l in layers if l.owns])
            own = [params[n] for n in (layer.weight, layer.bias, layer.bias2) if n]
            if uneven or all(want % p.shards == 0 for p in own):
                layer.dout = want
                for p in own:
                    p.shape = (want,) + tuple(p.shape[1:])
        din = layer.dout

    unused = None
    if rng.random() < 0.15:
        u = new_param("unused")
        u.shape = (rows(u, 3 * u.shards), rng.randint(1, 5))
        params[u.name] = u
        unused = u.name
    hsdp = any(p.replicate_axes for p in params.values())
    case = Case(
        seed=seed, meshes=meshes, world=world, k=k, batch=rng.randint(1, 8),
        windows=rng.choice([2, 2, 3]), lr=rng.choice([0.05, 0.2]),
        hsdp_partial=hsdp and rng.random() < 0.5, layers=layers, params=params,
        dx=rng.random() < 0.4,
        gradnorm=rng.choice(sorted(params)) if rng.random() < 0.2 else None, unused=unused,
        loss_rank0=rng.random() < 0.3, style=rng.choice(["generic", "generic", "named"]),
        uneven=uneven)
    args = [("param", n) for n in params] + [("x",), ("y",)]
    results = [("loss",)] + [("grad", n) for n in params]
    if case.dx:
        results.append(("dx",))
    if case.gradnorm:
        results.append(("gradnorm",))
    if rng.random() < 0.5:
        rng.shuffle(args)
    if rng.random() < 0.5:
        rng.shuffle(results)
    case.args, case.results = args, results
    # Drawn last, so that the draws above (and so each seed's model) are the
    # same as before explicit forms existed.
    for name in params:
        if rng.random() < 0.3:
            case.sync_forms[name] = rng.choice(["pre", "post", "avg", "sum"])
    if rng.random() < 0.25:
        case.window_loop = True
        case.dx, case.gradnorm = False, None
        case.results = [r for r in case.results if r[0] in ("loss", "grad")]
    # Drawn after everything else, for the same reason. A whole window has
    # no variants for keep-gathered to change.
    keep = rng.random() < 0.5
    case.keep_gathered = bool(case.regathered()) and keep and not case.window_loop
    case.buckets = rng.random() < 0.5
    case.reduce_f64 = rng.random() < 0.3 and not case.sync_forms
    lrng = random.Random("lowp-%d" % seed)
    if lrng.random() < 0.35 and not case.window_loop and not case.reduce_f64:
        for name, p in params.items():
            if name not in case.sync_forms and lrng.random() < 0.6:
                p.compute = lrng.choice(["bf16", "f16"])
                p.reduce = lrng.choice([p.compute, "f32"])
                p.held = lrng.choice(["f32", p.compute])
                case.lowp = True
        if case.lowp:
            case.windows = 1
            case.keep_gathered = case.keep_gathered and bool(case.regathered())
    brng = random.Random("budget-%d" % seed)
    if brng.random() < 0.4:
        case.budget_kind = brng.choice(["least", "all", "mid", "mid"])
        least, most = case.stash_bytes_least(), case.stash_bytes_all()
        case.stash_budget = {"least": least, "all": most,
                             "mid": brng.randint(least, most)}[case.budget_kind]
    erng = random.Random("epilogue-%d" % seed)
    if erng.random() < 0.3 and not case.window_loop and not case.lowp:
        opt = erng.choice(["sgd", "momentum", "adamw"])
        e = Epilogue(opt, lr=1e-2 if opt == "adamw" else case.lr,
                     wd=erng.choice([0.0, 0.01, 0.1]))
        if erng.random() < 0.6:
            e.clip = erng.choice([0.05, 1.0])
        if erng.random() < 0.4:
            e.scale = 1024.0
            if erng.random() < 0.5:
                e.inf_window = erng.randrange(case.windows)
        case.epilogue = e
        for name in params:
            case.args += [("state", name, slot) for slot in e.state()]
        if opt == "adamw":
            case.args.append(("step",))
        for name in params:
            case.results.append(("next", name))
            case.results += [("next_state", name, slot) for slot in e.state()]
        if opt == "adamw":
            case.results.append(("next_step",))
        if e.clip is not None:
            case.results.append(("norm",))
    return case
