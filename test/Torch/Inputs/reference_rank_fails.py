"""A model whose loss raises on rank 1 of the PyTorch DDP reference only
(tracing runs without a process group, and dist-run never calls Python):
dist-torch must fail, naming the rank and its exit code, with the rank's
traceback, instead of hanging or passing (test/Torch/reference-rank-fails.test)."""

import torch
import torch.distributed as dist
import torch.nn as nn


def dist_model(config):
    return nn.Linear(4, 2)


def dist_batch(config, micro_batch, generator):
    return (torch.randn(micro_batch, 4, generator=generator),)


def dist_loss(model, x):
    if dist.is_initialized() and dist.get_rank() == 1:
        raise RuntimeError("rank 1's loss refuses on purpose")
    return model(x).pow(2).mean()
