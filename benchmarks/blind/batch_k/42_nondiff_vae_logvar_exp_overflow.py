"""VAE on unscaled sensor readings (values in the thousands): the encoder's log-variance head
outputs values above 88, so std = exp(0.5 * logvar) and logvar.exp() in the KL overflow to inf.
The loss is inf and, in anomaly mode, backward raises "returned nan values" instead of training.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class SensorVAE(nn.Module):
    def __init__(self, d=8, z=3, h=32):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(d, h), nn.ReLU())
        self.mu, self.logvar = nn.Linear(h, z), nn.Linear(h, z)
        self.dec = nn.Sequential(nn.Linear(z, h), nn.ReLU(), nn.Linear(h, d))

    def forward(self, x):
        h = self.body(x)
        mu, logvar = self.mu(h), self.logvar(h)
        std = torch.exp(0.5 * logvar)  # <-- CUT
        z = mu + std * torch.randn_like(std)
        return self.dec(z), mu, logvar


def vae_loss(x_hat, x, mu, logvar):
    rec = F.mse_loss(x_hat, x, reduction="sum")
    kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return (rec + kl) / x.size(0)


def run():
    torch.manual_seed(0)
    vae = SensorVAE()
    opt = torch.optim.Adam(vae.parameters(), lr=1e-3)
    x = torch.rand(16, 8) * 4000 + 1000
    with torch.autograd.detect_anomaly():
        x_hat, mu, logvar = vae(x)
        loss = vae_loss(x_hat, x, mu, logvar)
        opt.zero_grad()
        loss.backward()
    opt.step()
    return {"vae": vae, "loss": loss}
