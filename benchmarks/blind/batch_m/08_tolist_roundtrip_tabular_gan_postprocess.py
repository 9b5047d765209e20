"""Tabular GAN: generated rows are post-processed so categorical columns are
integers before the discriminator sees them. The helper does it in Python over
`fake.tolist()` and rebuilds with torch.tensor. The D step (detached fake) is fine;
in the G step the loss still reaches D's weights, but G gets no gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "tolist_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "G.net[0].weight"
EXPECT = "grad_none"

CONFIG = {"z_dim": 8, "n_cols": 5, "categorical": [1, 3], "batch": 32}


class Generator(nn.Module):
    def __init__(self, z_dim, n_cols):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(z_dim, 64), nn.ReLU(), nn.Linear(64, n_cols))

    def forward(self, z):
        return self.net(z)


class Discriminator(nn.Module):
    def __init__(self, n_cols):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_cols, 64), nn.LeakyReLU(0.2), nn.Linear(64, 1))

    def forward(self, x):
        return self.net(x)


def postprocess(fake, categorical):
    rows = fake.tolist()  # <-- CUT
    for row in rows:
        for c in categorical:
            row[c] = float(min(max(round(row[c]), 0), 4))
    return torch.tensor(rows)


def run():
    torch.manual_seed(0)
    cfg = CONFIG
    G, D = Generator(cfg["z_dim"], cfg["n_cols"]), Discriminator(cfg["n_cols"])
    g_opt = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999))
    d_opt = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))
    real = torch.randn(cfg["batch"], cfg["n_cols"])
    ones, zeros = torch.ones(cfg["batch"], 1), torch.zeros(cfg["batch"], 1)

    fake = postprocess(G(torch.randn(cfg["batch"], cfg["z_dim"])), cfg["categorical"])
    d_loss = (F.binary_cross_entropy_with_logits(D(real), ones)
              + F.binary_cross_entropy_with_logits(D(fake.detach()), zeros))
    d_opt.zero_grad()
    d_loss.backward()
    d_opt.step()

    fake = postprocess(G(torch.randn(cfg["batch"], cfg["z_dim"])), cfg["categorical"])
    g_loss = F.binary_cross_entropy_with_logits(D(fake), ones)
    g_opt.zero_grad()
    g_loss.backward()
    g_opt.step()
    return {"G": G, "D": D, "d_loss": d_loss, "g_loss": g_loss}
