"""Bayesian linear layer whose rho was initialised at -120 (a typo for -12):
softplus(rho) underflows to exactly 0 in float32, so the closed-form KL's
log(sigma) is -inf and weight_rho.grad comes back NaN (inf * 0).
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nonfinite_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.layer.weight_rho"
EXPECT = "grad_nonfinite"

CFG = {"rho_init": -120.0, "prior_sigma": 0.1}


class BayesLinear(nn.Module):
    def __init__(self, i, o):
        super().__init__()
        self.weight_mu = nn.Parameter(torch.randn(o, i) * 0.1)
        self.weight_rho = nn.Parameter(torch.full((o, i), CFG["rho_init"]))

    def forward(self, x):
        sigma = F.softplus(self.weight_rho)
        w = self.weight_mu + sigma * torch.randn_like(sigma)
        p = CFG["prior_sigma"]
        log_sigma = torch.log(sigma)  # <-- CUT
        self.kl = (np.log(p) - log_sigma + (sigma ** 2 + self.weight_mu ** 2) / (2 * p ** 2) - 0.5).sum()
        return F.linear(x, w)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = BayesLinear(4, 3)

    def forward(self, x):
        return self.layer(x)


def run():
    torch.manual_seed(0)
    model = Model()
    x, y = torch.randn(16, 4), torch.randn(16, 3)
    loss = F.mse_loss(model(x), y) + 1e-3 * model.layer.kl
    loss.backward()
    return {"model": model, "loss": loss}
