"""A small transformer-style encoder keeps its pretrained token embeddings frozen
and wraps every block in checkpoint(..., use_reentrant=True). The block input
(frozen embedding output) does not require grad, so the blocks get no grad.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

CAUSE = "reentrant_checkpoint"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.blocks[0].ff1.weight"
EXPECT = "grad_none"


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.ff1 = nn.Linear(d, 2 * d)
        self.ff2 = nn.Linear(2 * d, d)

    def forward(self, h):
        return h + self.ff2(F.gelu(self.ff1(self.norm(h))))


class Encoder(nn.Module):
    def __init__(self, vocab=30, d=8):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.tok.weight.requires_grad_(False)
        self.blocks = nn.ModuleList([Block(d), Block(d)])
        self.cls = nn.Linear(d, 2)

    def forward(self, ids):
        h = self.tok(ids)
        for blk in self.blocks:
            h = checkpoint(blk, h, use_reentrant=True)  # <-- CUT
        return self.cls(h.mean(1))


def run():
    torch.manual_seed(0)
    model = Encoder()
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    ids = torch.randint(0, 30, (3, 7))
    y = torch.randint(0, 2, (3,))
    loss = F.cross_entropy(model(ids), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
