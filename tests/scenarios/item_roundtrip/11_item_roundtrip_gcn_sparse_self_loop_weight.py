"""Hand-written GCN with a sparse adjacency and a learnable self-loop weight.
The degree vector adds the self-loop weight via `.item()` so it can be used
as a Python scalar in the normalisation, so loop_w.grad stays None while the
linear layer trains.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.conv.loop_w"
EXPECT = "grad_none"


class GCNConv(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.lin = nn.Linear(d_in, d_out)
        self.loop_w = nn.Parameter(torch.tensor(1.0))

    def forward(self, x, adj):
        n = x.shape[0]
        lw = self.loop_w.item()  # <-- CUT
        deg = torch.sparse.sum(adj, dim=1).to_dense() + lw
        dinv = deg.pow(-0.5)
        h = self.lin(x)
        agg = torch.sparse.mm(adj, h * dinv[:, None]) + lw * h * dinv[:, None]
        return agg * dinv[:, None]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = GCNConv(8, 4)

    def forward(self, x, adj):
        return self.conv(x, adj)


def run():
    torch.manual_seed(0)
    n = 10
    src = torch.arange(n)
    dst = (src + 1) % n
    idx = torch.stack([torch.cat([src, dst]), torch.cat([dst, src])])
    adj = torch.sparse_coo_tensor(idx, torch.ones(2 * n), (n, n)).coalesce()
    model = Net()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    x = torch.randn(n, 8)
    y = torch.randint(0, 4, (n,))
    loss = F.cross_entropy(model(x, adj), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
