"""Stock-direction forecaster: an LSTM predicts next-day returns and is trained with
a custom "directional" loss that compares torch.sign(pred) with torch.sign(target),
because the user cares only about the direction. sign() has a zero derivative
everywhere, so the LSTM's weights get a gradient tensor that is all zeros.
"""
import torch
import torch.nn as nn

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.lstm.weight_ih_l0"
EXPECT = "grad_zero"


class ReturnForecaster(nn.Module):
    def __init__(self, n_feat=4, hidden=16):
        super().__init__()
        self.lstm = nn.LSTM(n_feat, hidden, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.head(out[:, -1]).squeeze(-1)


class DirectionalLoss(nn.Module):
    def forward(self, pred, target):
        agree = torch.sign(pred) * torch.sign(target)  # <-- CUT
        return (1.0 - agree).mean() / 2.0


def make_windows(series, window=10):
    xs = torch.stack([series[i:i + window] for i in range(len(series) - window)])
    ys = series[window:, 0]
    return xs, ys


def run():
    torch.manual_seed(0)
    series = torch.randn(40, 4) * 0.01
    x, y = make_windows(series)
    model = ReturnForecaster()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = DirectionalLoss()
    loss = criterion(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
