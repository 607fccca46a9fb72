"""A traced training step as a dist module.

The module is dist's frontend model (docs/Design.md, "The input model"):
one `dist.mesh` per mesh, one `dist.parameter` per distinct parameter from
its placement, and `func.func @step(params..., data...) -> (loss, grads...)`
in func, linalg on tensors, arith, math, tensor and scf: each parameter
argument tied with `dist.param` and brought in with `dist.synchronize`
(again in the backward for ZeRO-3), each gradient result the rank-local
unsharded gradient tied with `dist.grad`. Every op carries the location of
the user's code that produced its ATen node (trace.Origin).

The ATen ops are lowered by the handlers registered in ops_*.py; an op
without a handler is an EmitError naming it, its module and source line.
"""

import operator
import os
from typing import Dict, List, Optional

import torch

from . import epilogue, ops_elementwise, ops_index, ops_linalg, ops_loss, ops_shape  # noqa: F401
from .mlir import Builder, EmitError, Tensor, element_type, tensor_type
from .ops import HANDLERS, Context
from .placement import Placement
from .trace import Origin, TracedStep


def _quote(s: str) -> str:
    return '"%s"' % s.replace("\\", "\\\\").replace('"', '\\"')


def _loc(origin: Optional[Origin], what: str) -> str:
    if origin is None:
        return "loc(%s)" % _quote(what)
    name = "%s%s: %s" % ("backward of " if origin.backward else "",
                         origin.module or "model", what)
    return "loc(%s(%s:%d:%d))" % (_quote(name), _quote(origin.file), origin.line,
                                  origin.column)


def _forward_nodes(graph: torch.fx.Graph, loss: torch.fx.Node):
    """The nodes the loss depends on: the forward."""
    seen, stack = set(), [loss]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        stack.extend(n.all_input_nodes)
    return seen


