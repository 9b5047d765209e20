"""Control: pix2pix-style loop with a `set_requires_grad(D, flag)` helper: D is
unfrozen for its own step (on `fake.detach()`) and frozen again for the
generator step, so the loop ends with D frozen. The D gradient from its own
step is intact and nonzero; the freezing is intended.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "D[0].weight"
EXPECT = "grad_ok"


def set_requires_grad(nets, flag):
    for net in nets:
        for p in net.parameters():
            p.requires_grad = flag


def run():
    torch.manual_seed(0)
    G = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, 6), nn.Tanh())
    D = nn.Sequential(nn.Linear(12, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
    opt_g = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))
    for _ in range(2):
        src, tgt = torch.randn(8, 6), torch.randn(8, 6)
        fake = G(src)
        set_requires_grad([D], True)
        opt_d.zero_grad()
        pr, pf = D(torch.cat([src, tgt], 1)), D(torch.cat([src, fake.detach()], 1))
        d_loss = 0.5 * (F.binary_cross_entropy_with_logits(pr, torch.ones_like(pr))  # <-- CUT
                        + F.binary_cross_entropy_with_logits(pf, torch.zeros_like(pf)))
        d_loss.backward()
        opt_d.step()
        set_requires_grad([D], False)
        opt_g.zero_grad()
        pg = D(torch.cat([src, fake], 1))
        g_loss = F.binary_cross_entropy_with_logits(pg, torch.ones_like(pg)) + 100 * F.l1_loss(fake, tgt)
        g_loss.backward()
        opt_g.step()
    return {"G": G, "D": D, "opt_g": opt_g, "opt_d": opt_d, "d_loss": d_loss, "g_loss": g_loss}
