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
from dataclasses import dataclass, field

ACTIVATIONS = ["relu", "gelu", "tanh", "identity"]


@dataclass
class Param:
    name: str
    shape: tuple  # unsharded
    kind: str  # "ddp" | "ddp2" | "zero2" | "zero3" | "hsdp2" | "hsdp3"
    mesh: str
    axes: list  # None: omitted (every axis)
    replicate_axes: list
    shards: int  # size of the group dim 0 is sharded over (1: replicated)
    resync: bool  # the backward synchronizes the argument again
    # Mixed precision (dist.parameter param_dtype / reduce_dtype): the model
    # computes with the f32 parameter rounded to `compute` and returns its
    # gradient rounded to it; the sync reduces in `reduce`.
    compute: str = "f32"
    reduce: str = "f32"
    # The type the parameter is held in: f32 (param_dtype converts it) or
    # the compute type itself (dist-run's f32 boundary rounds its f32
    # master copy at every call).
    held: str = "f32"

    @property
    def sharded(self):
        return self.kind not in ("ddp", "ddp2")

    @property
    def padded(self):
        """Sharded with a dim 0 the group does not divide: FSDP pads it to a
        multiple (dist.parameter unsharded_dim0)."""
        return self.sharded and self.shape[0] % self.shards != 0

    @property
    def local_shape(self):
        if not self.sharded:
            return self.shape
        rows = -(-self.shape[0] // self.shards)  # ceil: the last ranks hold padding
        return (rows,) + tuple(self.shape[1:])

    @property
    def padded_shape(self):
        """What the reduce-scatter reads and the all-gather yields."""
        if not self.sharded:
            return self.shape
        return (self.local_shape[0] * self.shards,) + tuple(self.shape[1:])


@dataclass
class Layer:
    din: int
    dout: int
    act: str
    weight: str
    bias: str  # None: no bias
    owns: bool  # False: the weight is an earlier layer's (tied)
    scale: float = None  # the layer uses scale * W (weight scaling, a LoRA-style merge)
    bias2: str = None  # a second bias: both get the same gradient value
    packed: bool = False  # weight and bias in one [dout, din + 1] parameter (bias last)
    loop: bool = False  # dW accumulated row by row in an scf.for


@dataclass
class Epilogue:
    """The optimizer epilogue (dist.epilogue: once per window, on the
    synchronized gradients), as torch.cuda.amp.GradScaler,
    torch.nn.utils.clip_grad_norm_ and torch.optim spell it: unscale by
    1/scale and skip the window's update when any synced gradient is not
    finite; clip by the global norm; then SGD, SGD with momentum or AdamW
    (its state m, v and step held like the parameter)."""
    opt: str  # "sgd" | "momentum" | "adamw"
    lr: float
    wd: float  # weight decay: added to the gradient (SGD) or decoupled (AdamW)
    clip: float = None  # max_norm, or None
    scale: float = None  # the backward's loss scale S, or None
    inf_window: int = None  # with a scale: the window whose data holds an inf
    momentum: float = 0.9
    betas: tuple = (0.9, 0.999)
    eps: float = 1e-8

    def state(self):
        """The state slots each parameter holds."""
        return {"sgd": [], "momentum": ["buf"], "adamw": ["m", "v"]}[self.opt]


@dataclass
class Case:
    seed: int
    meshes: dict  # name -> shape
    world: int
    k: int
    batch: int
    windows: int
    lr: float
    hsdp_partial: bool
    layers: list
    params: dict  # name -> Param, in declaration order
    dx: bool
    gradnorm: str  # a parameter whose local gradient's sum of squares is returned, or None
    unused: str  # a parameter the step never reads (its gradient: zeros), or None
    loss_rank0: bool  # tensor<f32> instead of tensor<1xf32>
    style: str  # "generic": linalg.generic everywhere; "named": linalg.matmul, arith on tensors
    args: list = field(default_factory=list)  # ("param", name) | ("x",) | ("y",)
    results: list = field(default_factory=list)  # ("loss",) | ("grad", name) | ("dx",) | ("gradnorm",)
    # Gradients the step returns already synchronized, spelled as a frontend
    # would: name -> "pre" (g / W, then sum collectives), "post" (sum, then
    # * 1/W), "avg" (avg collectives) or "sum" (sum collectives, no 1/W: the
    # returned gradient, and so the SGD step, is W times the mean). The
    # others are returned local.
    sync_forms: dict = field(default_factory=dict)
    # The step is a whole window (dist-run --window): an scf.for over the K
    # micro-batches (x and y stack them on dim 0) that adds each one's
    # gradients, synchronized inside the loop in the sync_forms (the others
    # accumulated local), and its loss; results are the loss sum and the
    # gradients.
    window_loop: bool = False
    # Compiled with the no_sync pipeline's keep-gathered (dist-run
    # --keep-gathered): drawn for cases with a parameter the backward gathers
    # again (ZeRO-3, HSDP-3), the ones it changes.
    keep_gathered: bool = False
    # Compiled with the pipeline's collective buckets (its default); without,
    # dist-run gets --bucket-cap-bytes 0. Buckets change how many all_gathers
    # a window issues, so only unbucketed cases check that count.
    buckets: bool = False
    # Compiled with the pipeline's reduce-dtype=f64 (dist-run --reduce-dtype
    # f64): the stash, pre-averaging and collectives in f64, converted back
    # to f32. Drawn only without explicit sync chains, which are written in
    # f32 and so are refused for an f64 reduce type (docs/Design.md).
    reduce_f64: bool = False
    # Sharded dims drawn without regard to the group size (its own random
    # stream, so that the other seeds' models stay as they were): a sharded
    # parameter whose dim 0 the group does not divide is padded.
    uneven: bool = False
    # Some parameters in mixed precision (Param.compute, Param.reduce): bf16
    # or f16 compute, reduced in it or in f32. Drawn last from its own
    # stream, never with explicit chains (written in f32), a whole-window
    # loop (the model's own accumulation would round) or reduce_f64; one
    # window, as SGD on the rounded parameters would need a bound of its own.
    lowp: bool = False
    # Compiled with the no_sync pipeline's stash-budget (dist-run
    # --stash-budget): the most bytes the stashes may hold together, each
    # parameter's stash point (local, shard, synced) chosen within it. Drawn
    # last from its own stream: "least" (Case.stash_bytes_least()), "all"
    # (Case.stash_bytes_all()) or "mid" (a value in between); None: no
    # budget, every stash at its default point.
    budget_kind: str = None
    stash_budget: int = None
    # The optimizer epilogue (Epilogue), drawn last from its own stream for
    # steps that are not whole windows nor in mixed precision; its state
    # arguments ("state", param, slot) and ("step",) and its results
    # ("next", param), ("next_state", param, slot), ("next_step",) and
    # ("norm",) come after the others.
    epilogue: Epilogue = None

    def reduce_bytes(self, p):
        """Bytes of an element of `p`'s reduce type: its reduce_dtype if
        spelled (mixed precision), else the pipeline's reduce-dtype=f64 or
        its element type."""
        if p.compute != "f32":
            return {"f32": 4, "bf16": 2, "f16": 2}[p.reduce]
        return 8 if self.reduce_f64 else 4

    def stash_bytes(self, p, point):
        """What the stash of `p` holds at `point`: the unsharded local
        gradient (local; without a padded shard's zero rows) or this rank's
        shard of the synced one (shard, synced), in the reduce type."""
        shape = p.shape if point == "local" else p.local_shape
        n = 1
        for d in shape:
            n *= d
        return n * self.reduce_bytes(p)

    def stash_points(self, p):
        """The points `p` may take: shard only with a replicate stage."""
        return ["local", "shard", "synced"] if p.replicate_axes else ["local", "synced"]

    def stash_bytes_least(self):
        return sum(min(self.stash_bytes(p, q) for q in self.stash_points(p))
                   for p in self.params.values())

    def stash_bytes_all(self):
        return sum(self.stash_bytes(p, "local") for p in self.params.values())

    def stash_bytes_default(self):
        """Without a budget: local, or shard for a hybrid parameter under
        hsdp-partial."""
        return sum(self.stash_bytes(p, "shard" if self.hsdp_partial and p.replicate_axes
                                    else "local") for p in self.params.values())

    def regathered(self):
        """Parameters the backward gathers again over more than one rank: the
        ones keep-gathered keeps for the window (not those a param_dtype
        converts before the gather)."""
        return [p for p in self.params.values()
                if p.sharded and p.resync and p.shards > 1 and p.compute == p.held]

    def gathers_per_window(self):
        """all_gathers a no_sync window issues: per micro-batch one per
        sharded parameter, two when the backward gathers it again; with
        keep-gathered one per window for those."""
        kept = set(p.name for p in self.regathered()) if self.keep_gathered else set()
        return sum(1 if p.name in kept else self.k * (2 if p.resync else 1)
                   for p in self.params.values() if p.sharded)

    # Two spellings of a form, from the seed (no draw, so that the other
    # seeds' models stay as they were): FSDP2's pad-then-divide for a padded
    # pre-divided gradient, and HSDP's replicate stage first (not in a
    # window loop, whose hsdp-partial keeps the first stage in the loop).
    def pad_first(self, p):
        return (self.sync_forms.get(p.name) == "pre" and p.padded
                and self.seed % 2 == 1)

    def replicate_first(self, p):
        return (p.name in self.sync_forms and bool(p.replicate_axes)
                and not self.window_loop and self.seed % 3 == 0)

    def pipeline_options(self, buckets=None):
        """The no_sync pipeline's options this case compiles with, as
        (name, value) pairs (value None: a flag). dist-run takes the same
        names as flags; `buckets` overrides the drawn choice."""
        options = []
        if self.hsdp_partial:
            options.append(("hsdp-partial", None))
        if self.keep_gathered:
            options.append(("keep-gathered", None))
        if not (self.buckets if buckets is None else buckets):
            options.append(("bucket-cap-bytes", "0"))
        if self.reduce_f64:
            options.append(("reduce-dtype", "f64"))
        if self.stash_budget is not None:
            options.append(("stash-budget", str(self.stash_budget)))
        return options

    def tags(self):
        t = {p.kind for p in self.params.values()}
        if "hsdp2" in t or "hsdp3" in t:
            t.add("hsdp-partial" if self.hsdp_partial else "hsdp-full")
        t.add("mesh-%dd" % max(len(s) for s in self.meshes.values()))
        if len(self.meshes) > 1:
            t.add("two-meshes")
        t.add("w%d" % self.world)
        if len({l.weight for l in self.layers}) < len(self.layers):
            t.add("tied")
        if self.dx:
            t.add("dx")
        if self.gradnorm:
            t.add("gradnorm")
        for form in sorted(set(self.sync_forms.values())):
            t.add("sync-" + form)
        if any(self.pad_first(p) for p in self.params.values()):
            t.add("sync-pad-first")
        if any(self.replicate_first(p) for p in self.params.values()):
            t.add("sync-replicate-first")
        for feature in ("scale", "bias2", "packed", "loop"):
            if any(getattr(l, feature) for l in self.layers):
                t.add({"scale": "wscale", "bias2": "shared-grad"}.get(feature, feature))
        if self.unused:
            t.add("unused")
        if self.k == 1:
            t.add("k1")
        if self.window_loop:
            t.add("window-loop")
        if self.keep_gathered:
            t.add("keep-gathered")
        if self.buckets:
            t.add("buckets")
        if self.reduce_f64:
            t.add("reduce-f64")
        if self.epilogue:
            e = self.epilogue
            t.add("epilogue")
            t.add("epi-" + e.opt)
            if e.clip is not None:
                t.add("epi-clip")
            if e.scale is not None:
                t.add("epi-unscale")
            if e.inf_window is not None:
                t.add("epi-inf")
        if self.budget_kind:
            t.add("stash-budget")
            t.add("budget-" + self.budget_kind)
        if any(p.padded for p in self.params.values()):
            t.add("uneven")
        for p in self.params.values():
            if p.compute != "f32":
                t.add(p.compute)
                t.add("reduce-f32" if p.reduce == "f32" else "reduce-lowp")
                t.add("held-f32" if p.held == "f32" else "held-lowp")
        t.add(self.style)
        return sorted(t)


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
