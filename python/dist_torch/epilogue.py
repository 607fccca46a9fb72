"""The optimizer through the front door: clip_grad_norm_ and SGD, traced
from PyTorch, run once per window in the compiled step's `dist.epilogue`.

What a user's loop does after the window's last backward,

    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    torch.optim.SGD(..., lr, momentum, weight_decay, nesterov).step()

is traced with make_fx (PyTorch's own `clip_grad_norm_` and functional
`torch.optim._functional.sgd`, functionalized) on tensors of each
parameter's *local* shape: the rank's shard for ZeRO and HSDP, the whole
tensor for DDP. Every op of that graph is elementwise on one parameter's
tensors except the per-gradient norms of clip_grad_norm_, and the emitter
checks that it is so. Each such norm is computed as FSDP's
clip_grad_norm_ computes it: the shard's sum of squares, summed over the
shard group (`dist.shard_sum`), then the square root.

The step then returns each gradient synchronized (an explicit
`dist.grad_sync`, tied), and the epilogue reads them, the parameters and
the momentum buffers (arguments the host holds: dist-run starts them at
zero) and yields the next parameters and buffers ({dist.next = <arg>}) and
the total norm. A zero momentum buffer gives PyTorch's first step
(buf = d_p) when dampening is 0, the only dampening offered.

The reference (oracle.py) runs the same calls on DDP's gradients; the
comparison (compare.py) checks the next parameters and the norm.
"""

import dataclasses
import math
from typing import Dict, List, Optional, Sequence

import torch
from functorch import functionalize
from torch.fx.experimental import proxy_tensor

from .mlir import Builder, EmitError, Tensor, element_type, tensor_type
from .ops import HANDLERS, Context, arith
from .ops_linalg import _reduce
from .trace import DECOMPOSED


@dataclasses.dataclass
class Optimizer:
    """torch.optim.SGD's options and clip_grad_norm_'s max_norm (None: no
    clipping), run once per window."""
    lr: float
    momentum: float = 0.0
    weight_decay: float = 0.0
    nesterov: bool = False
    clip: Optional[float] = None

    def check(self) -> None:
        for name in ("lr", "momentum", "weight_decay"):
            v = getattr(self, name)
            if not math.isfinite(v) or v < 0:
                raise ValueError("--%s must be a finite number >= 0, got %r"
                                 % (name.replace("_", "-"), v))
        if self.nesterov and self.momentum <= 0:
            raise ValueError("--nesterov needs --momentum > 0 (torch.optim.SGD's rule)")
        if self.clip is not None and not (math.isfinite(self.clip) and self.clip > 0):
            raise ValueError("--clip must be a finite number > 0, got %r" % self.clip)

    @property
    def has_buffers(self) -> bool:
        return self.momentum != 0

    def norm_result(self, num_params: int) -> Optional[int]:
        """The step's result holding the total norm (None without clipping):
        after the loss, the gradients, the next parameters and buffers, in
        the order emit() yields them."""
        if self.clip is None:
            return None
        return 1 + num_params * (3 if self.has_buffers else 2)

    def describe(self) -> str:
        text = "SGD lr %g" % self.lr
        if self.momentum:
            text += " momentum %g%s" % (self.momentum, " nesterov" if self.nesterov else "")
        if self.weight_decay:
            text += " weight decay %g" % self.weight_decay
        if self.clip is not None:
            text += ", clip_grad_norm_ %g" % self.clip
        return text

    def torch_optimizer(self, params) -> torch.optim.Optimizer:
        return torch.optim.SGD(params, lr=self.lr, momentum=self.momentum,
                               weight_decay=self.weight_decay, nesterov=self.nesterov)

    def window_step(self, grads, params, bufs):
        """What the user's loop does once per window, on lists of tensors
        (the function traced): (params, bufs, total norm or None)."""
        holders = []
        for p, g in zip(params, grads):
            h = torch.nn.Parameter(torch.empty_like(p))
            h.grad = g
            holders.append(h)
        norm = None
        if self.clip is not None:
            norm = torch.nn.utils.clip_grad_norm_(holders, self.clip)
        torch.optim._functional.sgd(
            params, grads, bufs if self.has_buffers else [None] * len(params),
            foreach=False, weight_decay=self.weight_decay, momentum=self.momentum,
            lr=self.lr, dampening=0.0, nesterov=self.nesterov, maximize=False)
        return params, bufs, norm


