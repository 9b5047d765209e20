"""Deep survival model with a Weibull likelihood for right-censored data. The
network predicts the scale; the shape k is a learnable scalar, but the loss helper
converts it to a Python float (`float(self.log_k.exp())`) so it can be clamped.
The scale network trains; log_k never gets a gradient.
"""
import torch
import torch.nn as nn

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.log_k"
EXPECT = "grad_none"


class WeibullSurvival(nn.Module):
    def __init__(self, d_in=6):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, 16), nn.ReLU(), nn.Linear(16, 1))
        self.log_k = nn.Parameter(torch.zeros(()))

    def forward(self, x):
        return self.net(x).squeeze(-1)

    def shape(self, k_min=0.1, k_max=10.0):
        k = float(self.log_k.exp())  # <-- CUT
        return min(max(k, k_min), k_max)


def weibull_nll(log_lam, k, t, event):
    lam = log_lam.exp()
    z = t / lam
    log_h = torch.log(torch.tensor(k)) - log_lam + (k - 1) * torch.log(z)
    cum_h = z ** k
    return -(event * log_h - cum_h).mean()


def run():
    torch.manual_seed(0)
    model = WeibullSurvival()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(32, 6)
    t = torch.rand(32) * 5 + 0.1
    event = (torch.rand(32) > 0.3).float()
    loss = weibull_nll(model(x), model.shape(), t, event)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
