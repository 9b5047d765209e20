"""Two-layer GCN for node classification. The first layer's output is stored in a
per-graph cache "to reuse it for the link-prediction head", and the cached copy is
made with .detach() so the cache would not hold the graph. The second layer reads the
detached copy, so the second layer and classifier train and the first layer gets None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.conv1.lin.weight"
EXPECT = "grad_none"


def normalized_adjacency(edge_index, n):
    a = torch.zeros(n, n)
    a[edge_index[0], edge_index[1]] = 1.0
    a = a + a.t() + torch.eye(n)
    a = (a > 0).float()
    d = a.sum(1).pow(-0.5)
    return d.unsqueeze(1) * a * d.unsqueeze(0)


class GCNConv(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.lin = nn.Linear(d_in, d_out)

    def forward(self, x, a_hat):
        return a_hat @ self.lin(x)


class GCN(nn.Module):
    def __init__(self, d_in=8, d_hid=16, n_cls=3):
        super().__init__()
        self.conv1 = GCNConv(d_in, d_hid)
        self.conv2 = GCNConv(d_hid, d_hid)
        self.cls = nn.Linear(d_hid, n_cls)
        self.cache = {}

    def forward(self, x, a_hat, graph_id):
        h = F.relu(self.conv1(x, a_hat))
        self.cache[graph_id] = h.detach()  # <-- CUT
        h = self.cache[graph_id]
        h = F.relu(self.conv2(h, a_hat))
        return self.cls(h)


def run():
    torch.manual_seed(0)
    n = 12
    edge_index = torch.randint(0, n, (2, 30))
    a_hat = normalized_adjacency(edge_index, n)
    x = torch.randn(n, 8)
    y = torch.randint(0, 3, (n,))
    train_mask = torch.arange(n) < 8
    model = GCN()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2, weight_decay=5e-4)
    logits = model(x, a_hat, graph_id="g0")
    loss = F.cross_entropy(logits[train_mask], y[train_mask])
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss, "logits": logits}
