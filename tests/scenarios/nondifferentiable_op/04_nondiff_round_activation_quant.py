"""An autoencoder simulates 8-bit transmission of its latent code with
torch.round(sigmoid(z) * 255) / 255 and no straight-through estimator. The
decoder trains; the encoder's gradient exists but is exactly zero.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "ae.enc.weight"
EXPECT = "grad_zero"


class AE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(16, 4)
        self.dec = nn.Linear(4, 16)

    def forward(self, x):
        z = torch.sigmoid(self.enc(x))
        zq = torch.round(z * 255) / 255  # <-- CUT
        return self.dec(zq)


def run():
    torch.manual_seed(0)
    ae = AE()
    opt = torch.optim.Adam(ae.parameters(), lr=1e-3)
    x = torch.randn(10, 16)
    loss = F.mse_loss(ae(x), x)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"ae": ae, "loss": loss}
