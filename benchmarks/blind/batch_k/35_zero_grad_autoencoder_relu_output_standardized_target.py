"""Tabular autoencoder with a ReLU on its output layer (copied from an image AE with inputs in
[0, 1]). The data are now standardised, and the output bias is initialised from the feature
means (all negative here), so every output unit is dead: ae.dec[-1].weight.grad is all zeros.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "zero_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "ae.dec[-1].weight"
EXPECT = "grad_zero"


class TabularAE(nn.Module):
    def __init__(self, d=10, code=4):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(d, 16), nn.ReLU(), nn.Linear(16, code))
        self.dec = nn.Sequential(nn.Linear(code, 16), nn.ReLU(), nn.Linear(16, d))

    def init_output_bias(self, feature_means):
        with torch.no_grad():
            self.dec[-1].bias.copy_(feature_means)
            self.dec[-1].weight.mul_(0.01)

    def forward(self, x):
        return F.relu(self.dec(self.enc(x)))  # <-- CUT


def standardize(X, shift):
    return (X - X.mean(0)) / X.std(0) - shift


def run():
    torch.manual_seed(0)
    raw = torch.randn(64, 10) * 3 + 5
    X = standardize(raw, shift=2.0)
    ae = TabularAE()
    ae.init_output_bias(X.mean(0))
    opt = torch.optim.Adam(ae.parameters(), lr=1e-3)
    loss = F.mse_loss(ae(X), X)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"ae": ae, "loss": loss}
