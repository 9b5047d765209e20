"""A discrete VAE samples codes with the Gumbel trick and turns them into hard
one-hot vectors with argmax + one_hot, but without the straight-through
estimator. The codebook still trains, the encoder gets no gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "vae.encoder.weight"
EXPECT = "grad_none"


class DVAE(nn.Module):
    def __init__(self, d=10, k=6):
        super().__init__()
        self.k = k
        self.encoder = nn.Linear(d, k)
        self.codebook = nn.Parameter(torch.randn(k, d))

    def forward(self, x, tau=1.0):
        logits = self.encoder(x)
        u = torch.rand_like(logits).clamp(1e-6, 1 - 1e-6)
        y = (logits - torch.log(-torch.log(u))) / tau
        hard = F.one_hot(y.argmax(dim=-1), self.k).float()  # <-- CUT
        return hard @ self.codebook


def run():
    torch.manual_seed(0)
    vae = DVAE()
    opt = torch.optim.Adam(vae.parameters(), lr=1e-3)
    x = torch.randn(8, 10)
    loss = F.mse_loss(vae(x), x)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"vae": vae, "loss": loss}
