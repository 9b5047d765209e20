"""Normalizing flow (RealNVP-style couplings + a final ActNorm): the final
normalization is called without assigning its result, so neither its output
nor its log-determinant reaches the NLL. Couplings train; the ActNorm's
log_scale grad is None.
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "flow.final_norm.log_scale"
EXPECT = "grad_none"


class ActNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(d))
        self.log_scale = nn.Parameter(torch.zeros(d))

    def forward(self, x):
        return (x + self.bias) * self.log_scale.exp(), self.log_scale.sum().expand(x.shape[0])


class Coupling(nn.Module):
    def __init__(self, d, flip):
        super().__init__()
        self.flip = flip
        self.net = nn.Sequential(nn.Linear(d // 2, 32), nn.ReLU(), nn.Linear(32, d))

    def forward(self, x):
        a, b = x.chunk(2, 1)
        if self.flip:
            a, b = b, a
        s, t = self.net(a).chunk(2, 1)
        s = torch.tanh(s)
        b = b * s.exp() + t
        out = torch.cat([b, a], 1) if self.flip else torch.cat([a, b], 1)
        return out, s.sum(1)


class Flow(nn.Module):
    def __init__(self, d=4, n=4):
        super().__init__()
        self.couplings = nn.ModuleList([Coupling(d, i % 2 == 1) for i in range(n)])
        self.final_norm = ActNorm(d)

    def forward(self, x):
        logdet = torch.zeros(x.shape[0])
        for c in self.couplings:
            x, ld = c(x)
            logdet = logdet + ld
        self.final_norm(x)  # <-- CUT
        return x, logdet


def run():
    torch.manual_seed(0)
    flow = Flow()
    opt = torch.optim.Adam(flow.parameters(), lr=1e-3)
    x = torch.randn(64, 4) * torch.tensor([1.0, 2.0, 0.5, 1.5])
    z, logdet = flow(x)
    log_pz = -0.5 * (z ** 2).sum(1) - 0.5 * z.shape[1] * np.log(2 * np.pi)
    loss = -(log_pz + logdet).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"flow": flow, "loss": loss}
