"""VAE on binarised images with a hand-written Bernoulli ELBO,
x*log(p) + (1-x)*log(1-p), run under anomaly detection. The decoder saturates a
pixel to p == 1.0 exactly, so log(1-p) is -inf and its backward computes 0/0:
anomaly mode raises "Function 'LogBackward0' returned nan values".
"""
import torch
import torch.nn as nn

CAUSE = "nonfinite_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class BernoulliVAE(nn.Module):
    def __init__(self, d=16, z=2):
        super().__init__()
        self.enc = nn.Linear(d, 2 * z)
        self.dec = nn.Linear(z, d)
        with torch.no_grad():
            self.dec.bias.fill_(20.0)

    def forward(self, x):
        mu, logvar = self.enc(x).chunk(2, -1)
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        return torch.sigmoid(self.dec(z)), mu, logvar


def neg_elbo(x, p, mu, logvar):
    log_lik = x * torch.log(p) + (1 - x) * torch.log(1 - p)  # <-- CUT
    kl = -0.5 * (1 + logvar - mu ** 2 - logvar.exp()).sum(-1)
    return (-log_lik.sum(-1) + kl).mean()


def run():
    torch.manual_seed(0)
    vae = BernoulliVAE()
    opt = torch.optim.Adam(vae.parameters(), lr=1e-3)
    x = (torch.rand(4, 16) > 0.5).float()
    with torch.autograd.set_detect_anomaly(True):
        p, mu, logvar = vae(x)
        loss = neg_elbo(x, p, mu, logvar)
        opt.zero_grad()
        loss.backward()
    opt.step()
    return {"vae": vae, "loss": loss}
