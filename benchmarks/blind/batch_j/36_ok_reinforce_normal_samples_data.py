"""Control, after the forum's "Vanilla REINFORCE for continuous distributions" script: an MLP
outputs means and log-sigmas of four 1-D Gaussians, actions are drawn with dists.sample() (no
gradient through the sample, by design), the reward is the negative MSE, and logging uses
samples.data and .item(). The score-function loss gives the MLP a proper gradient.
Thread: discuss.pytorch.org/t/25718 (Vanilla REINFORCE for continuous distributions).
"""
import torch
from torch import nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[0].weight"
EXPECT = "grad_ok"


def run():
    torch.manual_seed(0)
    batch, h = 64, 32
    model = nn.Sequential(nn.Linear(1, h), nn.Sigmoid(), nn.Linear(h, 8))
    opt = torch.optim.Adam(model.parameters(), lr=0.0005)
    history = []
    x = torch.randn(batch, 1)
    y = torch.cat([x, x ** 2, x ** 3, torch.sin(x)], dim=1)
    res = model(x)
    means, sigs = res[:, :4], torch.exp(res[:, 4:])
    dists = torch.distributions.Normal(means, sigs)
    samples = dists.sample()
    mloss = F.mse_loss(samples, y, reduction="none")
    loss = (-dists.log_prob(samples) * -mloss).mean()  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    history.append(F.mse_loss(samples.data, y.data, reduction="none").mean(dim=0))
    history.append(sigs.mean().item())
    return {"model": model, "loss": loss, "history": history}
