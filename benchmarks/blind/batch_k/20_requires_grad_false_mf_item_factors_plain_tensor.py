"""Biased matrix factorisation written as an nn.Module with explicit factor matrices. The
user factors are nn.Parameter, but the item factors are stored as a plain tensor attribute
(randn * 0.1), so they are neither trained nor in model.parameters(): mf.Q.grad is None.
"""
import torch
import torch.nn as nn

CAUSE = "requires_grad_false"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "mf.Q"
EXPECT = "grad_none"


class BiasedMF(nn.Module):
    def __init__(self, n_users, n_items, k=6, global_mean=3.5):
        super().__init__()
        self.P = nn.Parameter(torch.randn(n_users, k) * 0.1)
        self.Q = torch.randn(n_items, k) * 0.1  # <-- CUT
        self.bu = nn.Parameter(torch.zeros(n_users))
        self.bi = nn.Parameter(torch.zeros(n_items))
        self.mu = global_mean

    def forward(self, u, i):
        return self.mu + self.bu[u] + self.bi[i] + (self.P[u] * self.Q[i]).sum(-1)


def train_step(mf, opt, batch, lam=0.02):
    u, i, r = batch
    pred = mf(u, i)
    reg = lam * (mf.P[u].pow(2).sum() + mf.Q[i].pow(2).sum()) / len(u)
    loss = (pred - r).pow(2).mean() + reg
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item()


def run():
    torch.manual_seed(0)
    mf = BiasedMF(30, 40)
    opt = torch.optim.SGD(mf.parameters(), lr=0.05)
    u, i = torch.randint(0, 30, (128,)), torch.randint(0, 40, (128,))
    r = torch.randint(1, 6, (128,)).float()
    loss = train_step(mf, opt, (u, i, r))
    return {"mf": mf, "loss": loss}
