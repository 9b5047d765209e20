"""GAN generator step: fake images are denormalised with a numpy helper before D sees them.
The D step uses fake.detach() (legitimate); in the G step G gets no gradient although D does.
Thread: generator gradients are None, discriminator fine (reconstructed)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CUT_LINE_MARK = "# <-- CUT"
CAUSE = "numpy_roundtrip"
QUERY = 'G.net[0].weight'
EXPECT = "grad_none"

import numpy as np

class G_(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 16), nn.Tanh())
    def forward(self, z):
        return self.net(z)

def denorm(x):
    arr = x.detach().cpu().numpy()  # <-- CUT
    return torch.from_numpy((arr + 1.0) / 2.0)

def run():
    torch.manual_seed(0)
    G, D = G_(), nn.Sequential(nn.Linear(16, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
    g_opt, d_opt = torch.optim.Adam(G.parameters(), 2e-4), torch.optim.Adam(D.parameters(), 2e-4)
    real = torch.rand(8, 16)
    fake = G(torch.randn(8, 8))
    d_loss = F.binary_cross_entropy_with_logits(D(real), torch.ones(8, 1)) + \
        F.binary_cross_entropy_with_logits(D((fake.detach() + 1) / 2), torch.zeros(8, 1))
    d_opt.zero_grad(); d_loss.backward(); d_opt.step()
    g_loss = F.binary_cross_entropy_with_logits(D(denorm(fake)), torch.ones(8, 1))
    g_opt.zero_grad(); D.zero_grad(); g_loss.backward(); g_opt.step()
    return {"G": G, "D": D}
