"""Time-series forecaster with a hand-written RevIN (reversible instance normalisation)
layer. Its learnable affine weight is read through .data in both normalise and denormalise
"to keep the statistics path clean", so the forecaster trains but model.revin.affine_weight.grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_attr"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.revin.affine_weight"
EXPECT = "grad_none"


class RevIN(nn.Module):
    def __init__(self, n_vars, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.affine_weight = nn.Parameter(torch.ones(n_vars))
        self.affine_bias = nn.Parameter(torch.zeros(n_vars))

    def normalize(self, x):
        self.mean = x.mean(1, keepdim=True).detach()
        self.std = torch.sqrt(x.var(1, keepdim=True, unbiased=False) + self.eps).detach()
        w = self.affine_weight.data  # <-- CUT
        return (x - self.mean) / self.std * w + self.affine_bias

    def denormalize(self, y):
        w = self.affine_weight.data
        return (y - self.affine_bias) / (w + self.eps * self.eps) * self.std + self.mean


class LinearForecaster(nn.Module):
    def __init__(self, lookback=24, horizon=6, n_vars=3):
        super().__init__()
        self.revin = RevIN(n_vars)
        self.proj = nn.Linear(lookback, horizon)

    def forward(self, x):
        z = self.revin.normalize(x)
        y = self.proj(z.transpose(1, 2)).transpose(1, 2)
        return self.revin.denormalize(y)


def run():
    torch.manual_seed(0)
    t = torch.arange(0, 30, dtype=torch.float32)
    series = torch.stack([torch.sin(t / 3 + k) * (k + 1) + 0.1 * torch.randn(30) for k in range(3)], -1)
    x = series[:24].unsqueeze(0).repeat(8, 1, 1) + 0.05 * torch.randn(8, 24, 3)
    y = series[24:].unsqueeze(0).repeat(8, 1, 1)
    model = LinearForecaster()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss = F.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
