"""MaskPoint-style point-cloud pretraining runner wrapped in a DataParallel-like module. Each replica
returns its scalar loss and the gather step stacks them into a vector with one entry per device; the
runner then calls _loss.backward() on that vector without reducing it, and backward raises
"grad can be implicitly created only for scalar outputs".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "other:non_scalar_backward"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class PointEncoder(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(3, dim), nn.ReLU(), nn.Linear(dim, dim))
        self.disc = nn.Linear(dim * 2, 1)

    def forward(self, pts):
        # mask half the points, discriminate real vs. fake queries (MaskPoint objective)
        feat = self.mlp(pts).max(1).values
        real_q = self.mlp(pts[:, :8]).mean(1)
        fake_q = self.mlp(torch.randn_like(pts[:, :8])).mean(1)
        logits = torch.cat([self.disc(torch.cat([feat, real_q], -1)), self.disc(torch.cat([feat, fake_q], -1))])
        labels = torch.cat([torch.ones(len(pts), 1), torch.zeros(len(pts), 1)])
        return F.binary_cross_entropy_with_logits(logits, labels)


class DataParallelLike(nn.Module):
    def __init__(self, module, n_devices=2):
        super().__init__()
        self.module, self.n_devices = module, n_devices

    def forward(self, pts):
        outs = [self.module(chunk) for chunk in pts.chunk(self.n_devices)]
        return torch.stack(outs)  # gather of 0-dim outputs -> shape [n_devices]


def run_net(base_model, optimizer, points):
    base_model.train()
    _loss = base_model(points)  # <-- CUT
    optimizer.zero_grad()
    _loss.backward()
    optimizer.step()
    return _loss


def run():
    torch.manual_seed(0)
    base_model = DataParallelLike(PointEncoder(), n_devices=2)
    optimizer = torch.optim.AdamW(base_model.parameters(), lr=1e-3)
    points = torch.randn(4, 32, 3)
    _loss = run_net(base_model, optimizer, points)
    return {"base_model": base_model, "loss": _loss}
