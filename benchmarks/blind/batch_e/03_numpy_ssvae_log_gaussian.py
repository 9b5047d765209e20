"""Semi-supervised VAE (GuHY777/SS-VAE-pytorch#1): log_Gaussian_pro(z, mu, var) is
written with numpy and raised "Can't call numpy() on Variable that requires grad".
The quick fix detaches before .numpy() and wraps the result back with
torch.from_numpy, so the KL-style term has no graph and the variance head never learns.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.fc_var.weight"
EXPECT = "grad_none"


def log_Gaussian_pro(z, z_mu, z_var):
    z_np, mu_np, var_np = z.detach().numpy(), z_mu.detach().numpy(), z_var.detach().numpy()  # <-- CUT
    log_p = -0.5 * (np.log(2 * np.pi * var_np) + (z_np - mu_np) ** 2 / var_np)
    return torch.from_numpy(log_p.sum(axis=1).astype(np.float32))


def log_standard_normal(z):
    return log_Gaussian_pro(z, torch.zeros_like(z), torch.ones_like(z))


class SSVAE(nn.Module):
    def __init__(self, d_in=20, d_h=32, d_z=4, n_cls=3):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(d_in + n_cls, d_h), nn.Softplus())
        self.fc_mu = nn.Linear(d_h, d_z)
        self.fc_var = nn.Linear(d_h, d_z)
        self.dec = nn.Sequential(nn.Linear(d_z + n_cls, d_h), nn.Softplus(), nn.Linear(d_h, d_in))
        self.cls = nn.Sequential(nn.Linear(d_in, d_h), nn.ReLU(), nn.Linear(d_h, n_cls))

    def encode(self, x, y):
        h = self.enc(torch.cat([x, y], dim=1))
        return self.fc_mu(h), F.softplus(self.fc_var(h)) + 1e-4

    def forward(self, x, y):
        z_mu, z_var = self.encode(x, y)
        z = z_mu + torch.randn_like(z_mu) * z_var.sqrt()
        x_rec = self.dec(torch.cat([z_mu, y], dim=1))
        return x_rec, z, z_mu, z_var


def labelled_loss(model, x, y_onehot):
    x_rec, z, z_mu, z_var = model(x, y_onehot)
    rec = F.mse_loss(x_rec, x, reduction="none").sum(dim=1)
    log_q_z = log_Gaussian_pro(z, z_mu, z_var)
    log_p_z = log_standard_normal(z)
    return (rec - log_p_z + log_q_z).mean()


def run():
    torch.manual_seed(0)
    model = SSVAE()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(16, 20)
    y = torch.randint(0, 3, (16,))
    y_onehot = F.one_hot(y, 3).float()
    opt.zero_grad()
    loss_l = labelled_loss(model, x, y_onehot)
    loss_cls = F.cross_entropy(model.cls(x), y)
    loss = loss_l + 0.1 * loss_cls
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
