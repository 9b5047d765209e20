"""Control: WGAN critic step. After opt.step() the critic weights are clipped in
place with p.clamp_(-0.01, 0.01) under torch.no_grad(), and the generator's
sample is detached for the critic loss; the critic's gradient is non-zero.
"""
import torch
import torch.nn as nn

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "D[0].weight"
EXPECT = "grad_ok"


def run():
    torch.manual_seed(0)
    G = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 6))
    D = nn.Sequential(nn.Linear(6, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
    opt_d = torch.optim.RMSprop(D.parameters(), lr=5e-5)
    real = torch.randn(10, 6)
    fake = G(torch.randn(10, 4))
    loss_d = D(fake.detach()).mean() - D(real).mean()  # <-- CUT
    opt_d.zero_grad()
    loss_d.backward()
    opt_d.step()
    with torch.no_grad():
        for p in D.parameters():
            p.clamp_(-0.01, 0.01)
    return {"G": G, "D": D, "loss_d": loss_d}
