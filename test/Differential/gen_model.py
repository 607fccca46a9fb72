"""What a differential case is: the Case that gen_case.make_case draws,
emit_mlir.py writes and reference.py computes, with its parameters (Param),
layers (Layer) and optimizer epilogue (Epilogue), and what follows from them
alone: stash sizes, the pipeline options it compiles with, its tags. No
drawing here; gen_case.py draws a Case from a seed (and its docstring says
what may be drawn) and re-exports these names.
"""

from dataclasses import dataclass, field

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