def trace(opt: Optimizer, shapes: Sequence[Sequence[int]]) -> torch.fx.GraphModule:
    """The window step on tensors of `shapes` (grads, params, buffers as
    placeholders, in that order) -> (params..., buffers..., [norm])."""
    def step(grads, params, bufs):
        grads = [g.clone() for g in grads]  # clip writes them in place
        params = [p.clone() for p in params]
        bufs = [b.clone() for b in bufs]
        params, bufs, norm = opt.window_step(grads, params, bufs)
        return tuple(params) + tuple(bufs) + ((norm,) if norm is not None else ())

    g = torch.Generator().manual_seed(0)
    example = [[torch.randn(tuple(s), generator=g) for s in shapes] for _ in range(2)]
    bufs = [torch.zeros(tuple(s)) for s in shapes] if opt.has_buffers else []
    decompositions = torch._decomp.get_decompositions(DECOMPOSED)
    graph = proxy_tensor.make_fx(functionalize(step), decomposition_table=decompositions)(
        example[0], example[1], bufs)
    graph.graph.eliminate_dead_code()
    graph.recompile()
    return graph


@dataclasses.dataclass
class Entry:
    """One parameter as the epilogue reads it."""
    name: str
    grad: Tensor  # the synchronized gradient (local type)
    param: Tensor  # the argument
    param_index: int
    buf: Optional[Tensor] = None  # the momentum buffer argument
    buf_index: int = -1


_PASS_THROUGH = {"aten.clone.default", "aten.detach.default", "aten.alias.default"}


class _Region(Context):
    """Emits the traced window step as the epilogue's body."""

    def __init__(self, builder: Builder, graph: torch.fx.GraphModule, opt: Optimizer,
                 entries: List[Entry]):
        super().__init__(builder)
        self.graph, self.opt, self.entries = graph, opt, entries
        self.node: Optional[torch.fx.Node] = None
        self.env: Dict[torch.fx.Node, object] = {}
        self.owner: Dict[torch.fx.Node, int] = {}  # node -> its parameter
        self.grads: set = set()  # the gradient placeholders

    def error(self, message: str) -> EmitError:
        op = str(self.node.target) if self.node is not None else "the epilogue"
        return EmitError("the optimizer epilogue (%s): %s: %s"
                         % (self.opt.describe(), op, message))

    def result(self):
        meta = self.node.meta.get("tensor_meta")
        return tuple(meta.shape), element_type(meta.dtype)

    def constant_tensor(self, value):
        raise self.error("a tensor constant in the optimizer's graph")

    def body(self, block_args: List[Tensor]) -> List[Tensor]:
        nodes = list(self.graph.graph.nodes)
        for i, node in enumerate(n for n in nodes if n.op == "placeholder"):
            self.env[node] = block_args[i]
            self.owner[node] = i % len(self.entries)
            if i < len(self.entries):
                self.grads.add(node)
        for node in nodes:
            if node.op == "placeholder":
                continue
            self.node = node
            if node.op == "output":
                return [self.env[a] for a in node.args[0]]
            self.builder.loc = 'loc("optimizer epilogue: %s")' % node.target
            if node.op != "call_function" or str(node.target) not in HANDLERS:
                raise self.error("not covered by the emitter")
            owners = {self.owner[a] for a in node.all_input_nodes if a in self.owner}
            if self._gradient_norm(node):
                self.env[node] = self._shard_norm(node)
                continue
            self._check_elementwise(node, owners)
            args = [self._value(a) for a in node.args]
            kwargs = {k: self._value(v) for k, v in node.kwargs.items()}
            self.env[node] = HANDLERS[str(node.target)](self, *args, **kwargs)
            if owners:
                self.owner[node] = owners.pop()
        raise self.error("the traced graph has no output")

    def _value(self, a):
        if isinstance(a, torch.fx.Node):
            return self.env[a]
        if isinstance(a, (list, tuple)):
            return type(a)(self._value(x) for x in a)
        return a

    def _gradient_norm(self, node) -> bool:
        """clip_grad_norm_'s norm of one gradient (not of a computed value)."""
        if str(node.target) != "aten.linalg_vector_norm.default":
            return False
        root = node.args[0]
        while root.op == "call_function" and str(root.target) in _PASS_THROUGH:
            root = root.args[0]
        return root in self.grads

    def _shard_norm(self, node) -> Tensor:
        x = self.env[node.args[0]]
        order = node.args[1] if len(node.args) > 1 else 2
        if order != 2 or x.elem != "f32":
            raise self.error("only the 2-norm of an f32 gradient is computed over shards")
        b = self.builder
        squares = b.generic(x.shape, "f32", [(x, ["d%d" % d for d in range(len(x.shape))])],
                            lambda body, v: arith(body, "mul", v[0], v[0], "f32"))
        local = _reduce(self, squares, list(range(len(x.shape))), "sum", "f32", False)
        name = self.entries[self.owner[node.args[0]]].name
        total = b.op('dist.shard_sum %s for @"%s" : tensor<f32>' % (local.ssa, name), "ss")
        return Tensor(b.op("math.sqrt %s : tensor<f32>" % total, "norm"), (), "f32")

    def _check_elementwise(self, node, owners) -> None:
        """Everything but the gradients' norms maps a parameter's tensors
        to a tensor of the same (local) shape, or scalars to scalars: a
        reduction or reshape of a shard would mean something else on the
        whole parameter."""
        if len(owners) > 1:
            raise self.error("mixes tensors of two parameters")
        meta = node.meta.get("tensor_meta")
        shape = tuple(meta.shape) if meta is not None and hasattr(meta, "shape") else None
        if owners:
            want = self.entries[next(iter(owners))].param.shape
            if shape != tuple(want):
                raise self.error("maps a parameter's tensor of shape %s to %s: only "
                                 "elementwise ops and the gradients' norms can run on "
                                 "shards" % (list(want), list(shape or [])))


