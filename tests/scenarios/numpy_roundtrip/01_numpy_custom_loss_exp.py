"""A custom weighted loss is written with NumPy (np.exp of the predictions) and
wrapped back with torch.from_numpy. The resulting loss has no grad_fn, so
loss.backward() raises "element 0 of tensors does not require grad".
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


def poisson_nll(pred, target):
    p = pred.detach().numpy()  # <-- CUT
    t = target.numpy()
    loss = np.mean(np.exp(p) - t * p)
    return torch.from_numpy(np.asarray(loss))


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 1))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(12, 5)
    counts = torch.poisson(torch.full((12, 1), 3.0))
    loss = poisson_nll(model(x), counts)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
