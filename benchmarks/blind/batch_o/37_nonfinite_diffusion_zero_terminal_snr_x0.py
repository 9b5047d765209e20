"""Diffusion trainer with a zero-terminal-SNR schedule (alpha_bar reaches 0 at
the last step) and an x0-space loss: x0 is recovered from the eps prediction by
dividing by sqrt(alpha_bar), which is 0 for t = T-1. Under detect_anomaly the
backward raises "returned nan values".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nonfinite_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class EpsNet(nn.Module):
    def __init__(self, d=4, T=10):
        super().__init__()
        self.t_emb = nn.Embedding(T, 16)
        self.net = nn.Sequential(nn.Linear(d + 16, 32), nn.SiLU(), nn.Linear(32, d))

    def forward(self, x, t):
        return self.net(torch.cat([x, self.t_emb(t)], 1))


class Diffusion:
    def __init__(self, T=10):
        self.T = T
        self.alpha_bar = torch.linspace(1.0, 0.0, T + 1)[1:]

    def x0_loss(self, model, x0):
        t = torch.arange(x0.shape[0]) % self.T
        ab = self.alpha_bar[t][:, None]
        eps = torch.randn_like(x0)
        x_t = ab.sqrt() * x0 + (1 - ab).sqrt() * eps
        eps_pred = model(x_t, t)
        x0_pred = (x_t - (1 - ab).sqrt() * eps_pred) / ab.sqrt()  # <-- CUT
        return F.mse_loss(x0_pred, x0)


def run():
    torch.manual_seed(0)
    model = EpsNet()
    diff = Diffusion()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    x0 = torch.randn(20, 4)
    with torch.autograd.detect_anomaly():
        loss = diff.x0_loss(model, x0)
        opt.zero_grad()
        loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
