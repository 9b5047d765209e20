"""Learned edge weights in a PyG-style pipeline are converted to a networkx-like adjacency dict
with `edge_weight.tolist()` (for a shortest-path regulariser), and the weighted adjacency is then
rebuilt with torch.tensor for message passing; the edge scorer MLP never gets a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "tolist_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.edge_scorer[0].weight"
EXPECT = "grad_none"


def to_networkx(edge_index, edge_weight):
    g = {}
    for (u, v), w in zip(edge_index.t().tolist(), edge_weight.tolist()):  # <-- CUT
        g.setdefault(u, {})[v] = {"weight": w}
    return g


def from_networkx(g, num_nodes):
    rows, cols, ws = [], [], []
    for u, nbrs in g.items():
        for v, attr in nbrs.items():
            rows.append(u)
            cols.append(v)
            ws.append(attr["weight"])
    return torch.tensor([rows, cols]), torch.tensor(ws)


class EdgeWeightedGNN(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.edge_scorer = nn.Sequential(nn.Linear(2 * d, 16), nn.ReLU(), nn.Linear(16, 1))
        self.lin = nn.Linear(d, 3)

    def forward(self, x, edge_index):
        row, col = edge_index
        w = torch.sigmoid(self.edge_scorer(torch.cat([x[row], x[col]], 1))).squeeze(1)
        g = to_networkx(edge_index, w)
        ei, ew = from_networkx(g, x.size(0))
        h = self.lin(x)
        return h + torch.zeros_like(h).index_add_(0, ei[1], ew.unsqueeze(1) * h[ei[0]])


def run():
    torch.manual_seed(0)
    model = EdgeWeightedGNN()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    x = torch.randn(10, 8)
    edge_index = torch.randint(0, 10, (2, 25))
    y = torch.randint(0, 3, (10,))
    loss = F.cross_entropy(model(x, edge_index), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
