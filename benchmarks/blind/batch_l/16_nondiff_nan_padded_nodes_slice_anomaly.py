"""Batched GNN readout where graphs are padded to the same node count. Missing nodes
are filled with NaN "so a bug would show up", and the padded rows are sliced away after
the node encoder. The loss is finite, but the encoder's weight gradient is NaN
(0 * nan in AddmmBackward0), and anomaly mode raises inside backward.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


def pad_graphs(graphs, max_nodes, d):
    out = []
    for x in graphs:
        pad = torch.full((max_nodes - x.size(0), d), float("nan"))  # <-- CUT
        out.append(torch.cat([x, pad], dim=0))
    return torch.stack(out)


class GraphRegressor(nn.Module):
    def __init__(self, d=8, h=16):
        super().__init__()
        self.node_enc = nn.Linear(d, h)
        self.readout = nn.Linear(h, 1)

    def forward(self, xb, n_nodes):
        h = F.relu(self.node_enc(xb))
        pooled = torch.stack([h[i, :n].mean(0) for i, n in enumerate(n_nodes)])
        return self.readout(pooled).squeeze(-1)


def run():
    torch.manual_seed(0)
    graphs = [torch.randn(5, 8), torch.randn(3, 8), torch.randn(7, 8)]
    n_nodes = [g.size(0) for g in graphs]
    xb = pad_graphs(graphs, max(n_nodes), 8)
    y = torch.randn(3)
    model = GraphRegressor()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    with torch.autograd.detect_anomaly():
        loss = F.mse_loss(model(xb, n_nodes), y)
        opt.zero_grad()
        loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
