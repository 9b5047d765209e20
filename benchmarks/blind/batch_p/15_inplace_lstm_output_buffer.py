"""Autoregressive LSTM-cell forecaster that writes each prediction into a
preallocated outputs tensor and feeds outputs[:, t-1] back in as the next input.
The slice assignment bumps the version of the buffer whose earlier slices were
saved by the Linear layers, so backward raises an in-place modification error.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class AutoRegressiveForecaster(nn.Module):
    def __init__(self, hidden=16, horizon=5):
        super().__init__()
        self.cell = nn.LSTMCell(1, hidden)
        self.in_proj = nn.Linear(1, 1)
        self.out = nn.Linear(hidden, 1)
        self.hidden, self.horizon = hidden, horizon

    def forward(self, history):
        B = history.shape[0]
        h = torch.zeros(B, self.hidden)
        c = torch.zeros(B, self.hidden)
        for t in range(history.shape[1]):
            h, c = self.cell(history[:, t], (h, c))
        outputs = torch.zeros(B, self.horizon, 1)
        x = history[:, -1]
        for t in range(self.horizon):
            if t > 0:
                x = self.in_proj(outputs[:, t - 1])
            h, c = self.cell(x, (h, c))
            outputs[:, t] = self.out(h)  # <-- CUT
        return outputs


def run():
    torch.manual_seed(0)
    model = AutoRegressiveForecaster()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    series = torch.sin(torch.linspace(0, 8, 20))[None, :, None].repeat(4, 1, 1)
    pred = model(series[:, :15])
    loss = F.mse_loss(pred, series[:, 15:])
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
