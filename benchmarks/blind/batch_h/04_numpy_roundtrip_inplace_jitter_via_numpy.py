"""Point-cloud encoder: the user wanted to jitter the predicted offsets in place without autograd
noticing and went through numpy (as the forum thread hints, numpy() and from_numpy()
share memory and raise nothing). The jitter is applied to a numpy view and the
result comes back with torch.from_numpy, so the offset head is cut from the loss.
Thread: discuss.pytorch.org/t/inplace-operation-changes-is-leaf-attribute/120297
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.offset_head.weight"
EXPECT = "grad_none"


class PointEncoder(nn.Module):
    def __init__(self, k=8):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(3, 32), nn.ReLU(), nn.Linear(32, 32))
        self.offset_head = nn.Linear(32, 3)
        self.cls_head = nn.Linear(32, k)

    def forward(self, pts):
        f = self.mlp(pts)
        return f, self.offset_head(f), self.cls_head(f.max(dim=1).values)


class Jitter:
    def __init__(self, sigma, rng):
        self.sigma, self.rng = sigma, rng

    def __call__(self, offsets):
        arr = offsets.detach().cpu().numpy()  # <-- CUT
        arr += self.sigma * self.rng.standard_normal(arr.shape).astype(np.float32)
        return torch.from_numpy(arr)


def run():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    model = PointEncoder()
    jitter = Jitter(0.01, rng)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    pts = torch.randn(2, 64, 3)
    labels = torch.tensor([1, 5])
    target_off = torch.zeros(2, 64, 3)
    _, off, logits = model(pts)
    off = jitter(off)
    loss = F.cross_entropy(logits, labels) + F.smooth_l1_loss(pts + off, pts + target_off)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
