"""RealNVP affine coupling: the log-scale is bounded with tanh and then
multiplied in place by a learnable per-dim scale (s *= self.scale). tanh saved
its output for backward, so loss.backward() raises "modified by an inplace
operation".
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class AffineCoupling(nn.Module):
    def __init__(self, d=6, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d // 2, hidden), nn.ReLU(), nn.Linear(hidden, d))
        self.scale = nn.Parameter(torch.ones(d // 2))

    def forward(self, x):
        x1, x2 = x.chunk(2, dim=1)
        h = self.net(x1)
        s, t = h.chunk(2, dim=1)
        s = torch.tanh(s)
        s *= self.scale  # <-- CUT
        y2 = x2 * torch.exp(s) + t
        return torch.cat([x1, y2], 1), s.sum(1)


class RealNVP(nn.Module):
    def __init__(self, d=6, n=2):
        super().__init__()
        self.layers = nn.ModuleList([AffineCoupling(d) for _ in range(n)])

    def forward(self, x):
        logdet = 0.0
        for layer in self.layers:
            x, ld = layer(x)
            x = x.flip(1)
            logdet = logdet + ld
        return x, logdet


def run():
    torch.manual_seed(0)
    flow = RealNVP()
    opt = torch.optim.Adam(flow.parameters(), lr=1e-3)
    x = torch.randn(32, 6)
    z, logdet = flow(x)
    nll = 0.5 * (z ** 2).sum(1) + 0.5 * 6 * np.log(2 * np.pi) - logdet
    loss = nll.mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"flow": flow, "loss": loss}
