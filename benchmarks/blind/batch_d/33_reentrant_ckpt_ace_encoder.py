"""Conditional SFNO with activation checkpointing: each checkpointed segment is
called with `checkpoint(fn, x)` and no use_reentrant argument (here spelled out
as the old default, use_reentrant=True). The first segment contains the input
encoder and its input is data, so the reentrant output has no grad_fn and the
encoder parameters stay at grad=None (ai2cm/ace#1493).
"""
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

CAUSE = "reentrant_checkpoint"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.encoder[0].weight"
EXPECT = "grad_none"


class SphericalBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.filter = nn.Conv2d(c, c, 1)
        self.mlp = nn.Sequential(nn.Conv2d(c, 2 * c, 1), nn.GELU(), nn.Conv2d(2 * c, c, 1))

    def forward(self, x):
        return x + self.mlp(self.filter(x))


class ConditionalSFNO(nn.Module):
    def __init__(self, c_in=3, c=8, n_blocks=2, checkpointing=1):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(c_in, c, 1), nn.GELU(), nn.Conv2d(c, c, 1))
        self.blocks = nn.ModuleList([SphericalBlock(c) for _ in range(n_blocks)])
        self.decoder = nn.Conv2d(c, c_in, 1)
        self.checkpointing = checkpointing

    def _encode(self, x):
        return self.blocks[0](self.encoder(x))

    def forward(self, x):
        if self.checkpointing >= 1:
            x = checkpoint(self._encode, x, use_reentrant=True)  # <-- CUT
        else:
            x = self._encode(x)
        for blk in self.blocks[1:]:
            x = blk(x)
        return self.decoder(x)


def run():
    torch.manual_seed(0)
    model = ConditionalSFNO()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    state = torch.randn(2, 3, 6, 12)
    target = torch.randn(2, 3, 6, 12)
    loss = ((model(state) - target) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "loss": loss}
