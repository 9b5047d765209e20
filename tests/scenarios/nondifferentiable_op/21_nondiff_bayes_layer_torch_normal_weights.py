"""Bayes-by-backprop linear layer: weights are drawn with
torch.normal(mu, sigma), which the author took for a reparameterised sample.
torch.normal's derivative w.r.t. mean and std is zero, so mu's grad exists (the
KL term is switched off during warm-up) but is all zeros.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.fc1.mu"
EXPECT = "grad_zero"


class BayesLinear(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.mu = nn.Parameter(torch.randn(d_out, d_in) * 0.1)
        self.rho = nn.Parameter(torch.full((d_out, d_in), -3.0))
        self.bias = nn.Parameter(torch.zeros(d_out))

    def kl(self):
        sigma = F.softplus(self.rho)
        return (0.5 * (sigma ** 2 + self.mu ** 2) - sigma.log() - 0.5).sum()

    def forward(self, x):
        sigma = F.softplus(self.rho)
        w = torch.normal(self.mu, sigma)  # <-- CUT
        return F.linear(x, w, self.bias)


class BNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = BayesLinear(4, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def run():
    torch.manual_seed(0)
    model = BNN()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(32, 4)
    y = torch.randint(0, 3, (32,))
    kl_weight = 0.0
    loss = F.cross_entropy(model(x), y) + kl_weight * model.fc1.kl() / 32
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
