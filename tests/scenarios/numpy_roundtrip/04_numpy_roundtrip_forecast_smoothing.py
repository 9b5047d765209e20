"""Time-series forecaster: predictions are smoothed with a moving average written
in NumPy (np.convolve) before the loss, because "torch has no convolve". The
smoothed series comes back through torch.from_numpy, so the GRU and the output
layer get no gradient; only the raw-prediction regularizer trains the head bias.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.rnn.weight_ih_l0"
EXPECT = "grad_none"


class Forecaster(nn.Module):
    def __init__(self, hidden=12, horizon=10):
        super().__init__()
        self.rnn = nn.GRU(1, hidden, batch_first=True)
        self.out = nn.Linear(hidden, horizon)
        self.bias = nn.Parameter(torch.zeros(horizon))

    def forward(self, seq):
        _, h = self.rnn(seq)
        return self.out(h[-1]), self.bias


def smooth(series, k=3):
    kernel = np.ones(k) / k
    arr = series.detach().cpu().numpy()  # <-- CUT
    out = np.stack([np.convolve(row, kernel, mode="same") for row in arr])
    return torch.from_numpy(out).float()


def run():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    model = Forecaster()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    seq = torch.from_numpy(rng.standard_normal((4, 20, 1))).float()
    target = torch.from_numpy(rng.standard_normal((4, 10))).float()
    pred, bias = model(seq)
    loss = F.mse_loss(smooth(pred) + bias, target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
