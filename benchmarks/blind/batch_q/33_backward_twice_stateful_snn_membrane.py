"""Stateful spiking network for streaming input: the LIF membrane potential is kept
on the module between chunks (`self.mem = mem`) so the neurons do not reset.
The stored membrane still carries the previous chunk's graph, so the second
chunk's backward raises "Trying to backward through the graph a second time".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "backward_twice"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class Surrogate(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return (x > 0).float()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g / (1 + 10 * x.abs()) ** 2


class StreamingLIF(nn.Module):
    def __init__(self, d_in=6, d_h=10, d_out=2, beta=0.9):
        super().__init__()
        self.fc = nn.Linear(d_in, d_h)
        self.out = nn.Linear(d_h, d_out)
        self.beta = beta
        self.mem = None

    def forward(self, chunk):
        mem = self.mem if self.mem is not None else torch.zeros(chunk.size(1), self.fc.out_features)
        rates = 0
        for x in chunk:
            mem = self.beta * mem + self.fc(x)
            spk = Surrogate.apply(mem - 1.0)
            mem = mem - spk
            rates = rates + spk
        self.mem = mem  # <-- CUT
        return self.out(rates / chunk.size(0))


def run():
    torch.manual_seed(0)
    model = StreamingLIF()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    stream = (torch.rand(15, 3, 6) < 0.5).float() * 1.5
    y = torch.tensor([0, 1, 0])
    for chunk in stream.split(5):
        loss = F.cross_entropy(model(chunk), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return {"model": model, "loss": loss}