class Emitter(Context):
    def __init__(self, step: TracedStep, placements: Dict[str, Placement],
                 source: str, optimizer: Optional[epilogue.Optimizer] = None):
        super().__init__(Builder())
        self.step = step
        self.placements = placements
        self.source = source
        self.optimizer = optimizer
        self.env: Dict[torch.fx.Node, object] = {}
        self.node: Optional[torch.fx.Node] = None

    # -- Context -----------------------------------------------------------

    def error(self, message: str) -> EmitError:
        node = self.node
        origin = node.meta.get("dist_origin") if node is not None else None
        op = str(node.target) if node is not None else "the step"
        where = origin.describe() if origin else "an op PyTorch added (no user line)"
        return EmitError("%s: %s: %s" % (where, op, message))

    def constant_tensor(self, value: torch.Tensor) -> Tensor:
        return self._constant(value)

    def result(self):
        meta = self.node.meta.get("tensor_meta") if self.node is not None else None
        if meta is None or not hasattr(meta, "shape"):
            raise self.error("PyTorch recorded no single tensor result")
        return tuple(meta.shape), element_type(meta.dtype)

    # -- the module --------------------------------------------------------

    def emit(self) -> str:
        graph = self.step.graph
        nodes = list(graph.graph.nodes)
        placeholders = [n for n in nodes if n.op == "placeholder"]
        output = next(n for n in nodes if n.op == "output")
        results = list(output.args[0])
        nparams = len(self.step.params)
        loss_node = results[0]
        forward = _forward_nodes(graph.graph, loss_node)

        meshes, params_decl, args, param_values = {}, [], [], {}
        for i, (name, aliases, tensor) in enumerate(self.step.params):
            pl = self.placements[name]
            meshes[pl.mesh.name] = pl.mesh
            node = placeholders[i]
            full = tuple(node.meta["tensor_meta"].shape)
            compute = element_type(node.meta["tensor_meta"].dtype)
            held = element_type(tensor.dtype)
            params_decl.append(pl.declaration(name, full, held, compute))
            local = pl.local_shape(full)
            arg = "%%arg%d" % i
            self.builder.loc = _loc(None, "parameter " + name)
            args.append("%s: %s {dist.param = @%s} %s" % (
                arg, tensor_type(local, held), _quote(name), self.builder.loc))
            param_values[node] = (pl, Tensor(arg, local, held), full, compute)
        for j, node in enumerate(placeholders[nparams:]):
            meta = node.meta["tensor_meta"]
            arg = "%%data%d" % j
            shape = tuple(meta.shape)
            elem = element_type(meta.dtype)
            args.append("%s: %s %s" % (arg, tensor_type(shape, elem),
                                       _loc(None, "data argument %d" % j)))
            self.env[node] = Tensor(arg, shape, elem)
        # The optimizer's momentum buffers: held by the host like the
        # parameter (its local type), after the data.
        buffers = []
        if self.optimizer is not None and self.optimizer.has_buffers:
            for i, (pl, local, _, _) in enumerate(param_values.values()):
                buffers.append((len(args), Tensor("%%buf%d" % i, local.shape, local.elem)))
                args.append("%s: %s %s" % (buffers[-1][1].ssa, local.type, _loc(
                    None, "momentum buffer of " + self.step.params[i][0])))

        # Parameters come in through dist.synchronize: once for the forward,
        # and, for a placement that reshards after forward (ZeRO-3), again at
        # the first use in the backward.
        backward_value: Dict[torch.fx.Node, Tensor] = {}
        for node, (pl, local, full, compute) in param_values.items():
            self.builder.loc = _loc(None, "parameter " + self.step.params[
                placeholders.index(node)][0])
            self.env[node] = pl.synchronize(self.builder, local, full, compute)

        for node in nodes:
            if node.op in ("placeholder", "output"):
                continue
            self.node = node
            origin = node.meta.get("dist_origin")
            what = str(node.target) if node.op == "call_function" else str(node.target)
            self.builder.loc = _loc(origin, what)
            if node.op == "get_attr":
                self.env[node] = self._constant(getattr(graph, node.target))
                continue
            if node.op != "call_function":
                raise self.error("FX node kind '%s' is not supported" % node.op)
            operands = [self._arg(a, node, forward, param_values, backward_value)
                        for a in node.args]
            kwargs = {k: self._arg(v, node, forward, param_values, backward_value)
                      for k, v in node.kwargs.items()}
            if node.target is operator.getitem:
                self.env[node] = operands[0][operands[1]]
                continue
            handler = HANDLERS.get(str(node.target))
            if handler is None:
                raise self.error("this ATen op is not supported by dist's PyTorch "
                                 "emitter (python/dist_torch/ops_*.py lists what is)")
            value = handler(self, *operands, **kwargs)
            self._check(node, value)
            self.env[node] = value

        self.node = None
        self.builder.loc = _loc(None, "step results")
        returned, types, entries = [], [], []
        for r, node in enumerate(results):
            value = self.builder.materialize(self.env[node])
            attr = ""
            if r >= 1:
                name = self.step.params[r - 1][0]
                attr = " {dist.grad = @%s}" % _quote(name)
                if self.optimizer is not None:
                    pl, local, _, _ = param_values[placeholders[r - 1]]
                    value = epilogue.grad_sync(self.builder, name, value, local.shape)
                    entries.append(epilogue.Entry(name, value, local, r - 1))
                    if buffers:
                        entries[-1].buf_index, entries[-1].buf = buffers[r - 1]
            returned.append(value.ssa)
            types.append(value.type + attr)
        if entries:
            for value, attr in epilogue.emit(self.builder, self.optimizer, entries):
                returned.append(value.ssa)
                types.append(value.type + (" " + attr if attr else ""))
        self.builder.op("return %s : %s" % (", ".join(returned), ", ".join(
            t.split(" {")[0] for t in types)), results=0)

        lines = ["// Generated by dist_torch from %s: do not edit." % self.source]
        for mesh in meshes.values():
            lines.append("dist.mesh @%s shape = [%s]" % (
                mesh.name, ", ".join(str(s) for s in mesh.shape)))
        lines.extend(params_decl)
        lines.append("func.func @step(%s)\n    -> (%s) {" % (
            ",\n    ".join(args), ", ".join(types)))
        lines.extend(self.builder.lines)
        lines.append("}")
        return "\n".join(lines) + "\n"

    # -- helpers -----------------------------------------------------------

    def _arg(self, a, user, forward, param_values, backward_value):
        if isinstance(a, torch.fx.Node):
            if user not in forward:
                root = _view_root(a)
                if root in param_values and param_values[root][0].reshard_after_forward:
                    return self._regathered(a, param_values, backward_value)
            if a not in self.env:
                raise self.error("operand %s has no value" % a.name)
            return self.env[a]
        if isinstance(a, (list, tuple)):
            return type(a)(self._arg(x, user, forward, param_values, backward_value)
                           for x in a)
        return a

    def _regathered(self, a, param_values, backward_value):
        """A ZeRO-3 parameter, or a view of it the forward made (a weight's
        transpose, which autograd saves for the backward), as the backward
        reads it: from a second dist.synchronize, the forward's gathered
        copy being freed (FSDP gathers again before the backward)."""
        if a in backward_value:
            return backward_value[a]
        if a in param_values:
            pl, local, full, compute = param_values[a]
            value = pl.synchronize(self.builder, local, full, compute)
        else:
            args = [self._regathered(x, param_values, backward_value)
                    if isinstance(x, torch.fx.Node) else x for x in a.args]
            value = HANDLERS[str(a.target)](self, *args, **a.kwargs)
        backward_value[a] = value
        return value

    def _check(self, node, value):
        meta = node.meta.get("tensor_meta")
        if meta is None or not isinstance(value, Tensor):
            return
        shape, elem = tuple(meta.shape), element_type(meta.dtype)
        if value.shape != shape or value.elem != elem:
            raise self.error("the emitter produced %s, PyTorch %s (an emitter bug)"
                             % (tensor_type(value.shape, value.elem),
                                tensor_type(shape, elem)))

    def _constant(self, value: torch.Tensor) -> Tensor:
        value = value.detach().contiguous()
        elem = element_type(value.dtype)
        shape = tuple(value.shape)
        ty = tensor_type(shape, elem)
        if elem == "i1":
            flat = value.reshape(-1).tolist()
            body = "[%s]" % ", ".join("true" if v else "false" for v in flat) \
                if shape else ("true" if flat[0] else "false")
            if shape:
                body = _nested(value.tolist())
        else:
            body = '"0x%s"' % value.numpy().tobytes().hex().upper() \
                if value.dtype != torch.bfloat16 else \
                '"0x%s"' % value.view(torch.int16).numpy().tobytes().hex().upper()
        ssa = self.builder.op("arith.constant dense<%s> : %s" % (body, ty), "cst")
        return Tensor(ssa, shape, elem)


