"""Force-matching with a SchNet-like PyG model: forces are -dE/dpos via autograd, edges come from a
radius graph built with loop=True, and distances are written as sqrt(sum(diff**2)). On self-loop
edges the distance is sqrt(0), whose derivative is inf; 0*inf gives NaN weight gradients.
"""
import torch
import torch.nn as nn

CAUSE = "nonfinite_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.filter.weight"
EXPECT = "grad_nonfinite"


def radius_graph(pos, r, loop=False):
    d = torch.cdist(pos.detach(), pos.detach())
    mask = d < r
    if not loop:
        mask &= ~torch.eye(pos.size(0), dtype=torch.bool)
    row, col = torch.nonzero(mask, as_tuple=True)
    return torch.stack([row, col])


class TinySchNet(nn.Module):
    def __init__(self, n_rbf=8):
        super().__init__()
        self.register_buffer("mu", torch.linspace(0.0, 2.0, n_rbf))
        self.filter = nn.Linear(n_rbf, 16)
        self.out = nn.Linear(16, 1)

    def forward(self, pos, edge_index):
        row, col = edge_index
        diff = pos[row] - pos[col]
        dist = (diff ** 2).sum(-1).sqrt()  # <-- CUT
        rbf = torch.exp(-4.0 * (dist.unsqueeze(1) - self.mu) ** 2)
        e_edge = self.out(torch.tanh(self.filter(rbf)))
        return e_edge.sum()


def run():
    torch.manual_seed(0)
    model = TinySchNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    pos = (torch.rand(10, 3) * 2.0).requires_grad_(True)
    edge_index = radius_graph(pos, 1.2, loop=True)
    ref_forces = torch.randn(10, 3)
    energy = model(pos, edge_index)
    forces = -torch.autograd.grad(energy, pos, create_graph=True)[0]
    loss = (forces - ref_forces).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    return {"model": model, "loss": loss, "pos": pos}
