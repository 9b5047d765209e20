"""Hand-written GNN layer: node states go through ReLU, then neighbour
messages are aggregated with h.index_add_(0, dst, h[src]) directly into the
ReLU output (a residual "for free"). ReLU saved its output for backward, so
the in-place index_add_ makes loss.backward() raise.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "None"
EXPECT = "backward_error"


class GraphLayer(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.lin = nn.Linear(d, d)

    def forward(self, x, src, dst):
        h = F.relu(self.lin(x))
        msgs = h[src]
        h.index_add_(0, dst, msgs)  # <-- CUT
        return h


class GNN(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.layers = nn.ModuleList([GraphLayer(d), GraphLayer(d)])
        self.readout = nn.Linear(d, 1)

    def forward(self, x, src, dst):
        for layer in self.layers:
            x = layer(x, src, dst)
        return self.readout(x.mean(0))


def run():
    torch.manual_seed(0)
    n = 9
    src = torch.randint(0, n, (20,))
    dst = torch.randint(0, n, (20,))
    model = GNN(8)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(n, 8)
    loss = (model(x, src, dst) - 1.0).pow(2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
