"""Control: LSTM forecaster whose inputs and targets are scaled with a numpy
MinMax scaler before becoming tensors (no graph to cut there). Predictions go
through .detach().numpy() and inverse_transform only for the MAE metric, and the
loss is logged with .item(). The LSTM's gradient is normal.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.lstm.weight_ih_l0"
EXPECT = "grad_ok"


class MinMaxScaler:
    def fit(self, x):
        self.lo, self.hi = x.min(), x.max()
        return self

    def transform(self, x):
        return (x - self.lo) / (self.hi - self.lo)

    def inverse_transform(self, x):
        return x * (self.hi - self.lo) + self.lo


class Forecaster(nn.Module):
    def __init__(self, hidden=16):
        super().__init__()
        self.lstm = nn.LSTM(1, hidden, batch_first=True)
        self.fc = nn.Linear(hidden, 1)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.fc(out[:, -1])


def run():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    raw = (50 + 10 * np.sin(np.arange(80) / 6) + rng.normal(0, 1, 80)).astype(np.float32)
    scaler = MinMaxScaler().fit(raw)
    s = scaler.transform(raw)
    xs = np.stack([s[i:i + 12] for i in range(40)])[..., None]
    ys = s[12:52, None]
    x, y = torch.from_numpy(xs), torch.from_numpy(ys)
    model = Forecaster()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    pred = model(x)
    loss = F.mse_loss(pred, y)  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    mae = np.abs(scaler.inverse_transform(pred.detach().numpy()) - scaler.inverse_transform(ys)).mean()
    history = {"loss": loss.item(), "mae": float(mae)}
    return {"model": model, "history": history}
