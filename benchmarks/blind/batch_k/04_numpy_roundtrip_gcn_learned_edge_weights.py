"""Hand-written GCN with learned edge weights. An edge MLP scores each edge, then the
normalised adjacency D^-1/2 A D^-1/2 is assembled in numpy (ported from a scipy.sparse
tutorial) and brought back with torch.from_numpy. The GCN weights train; edge_mlp gets no grad.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.edge_mlp[0].weight"
EXPECT = "grad_none"


def normalized_adjacency(edge_index, edge_w, n):
    w = edge_w.detach().numpy()  # <-- CUT
    A = np.zeros((n, n), dtype=np.float32)
    A[edge_index[0], edge_index[1]] = w
    A = A + np.eye(n, dtype=np.float32)
    d = A.sum(1)
    D = np.diag(1.0 / np.sqrt(d))
    return torch.from_numpy(D @ A @ D)


class GCNLayer(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W = nn.Parameter(torch.randn(d_in, d_out) * (1.0 / d_in ** 0.5))

    def forward(self, A_hat, H):
        return A_hat @ H @ self.W


class EdgeWeightedGCN(nn.Module):
    def __init__(self, d_in, d_hid, n_cls):
        super().__init__()
        self.edge_mlp = nn.Sequential(nn.Linear(2 * d_in, 16), nn.ReLU(), nn.Linear(16, 1))
        self.g1, self.g2 = GCNLayer(d_in, d_hid), GCNLayer(d_hid, n_cls)

    def forward(self, X, edge_index):
        src, dst = edge_index
        e = torch.sigmoid(self.edge_mlp(torch.cat([X[src], X[dst]], 1))).squeeze(-1)
        A_hat = normalized_adjacency(edge_index.numpy(), e, X.size(0))
        return self.g2(A_hat, F.relu(self.g1(A_hat, X)))


def run():
    torch.manual_seed(0)
    n, d = 12, 6
    X = torch.randn(n, d)
    ring = torch.arange(n)
    edge_index = torch.stack([torch.cat([ring, (ring + 1) % n]), torch.cat([(ring + 1) % n, ring])])
    y = torch.randint(0, 3, (n,))
    model = EdgeWeightedGCN(d, 16, 3)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    loss = F.cross_entropy(model(X, edge_index), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
