"""Spiking network (LIF neurons, fast-sigmoid surrogate gradient) with a learnable
membrane decay per layer. The LIF layer clamps beta to [0, 1] with Python's
min/max after `self.beta.item()`, so beta becomes a constant. The weights train
through the surrogate; beta never gets a gradient.
"""
import torch
import torch.nn as nn

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "snn.lif1.beta"
EXPECT = "grad_none"


class FastSigmoidSpike(torch.autograd.Function):
    @staticmethod
    def forward(ctx, mem, slope):
        ctx.save_for_backward(mem)
        ctx.slope = slope
        return (mem > 0).float()

    @staticmethod
    def backward(ctx, grad_out):
        (mem,) = ctx.saved_tensors
        return grad_out / (ctx.slope * mem.abs() + 1.0) ** 2, None


class LIF(nn.Module):
    def __init__(self, beta=0.9, threshold=1.0, slope=25.0):
        super().__init__()
        self.beta = nn.Parameter(torch.tensor(beta))
        self.threshold = threshold
        self.slope = slope

    def forward(self, cur, mem):
        b = min(max(self.beta.item(), 0.0), 1.0)  # <-- CUT
        mem = b * mem + cur
        spk = FastSigmoidSpike.apply(mem - self.threshold, self.slope)
        mem = mem - spk * self.threshold
        return spk, mem


class SNN(nn.Module):
    def __init__(self, d_in=10, d_h=16, d_out=3):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_h)
        self.lif1 = LIF()
        self.fc2 = nn.Linear(d_h, d_out)
        self.lif2 = LIF()

    def forward(self, x_seq):
        mem1 = torch.zeros(x_seq.size(1), self.fc1.out_features)
        mem2 = torch.zeros(x_seq.size(1), self.fc2.out_features)
        counts = 0
        for x in x_seq:
            s1, mem1 = self.lif1(self.fc1(x), mem1)
            s2, mem2 = self.lif2(self.fc2(s1), mem2)
            counts = counts + s2
        return counts


def run():
    torch.manual_seed(0)
    snn = SNN()
    opt = torch.optim.Adam(snn.parameters(), lr=5e-3)
    x_seq = (torch.rand(12, 4, 10) < 0.4).float() * 2.0
    y = torch.randint(0, 3, (4,))
    counts = snn(x_seq)
    loss = nn.functional.cross_entropy(counts, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"snn": snn, "loss": loss}
