"""PointNet segmentation with activation checkpointing on the shared per-point MLP
to save memory on large clouds: `checkpoint(self.mlp1, pts, use_reentrant=True)`.
The raw points do not require grad, so the reentrant checkpoint output has no
graph into mlp1; the later layers train and mlp1's .grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

CAUSE = "reentrant_checkpoint"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.mlp1[0].weight"
EXPECT = "grad_none"


class PointNetSeg(nn.Module):
    def __init__(self, n_cls=4):
        super().__init__()
        self.mlp1 = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 32), nn.ReLU())
        self.mlp2 = nn.Sequential(nn.Linear(32, 64), nn.ReLU())
        self.seg = nn.Sequential(nn.Linear(32 + 64, 32), nn.ReLU(), nn.Linear(32, n_cls))

    def forward(self, pts):
        local = checkpoint(self.mlp1, pts, use_reentrant=True)  # <-- CUT
        glob = self.mlp2(local).max(dim=1, keepdim=True).values.expand(-1, pts.size(1), -1)
        return self.seg(torch.cat([local, glob], -1))


def run():
    torch.manual_seed(0)
    model = PointNetSeg()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    pts = torch.randn(2, 64, 3)
    labels = torch.randint(0, 4, (2, 64))
    loss = F.cross_entropy(model(pts).reshape(-1, 4), labels.reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
