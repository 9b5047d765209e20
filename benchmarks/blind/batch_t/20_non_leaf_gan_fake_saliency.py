"""GAN: after the G step the user reads fake.grad to see which pixels D reacts to; fake is a
non-leaf (output of G) and has no retain_grad. The D step's fake.detach() is legitimate.
Thread: generated image .grad is None (reconstructed)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CUT_LINE_MARK = "# <-- CUT"
CAUSE = "non_leaf_no_retain_grad"
QUERY = 'fake'
EXPECT = "grad_none"

def run():
    torch.manual_seed(0)
    G = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 16), nn.Tanh())
    D = nn.Sequential(nn.Linear(16, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
    g_opt, d_opt = torch.optim.Adam(G.parameters(), 2e-4), torch.optim.Adam(D.parameters(), 2e-4)
    real = torch.rand(8, 16) * 2 - 1
    fake = G(torch.randn(8, 8))  # <-- CUT
    d_loss = F.softplus(D(fake.detach())).mean() + F.softplus(-D(real)).mean()
    d_opt.zero_grad(); d_loss.backward(); d_opt.step()
    g_loss = F.softplus(-D(fake)).mean()
    g_opt.zero_grad(); g_loss.backward(); g_opt.step()
    return {"G": G, "D": D, "fake": fake}
