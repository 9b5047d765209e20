"""Time-series forecaster: a learnable smoothing conv, then sliding windows
with unfold. Each window is z-scored in numpy (copied from a pandas-era
preprocessing script) and turned back into a tensor, so the smoothing conv
never receives a gradient.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.smooth.weight"
EXPECT = "grad_none"


def window_zscore(windows):
    w = windows.detach().cpu().numpy()  # <-- CUT
    mu = w.mean(axis=-1, keepdims=True)
    sd = w.std(axis=-1, keepdims=True) + 1e-5
    return torch.from_numpy(((w - mu) / sd).astype(np.float32))


class Forecaster(nn.Module):
    def __init__(self, win):
        super().__init__()
        self.win = win
        self.smooth = nn.Conv1d(1, 1, 5, padding=2)
        self.head = nn.Linear(win, 1)

    def forward(self, series):
        s = self.smooth(series[:, None, :])[:, 0]
        windows = s.unfold(1, self.win, 1)
        windows = window_zscore(windows)
        return self.head(windows).squeeze(-1)


def run():
    torch.manual_seed(0)
    win = 8
    model = Forecaster(win)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    series = torch.randn(4, 40).cumsum(-1)
    pred = model(series[:, :-1])
    target = series[:, win:]
    loss = F.mse_loss(pred, target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
