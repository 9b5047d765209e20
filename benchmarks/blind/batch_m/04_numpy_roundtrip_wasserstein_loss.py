"""1-D generator trained to match a target distribution with a Wasserstein-1 loss
that mimics scipy.stats.wasserstein_distance in numpy (sorted samples). The user
added `.detach()` after the numpy() error and re-wrapped the result with
requires_grad=True, so backward runs but the generator gets no gradient.
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "G.net[0].weight"
EXPECT = "grad_none"


class Generator(nn.Module):
    def __init__(self, z_dim=4):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(z_dim, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, z):
        return self.net(z)


def wasserstein_1d(u_values, v_values):
    u = np.sort(u_values.detach().cpu().numpy().ravel())  # <-- CUT
    v = np.sort(v_values.cpu().numpy().ravel())
    return torch.tensor(np.abs(u - v).mean(), dtype=torch.float32, requires_grad=True)


def run():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    G = Generator()
    opt = torch.optim.Adam(G.parameters(), lr=1e-3)
    target = torch.from_numpy(rng.gamma(2.0, 1.0, size=(128, 1)).astype(np.float32))
    history = []
    for _ in range(2):
        fake = G(torch.randn(128, 4))
        loss = wasserstein_1d(fake, target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        history.append(loss.item())
    return {"G": G, "opt": opt, "history": history}
