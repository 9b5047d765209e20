"""Matrix factorization recommender: predictions are rounded to whole stars with torch.round
before the MSE so the loss "matches the rating scale". round's gradient is zero everywhere,
so the user/item embeddings get all-zero gradients and never move.
Thread: no SO/SE thread located; reconstructed from a common pattern.
"""
import torch
import torch.nn as nn

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.user_emb.weight"
EXPECT = "grad_zero"


class MF(nn.Module):
    def __init__(self, n_users=10, n_items=12, k=4):
        super().__init__()
        self.user_emb = nn.Embedding(n_users, k)
        self.item_emb = nn.Embedding(n_items, k)

    def forward(self, u, i):
        raw = 3.0 + (self.user_emb(u) * self.item_emb(i)).sum(-1)
        stars = torch.round(raw).clamp(1, 5)  # <-- CUT
        return stars


def run():
    torch.manual_seed(0)
    model = MF()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    users = torch.randint(0, 10, (32,))
    items = torch.randint(0, 12, (32,))
    ratings = torch.randint(1, 6, (32,)).float()
    loss = nn.functional.mse_loss(model(users, items), ratings)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
