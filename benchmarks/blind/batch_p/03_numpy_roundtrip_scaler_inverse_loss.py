"""Univariate forecaster whose loss is computed in original units: the trainer
passes predictions through the sklearn-style MinMaxScaler (numpy) to undo the
scaling, then wraps the result back with torch.from_numpy. The loss has no graph,
so loss.backward() raises.
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class MinMaxScaler:
    def fit(self, x):
        self.min_, self.max_ = x.min(axis=0), x.max(axis=0)
        return self

    def transform(self, x):
        return (x - self.min_) / (self.max_ - self.min_)

    def inverse_transform(self, x):
        return x * (self.max_ - self.min_) + self.min_


class LSTMRegressor(nn.Module):
    def __init__(self, hidden=16):
        super().__init__()
        self.lstm = nn.LSTM(1, hidden, batch_first=True)
        self.fc = nn.Linear(hidden, 1)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.fc(out[:, -1])


def make_windows(series, w):
    xs = np.stack([series[i:i + w] for i in range(len(series) - w)])
    ys = series[w:]
    return xs[..., None], ys[:, None]


def run():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    raw = (100 + 20 * np.sin(np.arange(60) / 5) + rng.normal(0, 2, 60)).astype(np.float32)[:, None]
    scaler = MinMaxScaler().fit(raw)
    scaled = scaler.transform(raw)[:, 0]
    xs, ys = make_windows(scaled, 10)
    x, y_raw = torch.from_numpy(xs[:16]), torch.from_numpy(scaler.inverse_transform(ys[:16]))
    model = LSTMRegressor()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    pred = model(x)
    pred_np = scaler.inverse_transform(pred.detach().cpu().numpy())  # <-- CUT
    pred_raw = torch.from_numpy(pred_np.astype(np.float32))
    loss = torch.mean((pred_raw - y_raw) ** 2)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
