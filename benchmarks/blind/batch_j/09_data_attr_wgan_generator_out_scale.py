"""WGAN with weight clipping. The critic is clipped with the usual p.data.clamp_(-c, c) after its
step (a legitimate .data write). The generator has a learnable output scale, but forward()
multiplies by self.out_scale.data, so the scale is a constant in the graph: the rest of G trains,
out_scale.grad stays None.
Thread: no forum thread located; reconstructed pattern (see SOURCES.md notes).
"""
import torch
import torch.nn as nn

CAUSE = "data_attr"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "G.out_scale"
EXPECT = "grad_none"


class Generator(nn.Module):
    def __init__(self, nz=8, out_dim=2):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(nz, 32), nn.ReLU(), nn.Linear(32, out_dim), nn.Tanh())
        self.out_scale = nn.Parameter(torch.ones(1) * 2.0)

    def forward(self, z):
        return self.main(z) * self.out_scale.data  # <-- CUT


class Critic(nn.Module):
    def __init__(self, in_dim=2):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(in_dim, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, x):
        return self.main(x).mean(0).view(1)


def run():
    torch.manual_seed(0)
    G, C = Generator(), Critic()
    opt_G = torch.optim.RMSprop(G.parameters(), lr=5e-5)
    opt_C = torch.optim.RMSprop(C.parameters(), lr=5e-5)
    clamp_lower, clamp_upper, n_critic = -0.01, 0.01, 3
    real = torch.randn(16, 2) * 0.5 + 1.0
    for _ in range(n_critic):
        for p in C.parameters():
            p.data.clamp_(clamp_lower, clamp_upper)
        opt_C.zero_grad()
        with torch.no_grad():
            fake = G(torch.randn(16, 8))
        err_C = -(C(real) - C(fake))
        err_C.backward()
        opt_C.step()
    for p in C.parameters():
        p.requires_grad = False
    opt_G.zero_grad()
    err_G = -C(G(torch.randn(16, 8)))
    err_G.backward()
    opt_G.step()
    for p in C.parameters():
        p.requires_grad = True
    return {"G": G, "C": C, "err_G": err_G}
