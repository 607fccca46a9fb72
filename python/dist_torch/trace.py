"""Tracing a PyTorch training step into an ATen joint graph.

PyTorch does the work: `make_fx` runs the user's forward, the loss and
`torch.autograd.grad` below autograd and records every ATen op, backward
included, in one FX graph; a fixed decomposition table (PyTorch's own
decompositions) takes composite ops such as `native_layer_norm_backward` or
`nll_loss_backward` apart into the small op set the emitter covers. No
gradient is derived here.

Each recorded node gets the user's source line and the module that ran it:
a TorchFunctionMode notes, at every torch call made from user code, the
innermost frame outside torch and this package, and module hooks keep the
module path; backward ops inherit the note of the forward call whose
gradient they compute, through a tensor hook on its output (the engine runs
it right before that output's grad_fn).
"""

import contextlib
import dataclasses
import itertools
import os
import sys
from typing import Callable, Dict, List, Optional, Sequence

import torch
from torch.fx.experimental import proxy_tensor
from functorch import functionalize
from torch.nn.utils import stateless

aten = torch.ops.aten

# PyTorch's decompositions of composite ops (norms, softmax, losses and their
# backwards) into ops the emitter lowers. Fixed, so that a graph means the
# same on every run; anything outside the emitter's table is an error there.
# Not nll_loss_forward / nll_loss_backward: 1.13's decompositions mishandle a
# negative ignore_index (ops_loss.py lowers them with ATen's semantics). Not
# var_mean: its decomposition writes prims that functionalization refuses.
DECOMPOSED = [
    aten._log_softmax, aten._log_softmax_backward_data, aten._softmax,
    aten._softmax_backward_data, aten.addmm, aten.embedding_dense_backward,
    aten.gelu, aten.gelu_backward, aten.native_layer_norm,
    aten.native_layer_norm_backward, aten.t, aten.masked_fill, aten.silu,
    aten.silu_backward, aten.rsub, aten._reshape_alias,
    aten.transpose, aten.new_zeros, aten.tanh_backward, aten.sigmoid_backward,
    aten.slice_backward, aten.select_backward, aten.threshold_backward,
    aten.leaky_relu, aten.leaky_relu_backward, aten.mse_loss, aten.mse_loss_backward,
    aten.logsumexp, aten.softplus, aten.softplus_backward, aten.elu, aten.elu_backward,
    aten.mish, aten.mish_backward, aten.hardtanh, aten.hardtanh_backward, aten.glu,
    aten.glu_backward, aten.hardswish, aten.hardswish_backward, aten.hardsigmoid,
    aten.hardsigmoid_backward, aten.binary_cross_entropy,
    aten.binary_cross_entropy_backward, aten.huber_loss, aten.huber_loss_backward,
    aten.std, aten.norm, aten.mv,
]

_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep
_OWN_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


@dataclasses.dataclass(frozen=True)
class Origin:
    """Where a node came from in the user's code."""
    file: str
    line: int
    column: int
    module: str  # nn.Module path ("" for the root), or "" outside modules
    function: str  # the user function that made the torch call
    backward: bool = False

    def describe(self) -> str:
        where = "%s:%d" % (self.file, self.line)
        what = "module '%s'" % self.module if self.module else "the model"
        kind = "backward of " if self.backward else ""
        return "%s (%s%s, in %s)" % (where, kind, what, self.function)


