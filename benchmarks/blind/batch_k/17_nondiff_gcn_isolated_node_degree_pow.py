"""Hand-written GCN over a batch of molecule-like graphs with learnable edge gates. One
graph has an isolated node, so deg^-0.5 is inf; the user masks it with torch.where, which fixes
the forward, but the gradient through pow is still NaN (anomaly mode: "PowBackward0 returned nan").
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class GatedGCNLayer(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.lin = nn.Linear(d_in, d_out)
        self.gate = nn.Linear(2 * d_in, 1)

    def forward(self, X, A):
        n = X.size(0)
        pair = torch.cat([X.unsqueeze(1).expand(n, n, -1), X.unsqueeze(0).expand(n, n, -1)], -1)
        W = A * torch.sigmoid(self.gate(pair)).squeeze(-1)
        deg = W.sum(1)
        d_inv_sqrt = deg.pow(-0.5)  # <-- CUT
        d_inv_sqrt = torch.where(torch.isinf(d_inv_sqrt), torch.zeros_like(d_inv_sqrt), d_inv_sqrt)
        W_hat = d_inv_sqrt[:, None] * W * d_inv_sqrt[None, :]
        return W_hat @ self.lin(X)


class GraphRegressor(nn.Module):
    def __init__(self, d=6):
        super().__init__()
        self.l1, self.l2 = GatedGCNLayer(d, 16), GatedGCNLayer(16, 16)
        self.readout = nn.Linear(16, 1)

    def forward(self, X, A):
        h = F.relu(self.l1(X, A))
        h = F.relu(self.l2(h, A))
        return self.readout(h.mean(0))


def make_graph(n, isolated):
    A = torch.zeros(n, n)
    for i in range(n - 1 - int(isolated)):
        A[i, i + 1] = A[i + 1, i] = 1.0
    return A


def run():
    torch.manual_seed(0)
    model = GraphRegressor()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    graphs = [(torch.randn(5, 6), make_graph(5, False)), (torch.randn(6, 6), make_graph(6, True))]
    targets = torch.tensor([[0.5], [1.2]])
    with torch.autograd.detect_anomaly():
        preds = torch.stack([model(X, A) for X, A in graphs])
        loss = F.mse_loss(preds, targets)
        opt.zero_grad()
        loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
