"""Instance discrimination with a memory bank: the module computes
`feats @ self.memory.t()` and then, still inside forward, updates the rows of
the current samples with `self.memory.index_copy_(0, idx, new)` under no_grad.
matmul saved the bank for backward, so loss.backward() raises (version mismatch).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "encoder[0].weight"
EXPECT = "backward_error"


class MemoryBank(nn.Module):
    def __init__(self, n=64, d=16, t=0.07, m=0.5):
        super().__init__()
        self.t, self.m = t, m
        self.register_buffer("memory", F.normalize(torch.randn(n, d), dim=1))

    def forward(self, feats, idx):
        logits = feats @ self.memory.t() / self.t
        with torch.no_grad():
            new = F.normalize(self.m * self.memory[idx] + (1 - self.m) * feats, dim=1)
            self.memory.index_copy_(0, idx, new)  # <-- CUT
        return logits


def run():
    torch.manual_seed(0)
    encoder = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 16))
    bank = MemoryBank()
    opt = torch.optim.SGD(encoder.parameters(), lr=0.03, momentum=0.9)
    idx = torch.randperm(64)[:8]
    x = torch.randn(8, 20)
    feats = F.normalize(encoder(x), dim=1)
    logits = bank(feats, idx)
    loss = F.cross_entropy(logits, idx)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"encoder": encoder, "bank": bank, "opt": opt, "loss": loss}
