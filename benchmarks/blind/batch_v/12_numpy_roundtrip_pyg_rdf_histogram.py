"""Fitting a water radial distribution function with a SchNet-like PyG model: the model predicts
displacements, the RDF of the new positions is built with np.histogram (as in an analysis script),
and the loss against the target RDF is rebuilt with torch.from_numpy, so backward has no graph.
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "net.lin1.weight"
EXPECT = "backward_error"


class TinySchNet(nn.Module):
    def __init__(self, n_gauss=8, hidden=16):
        super().__init__()
        self.offsets = torch.linspace(0.0, 3.0, n_gauss)
        self.lin1 = nn.Linear(n_gauss, hidden)
        self.lin2 = nn.Linear(hidden, 1)

    def forward(self, pos, edge_index):
        row, col = edge_index
        vec = pos[row] - pos[col]
        dist = vec.norm(dim=-1, keepdim=True)
        rbf = torch.exp(-10.0 * (dist - self.offsets) ** 2)
        w = self.lin2(torch.tanh(self.lin1(rbf)))
        disp = torch.zeros_like(pos).index_add_(0, row, w * vec / (dist + 1e-6))
        return pos + 0.01 * disp


def radius_graph(pos, r):
    d = torch.cdist(pos, pos)
    row, col = torch.nonzero((d < r) & (d > 0), as_tuple=True)
    return torch.stack([row, col])


def rdf(pos, bins):
    d = torch.pdist(pos).detach().cpu().numpy()  # <-- CUT
    hist, _ = np.histogram(d, bins=bins)
    return hist / max(hist.sum(), 1)


def run():
    torch.manual_seed(0)
    net = TinySchNet()
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    pos = torch.rand(20, 3) * 3.0
    edge_index = radius_graph(pos, 1.5)
    bins = np.linspace(0.0, 3.0, 16)
    target_rdf = torch.from_numpy(rdf(torch.rand(20, 3) * 3.0, bins)).float()
    new_pos = net(pos, edge_index)
    pred_rdf = torch.from_numpy(rdf(new_pos, bins)).float()
    loss = (pred_rdf - target_rdf).pow(2).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"net": net, "loss": loss}
