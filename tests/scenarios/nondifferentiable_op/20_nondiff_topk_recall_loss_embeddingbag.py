"""Recommender: user profiles from an EmbeddingBag of watched items, scored
against all items. The loss is written as 1 - recall@k computed from the
topk indices, which carry no gradient, so loss.backward() raises because
nothing in the loss requires grad.
"""
import torch
import torch.nn as nn

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "None"
EXPECT = "backward_error"


class TwoTower(nn.Module):
    def __init__(self, n_items, d):
        super().__init__()
        self.user_bag = nn.EmbeddingBag(n_items, d, mode="mean")
        self.items = nn.Embedding(n_items, d)

    def forward(self, hist, offsets):
        u = self.user_bag(hist, offsets)
        return u @ self.items.weight.T


def recall_at_k(scores, positives, k):
    top = scores.topk(k, dim=1).indices  # <-- CUT
    hits = (top.unsqueeze(-1) == positives.unsqueeze(1)).any(-1).float()
    return hits.sum(1) / positives.shape[1]


def run():
    torch.manual_seed(0)
    n_items = 50
    model = TwoTower(n_items, 16)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    hist = torch.randint(0, n_items, (24,))
    offsets = torch.tensor([0, 6, 12, 18])
    positives = torch.randint(0, n_items, (4, 3))
    scores = model(hist, offsets)
    loss = 1.0 - recall_at_k(scores, positives, k=10).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
