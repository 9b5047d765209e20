"""Pointer network for a TSP-like task trained "directly" on tour length: the
decoder picks the next city with `argmax` over the pointer scores and gathers its
coordinates. The critic baseline trains (its MSE to the tour length), but the
pointer attention gets no gradient: argmax indices carry none.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "actor.ptr_q.weight"
EXPECT = "grad_none"


class PointerNet(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.embed = nn.Linear(2, d)
        self.cell = nn.GRUCell(d, d)
        self.ptr_q = nn.Linear(d, d, bias=False)
        self.ptr_k = nn.Linear(d, d, bias=False)
        self.v = nn.Linear(d, 1, bias=False)

    def forward(self, coords):
        B, N, _ = coords.shape
        emb = self.embed(coords)
        h = emb.mean(1)
        inp = torch.zeros_like(h)
        visited = torch.zeros(B, N, dtype=torch.bool)
        tour = []
        for _ in range(N):
            h = self.cell(inp, h)
            scores = self.v(torch.tanh(self.ptr_q(h).unsqueeze(1) + self.ptr_k(emb))).squeeze(-1)
            scores = scores.masked_fill(visited, -1e9)
            idx = scores.argmax(dim=-1)  # <-- CUT
            visited = visited.clone()
            visited[torch.arange(B), idx] = True
            tour.append(coords[torch.arange(B), idx])
            inp = emb[torch.arange(B), idx]
        return torch.stack(tour, 1)


def tour_length(tour):
    return (tour - tour.roll(-1, dims=1)).norm(dim=-1).sum(-1)


class Critic(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, d), nn.ReLU(), nn.Linear(d, 1))

    def forward(self, coords):
        return self.net(coords).mean(1).squeeze(-1)


def run():
    torch.manual_seed(0)
    actor, critic = PointerNet(), Critic()
    opt = torch.optim.Adam(list(actor.parameters()) + list(critic.parameters()), lr=1e-3)
    coords = torch.rand(4, 6, 2)
    L = tour_length(actor(coords))
    b = critic(coords)
    loss = L.mean() + F.mse_loss(b, L)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"actor": actor, "critic": critic, "loss": loss}
