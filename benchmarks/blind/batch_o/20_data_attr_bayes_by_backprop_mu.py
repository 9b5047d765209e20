"""Bayes-by-backprop linear layer: the sampled weight is built as
weight_mu.data + softplus(weight_rho) * eps, copied from an EMA snippet. With the KL
annealed to 0, rho and the bias get gradients through the reparameterization, but weight_mu.grad is
None, so the posterior means never move.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_attr"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.fc1.weight_mu"
EXPECT = "grad_none"


class BayesLinear(nn.Module):
    def __init__(self, i, o, prior_sigma=1.0):
        super().__init__()
        self.weight_mu = nn.Parameter(torch.empty(o, i).uniform_(-0.2, 0.2))
        self.weight_rho = nn.Parameter(torch.full((o, i), -4.0))
        self.bias = nn.Parameter(torch.zeros(o))
        self.prior_sigma = prior_sigma
        self.kl = 0.0

    def forward(self, x):
        sigma = F.softplus(self.weight_rho)
        eps = torch.randn_like(sigma)
        w = self.weight_mu.data + sigma * eps  # <-- CUT
        self.kl = (torch.log(self.prior_sigma / sigma)
                   + (sigma ** 2 + self.weight_mu ** 2) / (2 * self.prior_sigma ** 2) - 0.5).sum()
        return F.linear(x, w, self.bias)


class BNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = BayesLinear(5, 16)
        self.fc2 = BayesLinear(16, 1)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))

    def kl(self):
        return self.fc1.kl + self.fc2.kl


def run():
    torch.manual_seed(0)
    model = BNN()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    x, y = torch.randn(32, 5), torch.randn(32, 1)
    nll = F.mse_loss(model(x), y, reduction="sum")
    kl_weight = 0.0  # KL annealing: 0 during the first epochs
    loss = nll
    if kl_weight > 0:
        loss = loss + kl_weight * model.kl()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
