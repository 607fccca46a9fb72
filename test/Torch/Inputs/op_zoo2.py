"""More ops a user reaches for (test/Torch/CMakeLists.txt checks them
against PyTorch DDP): activations and losses through PyTorch's
decompositions, norms, repeat, padding, flips, floor division and
remainders, an identity matrix, matrix-vector and batched addmm."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Zoo2(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 8)
        self.vec = nn.Parameter(torch.linspace(-1.0, 1.0, 8))
        self.bias3 = nn.Parameter(torch.randn(3, 4, 4) * 0.2)

    def forward(self, x, y, steps):
        h = self.lin(x)                                            # (B, 8)
        a = F.softplus(h) + F.elu(h) + F.mish(h) * 0.5 + F.hardtanh(h, -0.5, 0.5)
        a = a + F.relu6(h * 4.0) * 0.1 + F.glu(torch.cat([h, h * 0.5], -1), -1)
        a = a + F.hardswish(h) + F.hardsigmoid(h)
        n = F.normalize(a, dim=-1) + a.norm(dim=-1, keepdim=True) * 0.1
        n = n + a.std(-1, keepdim=True) * 0.1 + torch.mv(a, self.vec).unsqueeze(-1) * 0.1
        r = n.repeat(1, 2)                                         # (B, 16)
        r = F.pad(r, (1, 2)) + torch.flip(F.pad(r, (2, 1)), [-1])  # (B, 19)
        m = r[:, :16].reshape(-1, 4, 4)
        m = torch.baddbmm(self.bias3[: m.shape[0] % 3 + 1].sum(0, keepdim=True), m,
                          m.transpose(1, 2)) + torch.eye(4)
        q = torch.div(steps, 3, rounding_mode="floor") + torch.remainder(steps, 3) \
            + torch.fmod(steps, 2) + torch.div(steps, 4, rounding_mode="trunc")
        s = m.flatten(1).sum(-1) + torch.remainder(r[:, 0], 0.7) + q.float() * 0.01
        p = torch.sigmoid(s)
        return F.binary_cross_entropy(p, y) + 0.1 * F.huber_loss(s, y, delta=0.5)


def dist_model(config):
    return Zoo2()


def dist_batch(config, micro_batch, generator):
    x = torch.randn(micro_batch, 6, generator=generator)
    y = (torch.rand(micro_batch, generator=generator) < 0.5).float()
    steps = torch.randint(-7, 9, (micro_batch,), generator=generator)
    return x, y, steps


def dist_loss(model, x, y, steps):
    return model(x, y, steps)
