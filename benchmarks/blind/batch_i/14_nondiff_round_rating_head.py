"""Recommender that predicts star ratings and rounds them to half stars with
torch.round inside forward, so the MSE is computed on the "real" rating values.
round() has a zero derivative, so the rating head's grad exists but is all zeros:
model.rating_head.weight.grad is exactly zero.
Thread: SO, rounding model outputs kills the gradient (pattern; thread not located).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.rating_head.weight"
EXPECT = "grad_zero"


class MFRecommender(nn.Module):
    def __init__(self, n_users=20, n_items=30, d=8):
        super().__init__()
        self.users = nn.Embedding(n_users, d)
        self.items = nn.Embedding(n_items, d)
        self.rating_head = nn.Linear(2 * d, 1)

    def forward(self, u, i):
        h = torch.cat([self.users(u), self.items(i)], dim=-1)
        raw = 3.0 + self.rating_head(h).squeeze(-1)
        return torch.round(raw * 2) / 2  # <-- CUT


def run():
    torch.manual_seed(0)
    model = MFRecommender()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    u = torch.randint(0, 20, (32,))
    i = torch.randint(0, 30, (32,))
    r = torch.randint(1, 6, (32,)).float()
    pred = model(u, i)
    loss = F.mse_loss(pred, r)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss, "pred": pred}