def _user_frame():
    """(file, line, column, function) of the innermost frame outside torch
    and this package: the user's code making the current torch call."""
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        path = os.path.abspath(code.co_filename)
        user = not (path.startswith(_TORCH_DIR) or path.startswith(_OWN_DIR) or
                    code.co_filename.startswith("<"))
        if user:
            line, column = frame.f_lineno, 0
            positions = getattr(code, "co_positions", None)  # Python 3.11+
            if positions is not None:
                at = next(itertools.islice(positions(), frame.f_lasti // 2, None), None)
                if at is not None and at[0] == line and at[2] is not None:
                    column = at[2]
            return path, line, column + 1, code.co_name
        frame = frame.f_back
    return None


class _OriginTracker(torch.overrides.TorchFunctionMode):
    """Notes the user's line and module at each torch call from user code."""

    def __init__(self):
        super().__init__()
        self.current: Optional[Origin] = None
        self.failed_at: Optional[Origin] = None  # the innermost call that raised
        self.modules: List[str] = []
        self.tracing_forward = True

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if not self.tracing_forward:
            return func(*args, **kwargs)
        frame = _user_frame()
        saved = self.current
        if frame is not None:
            path, line, column, function = frame
            self.current = Origin(path, line, column,
                                  self.modules[-1] if self.modules else "", function)
        try:
            out = func(*args, **kwargs)
        except Exception:
            self.failed_at = self.failed_at or self.current
            raise
        finally:
            origin, self.current = self.current, saved
        if origin is not None:
            for t in _tensors(out):
                if t.requires_grad and t.grad_fn is not None:
                    t.register_hook(self._backward_hook(origin))
        return out

    def _backward_hook(self, origin: Origin):
        back = dataclasses.replace(origin, backward=True)

        def hook(_grad):
            self.current = back
        return hook


def _tensors(value):
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _tensors(v)


@contextlib.contextmanager
def _module_paths(model: torch.nn.Module, tracker: _OriginTracker):
    handles = []
    for name, module in model.named_modules():
        def pre(_m, _inputs, name=name):
            tracker.modules.append(name)

        def post(_m, _inputs, _out):
            tracker.modules.pop()
        handles.append(module.register_forward_pre_hook(pre))
        handles.append(module.register_forward_hook(post))
    try:
        yield
    finally:
        for h in handles:
            h.remove()


@contextlib.contextmanager
def _record_origins(tracker: _OriginTracker):
    """Stamps every node make_fx creates with the tracker's current origin."""
    original = proxy_tensor.PythonKeyTracer.create_node

    def create_node(self, *args, **kwargs):
        node = original(self, *args, **kwargs)
        node.meta["dist_origin"] = tracker.current
        return node
    proxy_tensor.PythonKeyTracer.create_node = create_node
    try:
        yield
    finally:
        proxy_tensor.PythonKeyTracer.create_node = original


class TraceError(Exception):
    """A step PyTorch could not trace, or that dist cannot take; the message
    says why (and where, when a node is to blame)."""


@dataclasses.dataclass
class TracedStep:
    """A training step as PyTorch recorded it.

    graph: the FX graph of step(*params, *data) -> (loss / k, *grads), grads
      in the order of `params` (a tied parameter once, its gradient summed by
      autograd over every use).
    params: (name, aliases, tensor) per distinct parameter, in
      model.named_parameters() order; aliases are the other names it has
      (a tied head).
    data: the example data tensors, in order.
    """
    graph: torch.fx.GraphModule
    params: List[tuple]
    data: List[torch.Tensor]
    k: int


def distinct_parameters(model: torch.nn.Module):
    """(name, aliases, parameter) for each distinct trainable parameter."""
    seen: Dict[int, list] = {}
    order = []
    for prefix, module in model.named_modules(remove_duplicate=False):
        for local, p in module._parameters.items():
            if p is None or not p.requires_grad:
                continue
            name = prefix + "." + local if prefix else local
            if id(p) in seen:
                seen[id(p)][1].append(name)
                continue
            entry = [name, [], p]
            seen[id(p)] = entry
            order.append(entry)
    return [tuple(e) for e in order]


def trace_step(model: torch.nn.Module, loss_fn: Callable, data: Sequence[torch.Tensor],
               k: int, param_dtype: Optional[Dict[str, torch.dtype]] = None) -> TracedStep:
    """Traces loss_fn(model, *data) / k and its gradients.

    `param_dtype` maps a parameter name to the type the model computes in
    (FSDP's mixed precision): the traced step takes the parameter in that
    type, so the graph is the model's computation in it.
    """
    params = distinct_parameters(model)
    if not params:
        raise TraceError("the model has no trainable parameters")
    param_dtype = param_dtype or {}
    tracker = _OriginTracker()
    called = []
    hook = model.register_forward_pre_hook(lambda *_: called.append(True))

    def step(flat_params, flat_data):
        bound = {}
        for (name, aliases, _), value in zip(params, flat_params):
            for n in [name] + list(aliases):
                bound[n] = value
        # Forward under the tracker; backward ops take origins from hooks.
        tracker.tracing_forward = True
        with tracker:
            # The loss function calls the model, whose parameters are the
            # traced inputs for the call (a tied name gets the same one).
            with stateless._reparametrize_module(model, bound):
                loss = loss_fn(model, *flat_data)
            if not called:
                raise TraceError("the loss function never calls the model: dist_loss "
                                 "must reach it through model(...), its forward "
                                 "(DistributedDataParallel's hooks run there)")
            if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
                shape = list(loss.shape) if isinstance(loss, torch.Tensor) else type(loss)
                raise TraceError("the loss function must return a one-element tensor, "
                                 "got %s" % (shape,))
            loss = loss.reshape(()) / k
        tracker.tracing_forward = False
        grads = torch.autograd.grad(loss, flat_params, allow_unused=True)
        missing = [params[i][0] for i, g in enumerate(grads) if g is None]
        if missing:
            raise TraceError("the traced loss does not depend on parameter(s) %s: "
                             "freeze them (requires_grad=False) or use them; a module "
                             "that keeps its own copies of its parameters (an RNN's "
                             "flat weights) is not traced through them"
                             % ", ".join(missing))
        return (loss, *grads)

    inputs = []
    for name, _, p in params:
        t = p.detach().clone()
        if name in param_dtype:
            t = t.to(param_dtype[name])
        inputs.append(t.requires_grad_(True))
    if not isinstance(data, (tuple, list)) or not all(isinstance(d, torch.Tensor)
                                                       for d in data):
        raise TraceError("a batch must be a tuple of tensors, got %s"
                         % (type(data).__name__,))
    data = [d.detach() for d in data]
    decompositions = torch._decomp.get_decompositions(DECOMPOSED)
    try:
        with _module_paths(model, tracker), _record_origins(tracker):
            joint = proxy_tensor.make_fx(step, decomposition_table=decompositions)(inputs,
                                                                                  data)
            _refuse_state_writes(joint)
            graph = _functional(joint, tracker, [t.detach() for t in inputs] + data,
                                decompositions)
    except TraceError:
        raise
    except Exception as e:  # PyTorch's own refusal: say where, briefly
        origin = tracker.failed_at or tracker.current
        where = origin.describe() if origin else "the step"
        raise TraceError("PyTorch could not trace the step at %s: %s: %s"
                         % (where, type(e).__name__, str(e).strip().splitlines()[0]
                            if str(e).strip() else "")) from e
    finally:
        hook.remove()
    return TracedStep(graph, params, data, k)


def _written(node: torch.fx.Node) -> Optional[torch.fx.Node]:
    """The node an in-place op writes into (None if it writes nothing)."""
    schema = getattr(node.target, "_schema", None)
    if schema is None:
        return None
    for i, a in enumerate(schema.arguments):
        if a.alias_info is not None and a.alias_info.is_write:
            value = node.args[i] if i < len(node.args) else node.kwargs.get(a.name)
            return value if isinstance(value, torch.fx.Node) else None
    return None


def _refuse_state_writes(joint: torch.fx.GraphModule) -> None:
    """A step that writes into a parameter, a buffer or an input (a
    parameter clamped in place, BatchNorm's running statistics, a step
    counter) has state a compiled step does not keep: refused at the op."""
    for node in joint.graph.nodes:
        if node.op != "call_function":
            continue
        target = _written(node)
        while target is not None and target.op == "call_function" and target.args and \
                isinstance(target.args[0], torch.fx.Node) and _is_view(target):
            target = target.args[0]
        if target is not None and target.op in ("placeholder", "get_attr"):
            origin = node.meta.get("dist_origin")
            where = origin.describe() if origin else "the step"
            raise TraceError("%s: %s writes in place into %s: a compiled step keeps no "
                             "state between calls (parameters change only by the "
                             "optimizer; buffers such as BatchNorm's running statistics "
                             "are not supported)"
                             % (where, node.target, "a buffer" if target.op == "get_attr"
                                else "a parameter or an input"))


def _is_view(node: torch.fx.Node) -> bool:
    schema = getattr(node.target, "_schema", None)
    return schema is not None and bool(schema.returns) and \
        schema.returns[0].alias_info is not None and not schema.returns[0].alias_info.is_write


class _Replay(torch.fx.Interpreter):
    """Runs a traced graph node by node, each under its own origin."""

    def __init__(self, graph, tracker):
        super().__init__(graph)
        self.tracker = tracker

    def run_node(self, n):
        self.tracker.current = n.meta.get("dist_origin")
        return super().run_node(n)


def _mutates(node: torch.fx.Node) -> bool:
    schema = getattr(node.target, "_schema", None)
    return schema is not None and any(
        a.alias_info is not None and a.alias_info.is_write for a in schema.arguments)


def _functional(joint: torch.fx.GraphModule, tracker: _OriginTracker, flat, decompositions):
    """The joint graph without in-place ops: autograd's backward may mutate
    (clamp's logical_and_, ...), which functionalization rewrites into value
    semantics; replayed op by op, so every node keeps its origin."""
    if not any(_mutates(n) for n in joint.graph.nodes if n.op == "call_function"):
        return joint

    def replay(*args):
        return _Replay(joint, tracker).run(*args)
    # The same decompositions: functionalization turns in-place ops the first
    # trace kept (masked_fill_) into functional ones the table takes apart.
    return proxy_tensor.make_fx(functionalize(replay), decomposition_table=decompositions)(*flat)
