"""Hand-written GCN with a custom sparse-dense matmul autograd.Function (adjacency, features).
Its backward returns the gradients in the wrong order, (grad for features, None), so the
adjacency slot gets the features' gradient and features get None: gcn.W1.grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "custom_function"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "gcn.W1"
EXPECT = "grad_none"


class SpMM(torch.autograd.Function):
    @staticmethod
    def forward(ctx, adj, H):
        ctx.save_for_backward(adj)
        return torch.sparse.mm(adj, H)

    @staticmethod
    def backward(ctx, grad_out):
        (adj,) = ctx.saved_tensors
        grad_H = torch.sparse.mm(adj.t(), grad_out)
        return grad_H, None  # <-- CUT


class GCN(nn.Module):
    def __init__(self, d_in, d_hid, n_cls):
        super().__init__()
        self.W1 = nn.Parameter(torch.empty(d_in, d_hid))
        self.W2 = nn.Parameter(torch.empty(d_hid, n_cls))
        self.b2 = nn.Parameter(torch.zeros(n_cls))
        nn.init.xavier_uniform_(self.W1)
        nn.init.xavier_uniform_(self.W2)

    def forward(self, adj, X):
        h = F.relu(SpMM.apply(adj, X @ self.W1))
        return SpMM.apply(adj, h @ self.W2) + self.b2


def normalized_sparse_adj(n, p=0.3):
    A = (torch.rand(n, n) < p).float()
    A = ((A + A.t()) > 0).float().fill_diagonal_(1.0)
    d = A.sum(1).rsqrt()
    return (d[:, None] * A * d[None, :]).to_sparse()


def run():
    torch.manual_seed(0)
    adj = normalized_sparse_adj(12)
    X, y = torch.randn(12, 5), torch.randint(0, 3, (12,))
    gcn = GCN(5, 8, 3)
    opt = torch.optim.Adam(gcn.parameters(), lr=1e-2, weight_decay=5e-4)
    loss = F.cross_entropy(gcn(adj, X), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"gcn": gcn, "loss": loss}
