"""Classifier fine-tuned with the token embedding frozen on purpose and each block
under checkpoint(block, h, use_reentrant=True). The first block's input does not
require grad, so the reentrant checkpoint output has no graph and the blocks never
train: model.blocks[0].fc1.weight.grad is None (the head trains).
Thread: SO, "None of the inputs have requires_grad=True" with checkpoint (recalled).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

CAUSE = "reentrant_checkpoint"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.blocks[0].fc1.weight"
EXPECT = "grad_none"

CFG = {"vocab": 40, "d": 16, "n_blocks": 2, "grad_ckpt": True, "freeze_embeddings": True}


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 2 * d)
        self.fc2 = nn.Linear(2 * d, d)

    def forward(self, h):
        return h + self.fc2(F.gelu(self.fc1(self.norm(h))))


class Classifier(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg["vocab"], cfg["d"])
        self.blocks = nn.ModuleList(Block(cfg["d"]) for _ in range(cfg["n_blocks"]))
        self.head = nn.Linear(cfg["d"], 2)

    def forward(self, tokens):
        h = self.embed(tokens)
        for block in self.blocks:
            if self.cfg["grad_ckpt"] and self.training:
                h = checkpoint(block, h, use_reentrant=True)  # <-- CUT
            else:
                h = block(h)
        return self.head(h.mean(1))


def run():
    torch.manual_seed(0)
    model = Classifier(CFG)
    if CFG["freeze_embeddings"]:
        model.embed.weight.requires_grad_(False)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    tokens = torch.randint(0, CFG["vocab"], (4, 7))
    y = torch.randint(0, 2, (4,))
    loss = F.cross_entropy(model(tokens), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
