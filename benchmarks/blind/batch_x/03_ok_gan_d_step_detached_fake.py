"""Control: DCGAN-style loop; the D step uses fake.detach() and D is frozen with
requires_grad_(False) for the G step and unfrozen afterwards; G trains normally.
Thread (from memory): discuss.pytorch.org 'why fake.detach() in the DCGAN D step'."""
import torch
import torch.nn as nn

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "G.net[0].weight"
EXPECT = "grad_ok"


def set_requires_grad(model, flag):
    for p in model.parameters():
        p.requires_grad_(flag)


def run():
    torch.manual_seed(0)
    G = nn.Module()
    G.net = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 16), nn.Tanh())
    D = nn.Sequential(nn.Linear(16, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
    opt_g = torch.optim.Adam(G.net.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))
    bce = nn.BCEWithLogitsLoss()
    real = torch.randn(8, 16)
    z = torch.randn(8, 8)
    fake = G.net(z)
    # D step
    d_loss = bce(D(real), torch.ones(8, 1)) + bce(D(fake.detach()), torch.zeros(8, 1))
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()
    # G step
    set_requires_grad(D, False)
    g_loss = bce(D(fake), torch.ones(8, 1))  # <-- CUT
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
    set_requires_grad(D, True)
    return {"G": G, "D": D, "g_loss": g_loss.item()}
