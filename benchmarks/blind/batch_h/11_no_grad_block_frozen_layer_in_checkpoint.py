"""Adapter fine-tuning with gradient checkpointing: the pretrained FFN inside each
checkpointed block is "frozen" by running it under torch.no_grad() (instead of
requires_grad_(False)). During backward the checkpoint recomputes the block, finds no
output that requires grad and raises, as in the forum thread on checkpoint + no_grad.
Thread: discuss.pytorch.org/t/training-with-gradient-checkpoints-...-reduce-performance-of-model/78102
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class FrozenFFNBlock(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.ffn = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, h):
        with torch.no_grad():
            h = h + self.ffn(self.norm(h))  # <-- CUT
        return h


class AdapterModel(nn.Module):
    def __init__(self, d=16, n_blocks=2, n_cls=3):
        super().__init__()
        self.adapter = nn.Linear(d, d)
        self.blocks = nn.ModuleList([FrozenFFNBlock(d) for _ in range(n_blocks)])
        self.head = nn.Linear(d, n_cls)
        self.use_checkpoint = True

    def forward(self, x):
        h = self.adapter(x)
        for blk in self.blocks:
            h = checkpoint(blk, h, use_reentrant=True) if self.use_checkpoint else blk(h)
        return self.head(h.mean(1))


def run():
    torch.manual_seed(0)
    model = AdapterModel()
    opt = torch.optim.AdamW([p for n, p in model.named_parameters() if "blocks" not in n], lr=1e-3)
    x = torch.randn(2, 5, 16)
    y = torch.tensor([1, 2])
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
