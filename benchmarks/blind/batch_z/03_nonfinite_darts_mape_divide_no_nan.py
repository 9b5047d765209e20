"""darts PR#845 MapeLoss: `_divide_no_nan(a, b)` computes a / b and then zeroes the
inf/nan entries in place. The loss looks finite, but where the target is 0 the
backward of the division is 0 / 0 = nan, so the N-BEATS-style block weights get NaN
gradients. The `.item()` calls are only epoch logging.
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "nonfinite_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.blocks[0].fc.weight"
EXPECT = "grad_nonfinite"


def _divide_no_nan(a, b):
    result = a / b  # <-- CUT
    result[result != result] = 0.0
    result[result == np.inf] = 0.0
    result[result == -np.inf] = 0.0
    return result


class MapeLoss(nn.Module):
    def forward(self, inpt, tgt):
        return torch.mean(torch.abs(_divide_no_nan(tgt - inpt, tgt)))


class Block(nn.Module):
    def __init__(self, in_len, out_len, width=32):
        super().__init__()
        self.fc = nn.Linear(in_len, width)
        self.backcast = nn.Linear(width, in_len)
        self.forecast = nn.Linear(width, out_len)

    def forward(self, x):
        h = torch.relu(self.fc(x))
        return self.backcast(h), self.forecast(h)


class NBeatsLike(nn.Module):
    def __init__(self, in_len=12, out_len=4, n_blocks=2):
        super().__init__()
        self.blocks = nn.ModuleList([Block(in_len, out_len) for _ in range(n_blocks)])

    def forward(self, x):
        forecast = 0
        for block in self.blocks:
            back, fore = block(x)
            x = x - back
            forecast = forecast + fore
        return forecast


def run():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    sales = rng.poisson(1.0, size=(8, 16)).astype(np.float32)  # intermittent demand, many zeros
    x = torch.from_numpy(sales[:, :12])
    y = torch.from_numpy(sales[:, 12:])
    model = NBeatsLike()
    criterion = MapeLoss()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    history = []
    loss = criterion(model(x), y)
    opt.zero_grad()
    loss.backward()
    history.append(loss.item())
    val_mape = criterion(model(x), y).item()
    return {"model": model, "loss": loss, "history": history, "val_mape": val_mape}
