"""What to train: a model file written as its authors write it, plus three
functions the front door calls (the file's "recipe"):

    dist_model(config: str) -> torch.nn.Module
    dist_batch(config: str, micro_batch: int, generator: torch.Generator)
        -> tuple of tensors (one micro-batch of one rank)
    dist_loss(model, *batch) -> a one-element loss tensor

`dist_loss` must reach the model through `model(...)` (its forward): the
PyTorch reference wraps it in DistributedDataParallel, whose gradient
hooks run from there. An optional `MICRO_BATCH = {config: size}` gives the
default micro-batch size (2 otherwise).
"""

import dataclasses
import importlib.util
import os
import sys
from typing import Callable

import torch


class RecipeError(Exception):
    """A model file that cannot be used; the message says why."""


@dataclasses.dataclass
class Recipe:
    path: str
    config: str
    model: Callable[[str], torch.nn.Module]
    batch: Callable
    loss: Callable
    micro_batches: dict  # the file's MICRO_BATCH: config -> default size

    def default_micro_batch(self) -> int:
        return self.micro_batches.get(self.config, 2)

    def build(self, seed: int) -> torch.nn.Module:
        torch.manual_seed(seed)
        return self.model(self.config)

    def draw(self, micro_batch: int, seed: int, window: int, micro: int, rank: int):
        g = torch.Generator()
        g.manual_seed(((seed * 1000003 + window) * 1009 + micro) * 9176 + rank * 131)
        batch = self.batch(self.config, micro_batch, g)
        if not isinstance(batch, (tuple, list)) or not all(
                isinstance(t, torch.Tensor) for t in batch):
            raise RecipeError("dist_batch in %s must return a tuple of tensors, got %s"
                              % (self.path, type(batch).__name__))
        return tuple(batch)


def load(path: str, config: str) -> Recipe:
    path = os.path.abspath(path)
    name = "dist_recipe_" + os.path.splitext(os.path.basename(path))[0]
    if name in sys.modules:
        module = sys.modules[name]
    else:
        if not os.path.isfile(path):
            raise RecipeError("no model file '%s'" % path)
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise RecipeError("cannot load '%s' as a Python file" % path)
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except SyntaxError as e:
            raise RecipeError("%s:%s: %s" % (path, e.lineno, e.msg)) from e
        sys.modules[name] = module
    missing = [f for f in ("dist_model", "dist_batch", "dist_loss") if not hasattr(module, f)]
    if missing:
        raise RecipeError("'%s' defines no %s (docs/PyTorch.md says what a model file "
                          "provides)" % (path, ", ".join(missing)))
    return Recipe(path, config, module.dist_model, module.dist_batch, module.dist_loss,
                  getattr(module, "MICRO_BATCH", {}))