# Ops that only view their first operand: a chain of them from a parameter
# is the parameter, seen another way (_view_root).
_VIEWS = {
    "aten.permute.default", "aten.t.default", "aten.transpose.int", "aten.view.default",
    "aten._unsafe_view.default", "aten.reshape.default", "aten.expand.default",
    "aten.unsqueeze.default", "aten.squeeze.dim", "aten.slice.Tensor", "aten.select.int",
    "aten.detach.default", "aten.alias.default",
}


def _view_root(node: torch.fx.Node) -> torch.fx.Node:
    """The node a chain of views starts from (the node itself if none)."""
    while (node.op == "call_function" and str(node.target) in _VIEWS and node.args and
           isinstance(node.args[0], torch.fx.Node) and
           all(not isinstance(x, torch.fx.Node) for x in node.args[1:])):
        node = node.args[0]
    return node


def _nested(v) -> str:
    if isinstance(v, list):
        return "[%s]" % ", ".join(_nested(x) for x in v)
    return "true" if v else "false"


def emit_module(step: TracedStep, placements: Dict[str, Placement],
                source: str = "a PyTorch model",
                optimizer: Optional[epilogue.Optimizer] = None) -> str:
    """The module; with `optimizer`, the step also runs it once per window
    in a dist.epilogue (epilogue.py)."""
    return Emitter(step, placements, os.path.basename(source), optimizer).emit()
