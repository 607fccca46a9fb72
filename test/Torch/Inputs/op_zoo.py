"""Ops GPT and Llama do not use, in one small model, for dist-torch's check
against PyTorch DDP (test/Torch/CMakeLists.txt): elementwise math,
comparisons and selection, reductions, views and slices, gathers and their
scatter gradients, batched contractions, a bool data argument."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Zoo(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 8)
        self.lin1 = nn.Linear(8, 12)
        self.lin2 = nn.Linear(12, 8, bias=False)
        self.scale = nn.Parameter(torch.linspace(0.5, 1.5, 8))
        self.mix = nn.Parameter(torch.randn(4, 6, 6) * 0.3)
        self.register_buffer("perm", torch.tensor([2, 0, 1, 3, 5, 4]))

    def forward(self, idx, cols, target, mask):
        x = self.emb(idx) * mask[..., None]                 # (B, 6, 8); a bool mask
        h = self.lin1(x)
        a = torch.relu(h) + torch.sigmoid(h) * torch.tanh(h)
        a = a + torch.clamp(h, min=-0.5, max=0.7) + 0.1 * torch.abs(h)
        a = a + torch.sqrt(torch.abs(h) + 1.0) + (torch.abs(h) + 0.5) ** 1.5
        a = a + torch.log(torch.exp(0.1 * h) + 2.0) + F.leaky_relu(h, 0.05)
        a = torch.where(h > 0.2, a, 0.5 * a) + torch.where(h <= -0.1, h, torch.zeros_like(h))
        y = self.lin2(a) * self.scale * 0.1                # (B, 6, 8)
        y = torch.index_select(y, 1, self.perm)            # permute positions
        att = torch.einsum("bid,bjd->bij", y, y) / 8.0      # (B, 6, 6)
        att = att + self.mix.sum(0)
        att = torch.tril(att) - torch.triu(att, diagonal=1) * 0.5
        att = F.log_softmax(att, dim=-1) + F.softmax(att, dim=1)
        z = torch.bmm(att, y)                               # (B, 6, 8)
        z0, z1 = z.chunk(2, dim=-1)
        z = torch.cat([z1 * 2.0, z0.transpose(1, 2).transpose(1, 2)], dim=-1)
        picked = torch.gather(z, 2, cols)                   # (B, 6, 1)
        rows = z.unbind(1)
        first = z[:, 0] + rows[-1] - z.select(1, 2)
        stats = z.mean(dim=(0, 2)) + 0.1 * z.var(dim=1).sum(-1).mean() + z.amax(-1).mean()
        pred = picked.squeeze(-1) + first.sum(-1, keepdim=True) * 0.1
        loss = F.mse_loss(pred, target) + 0.01 * stats.sum() + 0.01 * z.logsumexp(-1).mean()
        return loss


def dist_model(config):
    return Zoo()


def dist_batch(config, micro_batch, generator):
    idx = torch.randint(0, 10, (micro_batch, 6), generator=generator)
    cols = torch.randint(0, 8, (micro_batch, 6, 1), generator=generator)
    target = torch.randn(micro_batch, 6, generator=generator)
    mask = torch.rand(micro_batch, 6, generator=generator) < 0.8
    return idx, cols, target, mask


def dist_loss(model, idx, cols, target, mask):
    return model(idx, cols, target, mask)
