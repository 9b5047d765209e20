"""A Pearson-correlation metric written with NumPy is called on the raw model
output inside the training step. Calling .numpy() on a tensor that requires
grad raises "Can't call numpy() on Tensor that requires grad".
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


def pearson(pred, target):
    p = pred.squeeze(-1).numpy()  # <-- CUT
    t = target.squeeze(-1).numpy()
    return float(np.corrcoef(p, t)[0, 1])


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    pred = model(x)
    loss = F.mse_loss(pred, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    r = pearson(pred, y)
    return {"model": model, "loss": loss, "r": r}
