"""Control: GAN step with fake.detach() in the D step and D frozen by requires_grad_(False) during the
G step, then unfrozen; the generator gets a gradient. Loss values logged with .item().
Thread: none (control shaped like pix2pix-style set_requires_grad)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CUT_LINE_MARK = "# <-- CUT"
CAUSE = "ok"
QUERY = 'G[0].weight'
EXPECT = "grad_ok"

def set_requires_grad(net, flag):
    for p in net.parameters():
        p.requires_grad = flag

def run():
    torch.manual_seed(0)
    G = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 16), nn.Tanh())
    D = nn.Sequential(nn.Linear(16, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
    g_opt, d_opt = torch.optim.Adam(G.parameters(), 2e-4), torch.optim.Adam(D.parameters(), 2e-4)
    real = torch.rand(8, 16) * 2 - 1
    fake = G(torch.randn(8, 8))
    set_requires_grad(D, True)
    d_loss = F.softplus(D(fake.detach())).mean() + F.softplus(-D(real)).mean()
    d_opt.zero_grad(); d_loss.backward(); d_opt.step()
    set_requires_grad(D, False)
    g_loss = F.softplus(-D(fake)).mean()  # <-- CUT
    g_opt.zero_grad(); g_loss.backward(); g_opt.step()
    set_requires_grad(D, True)
    logs = {"d": d_loss.item(), "g": g_loss.item()}
    return {"G": G, "D": D, "logs": logs}
