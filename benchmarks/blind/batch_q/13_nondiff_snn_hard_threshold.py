"""Spiking MLP without a surrogate: the hidden LIF layer emits spikes with
`(mem > threshold).float()`. The readout integrates the output membrane
potential, so fc2 still trains, but the comparison cuts every path into fc1.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "snn.fc1.weight"
EXPECT = "grad_none"


class LIFLayer(nn.Module):
    def __init__(self, beta=0.9, threshold=1.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, cur, mem):
        mem = self.beta * mem + cur
        spk = (mem > self.threshold).float()  # <-- CUT
        mem = mem * (1 - spk)
        return spk, mem


class SpikingMLP(nn.Module):
    def __init__(self, d_in=12, d_h=20, n_cls=4):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_h)
        self.lif1 = LIFLayer()
        self.fc2 = nn.Linear(d_h, n_cls)
        self.beta_out = 0.95

    def forward(self, x_seq):
        mem1 = torch.zeros(x_seq.size(1), self.fc1.out_features)
        mem_out = torch.zeros(x_seq.size(1), self.fc2.out_features)
        for x in x_seq:
            spk1, mem1 = self.lif1(self.fc1(x), mem1)
            mem_out = self.beta_out * mem_out + self.fc2(spk1)
        return mem_out


def run():
    torch.manual_seed(0)
    snn = SpikingMLP()
    opt = torch.optim.Adam(snn.parameters(), lr=1e-3)
    x_seq = (torch.rand(10, 8, 12) < 0.5).float() * 1.5
    y = torch.randint(0, 4, (8,))
    loss = F.cross_entropy(snn(x_seq), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"snn": snn, "loss": loss}
