"""Pairwise ranking loss from the forum thread: softplus(tau - z / (margin + sign(margin) * thresh))
* |margin + sign(margin) * thresh|, where margin is the score gap of a pair. For a duplicated pair
the margin is exactly 0, torch.sign(0) is 0, and the denominator is 0: the forward value is finite
but the gradient is NaN, and anomaly mode raises inside backward.
Thread: forum "Incorrect Gradient Computation" (G. Bhatt, Jan 2023; K. Frank reply).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


class ScaledSoftplusRankLoss(nn.Module):
    def __init__(self, thresh=1e-10, beta=1.0, tau=1.0):
        super().__init__()
        self.thresh, self.beta, self.tau = thresh, beta, tau

    def forward(self, z, margin):
        denom = margin + torch.sign(margin) * self.thresh  # <-- CUT
        return (F.softplus(self.tau - z / denom, beta=self.beta) * torch.abs(denom)).mean()


def run():
    torch.manual_seed(0)
    scorer = Scorer()
    loss_fn = ScaledSoftplusRankLoss()
    opt = torch.optim.SGD(scorer.parameters(), lr=0.1)
    a = torch.randn(5, 6)
    b = torch.randn(5, 6)
    b[2] = a[2]                     # duplicate item pair in the batch
    z = torch.ones(5)
    with torch.autograd.detect_anomaly():
        margin = scorer(a) - scorer(b)
        loss = loss_fn(z, margin)
        opt.zero_grad()
        loss.backward()
    opt.step()
    return {"scorer": scorer, "loss": loss}
