"""Control: every block runs under `checkpoint(blk, h, use_reentrant=False)` on
top of a frozen embedding whose output does not require grad. The
non-reentrant implementation still records the block parameters, so every
block trains; the frozen embedding is intended.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.blocks[0][0].weight"
EXPECT = "grad_ok"


class Encoder(nn.Module):
    def __init__(self, vocab=40, d=16, n=3):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.emb.weight.requires_grad_(False)
        self.blocks = nn.ModuleList(nn.Sequential(nn.Linear(d, d), nn.GELU()) for _ in range(n))
        self.head = nn.Linear(d, 2)

    def forward(self, tokens):
        h = self.emb(tokens)
        for blk in self.blocks:
            h = checkpoint(blk, h, use_reentrant=False)
        return self.head(h.mean(1))


def run():
    torch.manual_seed(0)
    model = Encoder()
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    tokens, y = torch.randint(0, 40, (4, 7)), torch.randint(0, 2, (4,))
    loss = F.cross_entropy(model(tokens), y)  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
