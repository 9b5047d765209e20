"""A learned stochastic-depth gate samples keep/drop with torch.bernoulli(p)
from a sigmoid of the gate logits. bernoulli's derivative is defined as zero,
so the gate logits' gradient is all zeros: they never learn.
"""
import torch
import torch.nn as nn

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.gate_logits"
EXPECT = "grad_zero"


class GatedBlocks(nn.Module):
    def __init__(self, d=6, n=3):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(d, d) for _ in range(n)])
        self.gate_logits = nn.Parameter(torch.zeros(n))

    def forward(self, x):
        keep = torch.bernoulli(torch.sigmoid(self.gate_logits))  # <-- CUT
        for i, blk in enumerate(self.blocks):
            x = x + keep[i] * torch.relu(blk(x))
        return x


def run():
    torch.manual_seed(0)
    model = GatedBlocks()
    x = torch.randn(4, 6)
    loss = model(x).pow(2).mean()
    loss.backward()
    return {"model": model, "loss": loss}
