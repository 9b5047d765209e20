"""Regression model whose loss is a sample-weighted error computed in numpy (the
user converted the predictions with .detach().numpy() after the "can't call numpy()
on Tensor that requires grad" error) and turned back into a tensor with
torch.from_numpy(...).requires_grad_(). backward() runs; fc1 gets no grad.
Thread: SO "Pytorch tensor to numpy array" (answer on .detach().numpy()).
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.fc1.weight"
EXPECT = "grad_none"


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 24)
        self.fc2 = nn.Linear(24, 1)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x))).squeeze(-1)


def weighted_mape(pred, target, weights):
    p = pred.detach().numpy()  # <-- CUT
    t = target.numpy()
    err = np.abs(p - t) / (np.abs(t) + 1.0)
    return float((weights * err).sum() / weights.sum())


def run():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    model = Regressor()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(40, 6)
    y = torch.randn(40)
    w = rng.uniform(0.5, 2.0, size=40)
    pred = model(x)
    loss_np = np.array(weighted_mape(pred, y, w), dtype=np.float32)
    loss = torch.from_numpy(loss_np).requires_grad_()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss, "pred": pred}
