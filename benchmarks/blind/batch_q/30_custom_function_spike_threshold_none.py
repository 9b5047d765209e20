"""Spiking layer with a learnable firing threshold and a custom surrogate-gradient
Function `Spike.apply(mem, thr)`. Its backward computes the surrogate for the
membrane but returns None for the threshold input, so the weights train and the
threshold never gets a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "custom_function"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "snn.lif.threshold"
EXPECT = "grad_none"


class Spike(torch.autograd.Function):
    @staticmethod
    def forward(ctx, mem, thr):
        ctx.save_for_backward(mem, thr)
        return (mem >= thr).float()

    @staticmethod
    def backward(ctx, grad_out):
        mem, thr = ctx.saved_tensors
        sg = 1.0 / (1.0 + (3.14159 * (mem - thr)) ** 2)
        return grad_out * sg, None  # <-- CUT


class AdaptiveLIF(nn.Module):
    def __init__(self, n, beta=0.8):
        super().__init__()
        self.threshold = nn.Parameter(torch.ones(n))
        self.beta = beta

    def forward(self, cur, mem):
        mem = self.beta * mem + cur
        spk = Spike.apply(mem, self.threshold)
        return spk, mem - spk * self.threshold.detach()


class SNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 12)
        self.lif = AdaptiveLIF(12)
        self.readout = nn.Linear(12, 3)

    def forward(self, x_seq):
        mem = torch.zeros(x_seq.size(1), 12)
        rate = 0
        for x in x_seq:
            spk, mem = self.lif(self.fc(x), mem)
            rate = rate + spk / x_seq.size(0)
        return self.readout(rate)


def run():
    torch.manual_seed(0)
    snn = SNN()
    opt = torch.optim.Adam(snn.parameters(), lr=1e-3)
    x_seq = (torch.rand(8, 4, 8) < 0.5).float() * 2
    loss = F.cross_entropy(snn(x_seq), torch.tensor([0, 1, 2, 0]))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"snn": snn, "loss": loss}
