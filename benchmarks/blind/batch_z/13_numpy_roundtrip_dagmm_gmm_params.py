"""PyTorch-DAGMM#4 "Loss is not reducing and gradients are coming up as None"
(tabular anomaly detection, KDDCup-style features). compute_gmm_params() moves the
soft memberships gamma to numpy "for numerical stability" and returns phi, mu and cov
through torch.from_numpy. The energy still trains the compression net through z, but
the estimation network's weights get no gradient.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.estimation[0].weight"
EXPECT = "grad_none"

ARGS = {"n_gmm": 3, "z_dim": 1, "lambda_energy": 0.1, "lambda_cov": 0.005}


class DAGMM(nn.Module):
    def __init__(self, n_features=12, n_gmm=3, z_dim=1):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(n_features, 8), nn.Tanh(), nn.Linear(8, z_dim))
        self.decoder = nn.Sequential(nn.Linear(z_dim, 8), nn.Tanh(), nn.Linear(8, n_features))
        self.estimation = nn.Sequential(nn.Linear(z_dim + 2, 10), nn.Tanh(), nn.Dropout(0.0),
                                        nn.Linear(10, n_gmm), nn.Softmax(dim=1))

    def forward(self, x):
        z_c = self.encoder(x)
        x_hat = self.decoder(z_c)
        rec_euclid = (x - x_hat).norm(dim=1) / x.norm(dim=1)
        rec_cosine = F.cosine_similarity(x, x_hat, dim=1)
        z = torch.cat([z_c, rec_euclid.unsqueeze(-1), rec_cosine.unsqueeze(-1)], dim=1)
        gamma = self.estimation(z)
        return z_c, x_hat, z, gamma


def compute_gmm_params(z, gamma):
    gamma_np = gamma.detach().cpu().numpy()  # <-- CUT
    n_k = gamma_np.sum(0)
    phi = torch.from_numpy(n_k / gamma_np.shape[0]).float()
    weights = torch.from_numpy(gamma_np / n_k).float()
    mu = weights.t() @ z
    diff = z.unsqueeze(1) - mu.unsqueeze(0)
    cov = torch.einsum("nk,nki,nkj->kij", weights, diff, diff)
    return phi, mu, cov


def compute_energy(z, phi, mu, cov, eps=1e-6):
    k, d = cov.shape[0], cov.shape[1]
    cov = cov + eps * torch.eye(d).expand(k, d, d)
    diff = z.unsqueeze(1) - mu.unsqueeze(0)
    maha = torch.einsum("nki,kij,nkj->nk", diff, torch.linalg.inv(cov), diff)
    log_det = torch.logdet(2 * torch.pi * cov)
    log_p = torch.log(phi) - 0.5 * (maha + log_det)
    energy = -torch.logsumexp(log_p, dim=1).mean()
    cov_diag = (1.0 / torch.diagonal(cov, dim1=-2, dim2=-1)).sum()
    return energy, cov_diag


def run():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.normal(size=(32, 12)).astype(np.float32))
    model = DAGMM(n_gmm=ARGS["n_gmm"], z_dim=ARGS["z_dim"])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    model.train()
    z_c, x_hat, z, gamma = model(x)
    phi, mu, cov = compute_gmm_params(z, gamma)
    energy, cov_diag = compute_energy(z, phi, mu, cov)
    rec = F.mse_loss(x_hat, x)
    loss = rec + ARGS["lambda_energy"] * energy + ARGS["lambda_cov"] * cov_diag
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "loss": loss}
