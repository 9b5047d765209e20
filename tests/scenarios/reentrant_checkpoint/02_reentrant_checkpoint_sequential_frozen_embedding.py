"""Memory-saving fine-tune on top of a frozen embedding: the blocks run through
`checkpoint_sequential(self.blocks, 2, h, use_reentrant=True)`. h does not
require grad, so the first (checkpointed) segment returns a tensor without
history: blocks 0-1 get no gradient while the last segment still trains.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint_sequential

CAUSE = "reentrant_checkpoint"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.blocks[0][0].weight"
EXPECT = "grad_none"


class Encoder(nn.Module):
    def __init__(self, vocab=40, d=16, n=4):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.emb.weight.requires_grad_(False)
        self.blocks = nn.Sequential(*[nn.Sequential(nn.Linear(d, d), nn.GELU()) for _ in range(n)])
        self.head = nn.Linear(d, 2)

    def forward(self, tokens):
        h = self.emb(tokens)
        h = checkpoint_sequential(self.blocks, 2, h, use_reentrant=True)  # <-- CUT
        return self.head(h.mean(1))


def run():
    torch.manual_seed(0)
    model = Encoder()
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    tokens, y = torch.randint(0, 40, (4, 7)), torch.randint(0, 2, (4,))
    loss = F.cross_entropy(model(tokens), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
