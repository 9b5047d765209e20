"""Transformer-ish encoder: the forward loops over `self.blocks[:-1]` because the last
block used to be applied separately to the CLS token; that line was removed in a
refactor, so the last block never runs and gets no gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.blocks[3].mlp[0].weight"
EXPECT = "grad_none"


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

    def forward(self, x):
        return x + self.mlp(self.norm(x))


class Encoder(nn.Module):
    def __init__(self, d=16, depth=4, n_cls=5):
        super().__init__()
        self.embed = nn.Linear(8, d)
        self.blocks = nn.ModuleList(Block(d) for _ in range(depth))
        self.head = nn.Linear(d, n_cls)

    def forward(self, x):
        h = self.embed(x)
        for blk in self.blocks[:-1]:  # <-- CUT
            h = blk(h)
        return self.head(h.mean(1))


def run():
    torch.manual_seed(0)
    model = Encoder()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x, y = torch.randn(4, 7, 8), torch.randint(0, 5, (4,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
