"""Neural matrix factorisation with optional item side features. forward()
returns the plain dot product when no side features are passed, and the trainer's
batches never carry them, so the side-feature projection never enters the graph
and its weight grad stays None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.side_proj.weight"
EXPECT = "grad_none"


class NeuMF(nn.Module):
    def __init__(self, n_users=40, n_items=60, n_side=5, d=8):
        super().__init__()
        self.user = nn.Embedding(n_users, d)
        self.item = nn.Embedding(n_items, d)
        self.user_bias = nn.Embedding(n_users, 1)
        self.item_bias = nn.Embedding(n_items, 1)
        self.side_proj = nn.Linear(n_side, d)

    def forward(self, u, i, side=None):
        pu, qi = self.user(u), self.item(i)
        base = self.user_bias(u).squeeze(-1) + self.item_bias(i).squeeze(-1)
        if side is None:
            return base + (pu * qi).sum(-1)  # <-- CUT
        qi = qi + self.side_proj(side)
        return base + (pu * qi).sum(-1)


class RatingsBatches:
    def __init__(self, n=48):
        self.u = torch.randint(0, 40, (n,))
        self.i = torch.randint(0, 60, (n,))
        self.r = torch.randint(1, 6, (n,)).float()
        self.side = torch.randn(60, 5)

    def __iter__(self):
        yield {"user": self.u, "item": self.i, "rating": self.r}


def run():
    torch.manual_seed(0)
    model = NeuMF()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    data = RatingsBatches()
    for batch in data:
        pred = model(batch["user"], batch["item"], batch.get("side"))
        loss = F.mse_loss(pred, batch["rating"])
        opt.zero_grad()
        loss.backward()
        opt.step()
    return {"model": model, "loss": loss}
