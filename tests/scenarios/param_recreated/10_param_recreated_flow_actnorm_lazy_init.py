"""Normalising flow with ActNorm data-dependent init: on the first batch the
layer replaces its placeholder loc/log_scale with new nn.Parameters built from
batch statistics. The optimizer was created before, so it holds the old
placeholders, which never receive a gradient; logdet uses torch.linalg.slogdet.
"""
import torch
import torch.nn as nn

CAUSE = "param_recreated"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "opt.param_groups[0]['params'][1]"
EXPECT = "grad_none"


class ActNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.loc = nn.Parameter(torch.zeros(d))
        self.log_scale = nn.Parameter(torch.zeros(d))
        self.initialized = False

    def forward(self, x):
        if not self.initialized:
            with torch.no_grad():
                mean, std = x.mean(0), x.std(0) + 1e-6
            self.loc = nn.Parameter(-mean)
            self.log_scale = nn.Parameter(-std.log())  # <-- CUT
            self.initialized = True
        return (x + self.loc) * self.log_scale.exp(), self.log_scale.sum().expand(x.shape[0])


class InvLinear(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.W = nn.Parameter(torch.linalg.qr(torch.randn(d, d))[0])

    def forward(self, x):
        sign, logabs = torch.linalg.slogdet(self.W)
        return x @ self.W.T, logabs.expand(x.shape[0])


class Flow(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.layers = nn.ModuleList([ActNorm(d), InvLinear(d)])

    def forward(self, x):
        logdet = torch.zeros(x.shape[0])
        for layer in self.layers:
            x, ld = layer(x)
            logdet = logdet + ld
        return x, logdet


def run():
    torch.manual_seed(0)
    d = 4
    flow = Flow(d)
    opt = torch.optim.Adam(flow.parameters(), lr=1e-3)
    x = torch.randn(64, d) * 3.0 + 1.0
    z, logdet = flow(x)
    log_pz = -0.5 * (z ** 2).sum(-1) - 0.5 * d * 1.8378770664093453
    loss = -(log_pz + logdet).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"flow": flow, "opt": opt, "loss": loss}
