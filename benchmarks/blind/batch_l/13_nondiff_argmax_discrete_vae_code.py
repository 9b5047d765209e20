"""Categorical-latent VAE. The encoder's logits are turned into a hard one-hot code with
argmax + one_hot "like Gumbel-softmax with hard=True", but without the straight-through
term. The code-usage KL is also computed from the hard code, so the reconstruction and
KL losses train only the decoder; the encoder never gets a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "vae.encoder[0].weight"
EXPECT = "grad_none"


class CategoricalVAE(nn.Module):
    def __init__(self, d_in=20, n_lat=4, k=8):
        super().__init__()
        self.n_lat, self.k = n_lat, k
        self.encoder = nn.Sequential(nn.Linear(d_in, 64), nn.ReLU(), nn.Linear(64, n_lat * k))
        self.decoder = nn.Sequential(nn.Linear(n_lat * k, 64), nn.ReLU(), nn.Linear(64, d_in))

    def quantize(self, logits):
        idx = logits.argmax(dim=-1)  # <-- CUT
        return F.one_hot(idx, self.k).float()

    def forward(self, x):
        logits = self.encoder(x).view(-1, self.n_lat, self.k)
        code = self.quantize(logits)
        recon = self.decoder(code.view(x.size(0), -1))
        q = code.mean(0).clamp_min(1e-6)
        kl = (q * (q * self.k).log()).sum()
        return recon, kl


def run():
    torch.manual_seed(0)
    vae = CategoricalVAE()
    opt = torch.optim.Adam(vae.parameters(), lr=1e-3)
    x = torch.rand(32, 20)
    recon, kl = vae(x)
    loss = F.binary_cross_entropy_with_logits(recon, x) + 0.1 * kl
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"vae": vae, "loss": loss}
