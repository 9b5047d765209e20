"""Transformer forecaster for long sequences that wraps every encoder block, including the
first one that owns the input projection, in checkpoint(..., use_reentrant=True). The raw series
does not require grad, so the first block's parameters get no grad: model.blocks[0].proj.weight.grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

CAUSE = "reentrant_checkpoint"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.blocks[0].proj.weight"
EXPECT = "grad_none"


class Block(nn.Module):
    def __init__(self, d_in, d, n_head=2):
        super().__init__()
        self.proj = nn.Linear(d_in, d) if d_in != d else nn.Identity()
        self.attn = nn.MultiheadAttention(d, n_head, batch_first=True)
        self.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))
        self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)

    def forward(self, x):
        x = self.proj(x)
        h = self.n1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.ff(self.n2(x))


class Forecaster(nn.Module):
    def __init__(self, n_vars=2, d=16, depth=2, horizon=4, grad_ckpt=True):
        super().__init__()
        self.blocks = nn.ModuleList([Block(n_vars if i == 0 else d, d) for i in range(depth)])
        self.head = nn.Linear(d, horizon * n_vars)
        self.grad_ckpt, self.horizon, self.n_vars = grad_ckpt, horizon, n_vars

    def forward(self, x):
        for blk in self.blocks:
            if self.grad_ckpt and self.training:
                x = checkpoint(blk, x, use_reentrant=True)  # <-- CUT
            else:
                x = blk(x)
        return self.head(x[:, -1]).view(-1, self.horizon, self.n_vars)


def run():
    torch.manual_seed(0)
    model = Forecaster()
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x, y = torch.randn(4, 24, 2), torch.randn(4, 4, 2)
    loss = F.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
