"""DARTS-style search cell: each edge mixes candidate ops with softmax(alpha).
The MixedOp converts the softmax weights to Python floats (float(w)) to build
a readable log string and reuses those floats in the weighted sum, so the
architecture parameters alpha never get a gradient."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "cell.alpha"
EXPECT = "grad_none"


class MixedOp(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.ops = nn.ModuleList([nn.Identity(), nn.Linear(c, c), nn.Sequential(nn.Linear(c, c), nn.Tanh())])

    def forward(self, x, weights):
        ws = [float(w) for w in weights]  # <-- CUT
        self.last_log = " ".join(f"{w:.3f}" for w in ws)
        return sum(w * op(x) for w, op in zip(ws, self.ops))


class Cell(nn.Module):
    def __init__(self, c=8, n_edges=2):
        super().__init__()
        self.edges = nn.ModuleList([MixedOp(c) for _ in range(n_edges)])
        self.alpha = nn.Parameter(1e-3 * torch.randn(n_edges, 3))

    def forward(self, x):
        w = F.softmax(self.alpha, dim=-1)
        for i, e in enumerate(self.edges):
            x = e(x, w[i])
        return x


def run():
    torch.manual_seed(0)
    cell = Cell()
    head = nn.Linear(8, 3)
    w_opt = torch.optim.SGD(list(cell.edges.parameters()) + list(head.parameters()), lr=0.05)
    a_opt = torch.optim.Adam([cell.alpha], lr=3e-4)
    x, y = torch.randn(10, 8), torch.randint(0, 3, (10,))
    loss = F.cross_entropy(head(cell(x)), y)
    w_opt.zero_grad(); a_opt.zero_grad()
    loss.backward()
    w_opt.step(); a_opt.step()
    return {"cell": cell, "head": head, "loss": loss}
