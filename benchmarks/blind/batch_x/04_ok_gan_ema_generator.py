"""Control: StyleGAN-style generator EMA; G_ema is a deepcopy built by load_state_dict,
updated under no_grad with lerp_ on .data, and used only for sampling/logging.
Thread (from memory): discuss.pytorch.org 'EMA of generator weights, does .data break autograd'."""
import torch
import torch.nn as nn

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "G[0].weight"
EXPECT = "grad_ok"


def make_g():
    return nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 16))


@torch.no_grad()
def update_ema(g_ema, g, beta=0.999):
    for pe, p in zip(g_ema.parameters(), g.parameters()):
        pe.data.lerp_(p.data, 1.0 - beta)


def run():
    torch.manual_seed(0)
    G, G_ema = make_g(), make_g()
    G_ema.load_state_dict(G.state_dict())
    G_ema.requires_grad_(False)
    D = nn.Sequential(nn.Linear(16, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
    opt_g = torch.optim.Adam(G.parameters(), lr=2e-3, betas=(0.0, 0.99))
    z = torch.randn(8, 8)
    fake = G(z)
    g_loss = nn.functional.softplus(-D(fake)).mean()  # <-- CUT
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
    update_ema(G_ema, G)
    with torch.no_grad():
        samples = G_ema(torch.randn(4, 8))
    return {"G": G, "G_ema": G_ema, "samples": samples.numpy()}
