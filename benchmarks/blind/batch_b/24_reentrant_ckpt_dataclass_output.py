"""Checkpointed block returning a dataclass-like object (pytorch/pytorch#124725): with
use_reentrant=True, tensors nested inside custom objects are not treated as
outputs that participate in autograd, so the checkpoint region gets no graph:
the block's params train only when use_reentrant=False. block.mlp.weight.grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

CAUSE = "reentrant_checkpoint"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.block.mlp.weight"
EXPECT = "grad_none"


class BlockOutput:
    """ModelOutput-like container (a dataclass in the report)."""

    def __init__(self, hidden_states, aux):
        self.hidden_states = hidden_states
        self.aux = aux


class Block(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.mlp = nn.Linear(d, d)

    def forward(self, h):
        out = h + F.gelu(self.mlp(h))
        return BlockOutput(hidden_states=out, aux=out.pow(2).mean())


class Model(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.embed = nn.Linear(8, d)
        self.block = Block(d)
        self.head = nn.Linear(d, 2)

    def forward(self, x):
        h = self.embed(x)
        out = checkpoint(self.block, h, use_reentrant=True)  # <-- CUT
        return self.head(out.hidden_states.mean(1))


def run():
    torch.manual_seed(0)
    model = Model()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x, y = torch.randn(4, 5, 8), torch.randint(0, 2, (4,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
