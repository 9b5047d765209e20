"""WGAN-GP debugging: the user reads interpolates.grad after backward to inspect the critic's
input gradient, but interpolates is built by arithmetic from a leaf alpha, so .grad is None.
Thread: Zeleni9/pytorch-wgan#20 WGAN-GP critic step (adapted)."""
import torch
import torch.nn as nn

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "interpolates"
EXPECT = "grad_none"


def run():
    torch.manual_seed(0)
    critic = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    real, fake = torch.randn(5, 4), torch.randn(5, 4)
    alpha = torch.rand(5, 1, requires_grad=True)
    interpolates = alpha * real + (1 - alpha) * fake  # <-- CUT
    out = critic(interpolates)
    out.sum().backward()
    return {"interpolates": interpolates, "alpha": alpha}
