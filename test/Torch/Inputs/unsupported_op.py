"""A model with an op dist's emitter does not cover (cumsum), inside a
submodule: dist-torch must name the op, the module and the source line
(test/Torch/unsupported-op.test)."""

import torch
import torch.nn as nn


class Body(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        h = self.lin(x)
        return torch.cumsum(h, dim=-1)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = Body()

    def forward(self, x):
        return self.body(x).pow(2).mean()


def dist_model(config):
    return Model()


def dist_batch(config, micro_batch, generator):
    return (torch.randn(micro_batch, 4, generator=generator),)


def dist_loss(model, x):
    return model(x)
