"""VAE whose encoder emits tanh-bounded statistics that are split by slicing into mu
and logvar. logvar is then rescaled in place with mul_ "to save memory". The slice is a
view of tanh's output, which TanhBackward0 saved, so the ELBO backward raises an
in-place modification error naming the output of Tanh.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class VAE(nn.Module):
    def __init__(self, d_in=20, d_z=4, logvar_scale=6.0):
        super().__init__()
        self.d_z, self.logvar_scale = d_z, logvar_scale
        self.enc = nn.Sequential(nn.Linear(d_in, 32), nn.ReLU())
        self.stats = nn.Linear(32, 2 * d_z)
        self.dec = nn.Sequential(nn.Linear(d_z, 32), nn.ReLU(), nn.Linear(32, d_in))

    def encode(self, x):
        s = torch.tanh(self.stats(self.enc(x)))
        mu, logvar = s[:, : self.d_z], s[:, self.d_z:]
        logvar.mul_(self.logvar_scale)  # <-- CUT
        return mu * 3.0, logvar

    def forward(self, x):
        mu, logvar = self.encode(x)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        return self.dec(z), mu, logvar


def elbo_loss(recon, x, mu, logvar):
    rec = F.binary_cross_entropy_with_logits(recon, x, reduction="sum") / x.size(0)
    kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp()) / x.size(0)
    return rec + kl


def run():
    torch.manual_seed(0)
    vae = VAE()
    opt = torch.optim.Adam(vae.parameters(), lr=1e-3)
    x = torch.rand(16, 20)
    recon, mu, logvar = vae(x)
    loss = elbo_loss(recon, x, mu, logvar)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"vae": vae, "loss": loss}
