"""Curriculum learning: per-sample losses are ranked in numpy (np.argsort) and the
easiest half is kept with weights from a pacing function; the weighted mean is
built in numpy and rewrapped with torch.tensor(..., requires_grad=True). The
backward runs, but the encoder never receives a gradient."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.encoder.weight"
EXPECT = "grad_none"


class Curriculum:
    def __init__(self, start_frac=0.5):
        self.frac = start_frac

    def weighted_loss(self, per_sample):
        arr = per_sample.detach().numpy()  # <-- CUT
        order = np.argsort(arr)
        keep = order[: max(1, int(len(arr) * self.frac))]
        w = np.linspace(1.0, 0.5, len(keep))
        value = float(np.sum(arr[keep] * w) / np.sum(w))
        return torch.tensor(value, requires_grad=True)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(7, 14)
        self.out = nn.Linear(14, 3)

    def forward(self, x):
        return self.out(F.gelu(self.encoder(x)))


def run():
    torch.manual_seed(0)
    model = Model()
    cur = Curriculum()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(20, 7), torch.randint(0, 3, (20,))
    per_sample = F.cross_entropy(model(x), y, reduction="none")
    loss = cur.weighted_loss(per_sample)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss, "per_sample": per_sample}
