"""Multi-step MLP forecaster (lag-window regressor) trained on its own predictions (recursive forecasting): each
prediction is written in place into a preallocated buffer (buf[:, L + k] = pred) whose slice views
are the input windows the first Linear saved; loss.backward() raises "modified by an inplace operation".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class LagForecaster(nn.Module):
    def __init__(self, lookback=30, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(lookback, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, window):
        return self.net(window).squeeze(-1)


def recursive_forecast(model, history, horizon):
    B, L = history.shape
    buf = torch.zeros(B, L + horizon)
    buf[:, :L] = history
    preds = []
    for k in range(horizon):
        window = buf[:, k:k + L]
        pred = model(window)
        preds.append(pred)
        buf[:, L + k] = pred  # <-- CUT
    return torch.stack(preds, 1)


def run():
    torch.manual_seed(0)
    t = torch.linspace(0, 12, 40)
    series = torch.sin(t).unsqueeze(0) + 0.05 * torch.randn(8, 40)
    history, target = series[:, :30], series[:, 30:36]
    model = LagForecaster()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    preds = recursive_forecast(model, history, horizon=6)
    loss = F.mse_loss(preds, target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
