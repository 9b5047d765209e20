"""Hand-written weight-normalised linear layer (direction / norm, times a gain)
that reads self.v.data in forward, copied from an old answer on initialising
weights. The gain and bias train, the direction parameter is outside the graph:
model.wn.v.grad is None.
Thread: SO 51743214 "Is .data still useful in pytorch?".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_attr"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.wn.v"
EXPECT = "grad_none"


class WNLinear(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.v = nn.Parameter(torch.randn(d_out, d_in) * 0.1)
        self.g = nn.Parameter(torch.ones(d_out))
        self.b = nn.Parameter(torch.zeros(d_out))

    def forward(self, x):
        v = self.v.data  # <-- CUT
        w = self.g.unsqueeze(1) * v / v.norm(dim=1, keepdim=True)
        return F.linear(x, w, self.b)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(8, 16)
        self.wn = WNLinear(16, 16)
        self.out = nn.Linear(16, 2)

    def forward(self, x):
        return self.out(torch.relu(self.wn(torch.relu(self.inp(x)))))


def run():
    torch.manual_seed(0)
    model = Model()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(20, 8)
    y = torch.randint(0, 2, (20,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
