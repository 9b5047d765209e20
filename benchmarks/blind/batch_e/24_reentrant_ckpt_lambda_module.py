"""Activation checkpointing of the first block (pytorch/pytorch#7617): the model runs
`checkpoint(lambda _: m(_), x)` on its input to save memory. With the reentrant
implementation, when no input requires grad the output does not require grad either,
even though m has trainable weights, so the first block never gets a gradient while
the later blocks do.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

CAUSE = "reentrant_checkpoint"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.blocks[0].weight"
EXPECT = "grad_none"


class CheckpointedMLP(nn.Module):
    def __init__(self, d_in=4, d_h=16, n_cls=3, use_checkpoint=True):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(d_in, d_h), nn.Linear(d_h, d_h)])
        self.out = nn.Linear(d_h, n_cls)
        self.use_checkpoint = use_checkpoint

    def forward(self, x):
        m = self.blocks[0]
        if self.use_checkpoint:
            h = checkpoint(lambda _: m(_), x, use_reentrant=True)  # <-- CUT
        else:
            h = m(x)
        h = torch.tanh(h)
        h = torch.tanh(self.blocks[1](h))
        return self.out(h)


def run():
    torch.manual_seed(0)
    model = CheckpointedMLP()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(10, 4)
    y = torch.randint(0, 3, (10,))
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