def emit(builder: Builder, opt: Optimizer, entries: List[Entry]):
    """Writes the dist.epilogue; returns its results as (Tensor, result
    attribute) in order: next parameters, next buffers, the total norm."""
    for e in entries:
        if e.grad.elem != "f32" or e.param.elem != "f32":
            raise EmitError("the optimizer epilogue takes f32 parameters and gradients; "
                            "%s is %s (a param_dtype/reduce_dtype placement)"
                            % (e.name, e.grad.elem if e.grad.elem != "f32" else e.param.elem))
    graph = trace(opt, [e.param.shape for e in entries])
    inputs = [e.grad for e in entries] + [e.param for e in entries] + \
        [e.buf for e in entries if opt.has_buffers]
    block = [Tensor("%%eb%d" % i, t.shape, t.elem) for i, t in enumerate(inputs)]
    outer, outer_loc = builder.lines, builder.loc
    builder.lines = []
    region = _Region(builder, graph, opt, entries)
    values = [builder.materialize(v) for v in region.body(block)]
    builder.loc = 'loc("optimizer epilogue")'
    builder.op("dist.epilogue_yield %s : %s" % (", ".join(v.ssa for v in values),
                                                 ", ".join(v.type for v in values)), results=0)
    body, builder.lines = builder.lines, outer
    name = builder.fresh("ep")
    lhs = name if len(values) == 1 else "%s:%d" % (name, len(values))
    builder.lines.append("  %s = dist.epilogue (%s) : (%s) -> (%s) {" % (
        lhs, ", ".join(t.ssa for t in inputs), ", ".join(t.type for t in inputs),
        ", ".join(v.type for v in values)))
    builder.lines.append("  ^bb0(%s):" % ", ".join("%s: %s" % (t.ssa, t.type) for t in block))
    builder.lines.extend("  " + line for line in body)
    builder.lines.append("  } %s" % builder.loc)
    builder.loc = outer_loc
    results = [Tensor(name if len(values) == 1 else "%s#%d" % (name, i), v.shape, v.elem)
               for i, v in enumerate(values)]
    attrs = ["{dist.next = %d}" % e.param_index for e in entries]
    if opt.has_buffers:
        attrs += ["{dist.next = %d}" % e.buf_index for e in entries]
    if opt.clip is not None:
        attrs.append("")
    return list(zip(results, attrs))


def grad_sync(builder: Builder, name: str, grad: Tensor, local: Sequence[int]) -> Tensor:
    """This rank's synchronized gradient of `name` (DDP's average; the
    shard for a sharded placement)."""
    ty = tensor_type(local, grad.elem)
    ssa = builder.op('dist.grad_sync %s for @"%s" : %s -> %s' % (grad.ssa, name, grad.type, ty),
                     "sync")
    return Tensor(ssa, tuple(local), grad.elem)
