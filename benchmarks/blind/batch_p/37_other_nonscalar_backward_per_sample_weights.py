"""Tabular click model with entity embeddings and per-sample importance weights.
The trainer switched the criterion to reduction='none' to apply the weights, but
the weighted vector is never reduced, so loss.backward() raises "grad can be
implicitly created only for scalar outputs".
"""
import torch
import torch.nn as nn

CAUSE = "other:nonscalar_backward"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class WideAndDeep(nn.Module):
    def __init__(self, cards=(10, 6), d=4, n_cont=2):
        super().__init__()
        self.embs = nn.ModuleList([nn.Embedding(c, d) for c in cards])
        self.wide = nn.Linear(n_cont, 1)
        self.deep = nn.Sequential(nn.Linear(d * len(cards) + n_cont, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, x_cat, x_cont):
        e = torch.cat([emb(x_cat[:, k]) for k, emb in enumerate(self.embs)] + [x_cont], -1)
        return (self.wide(x_cont) + self.deep(e)).squeeze(-1)


def run():
    torch.manual_seed(0)
    model = WideAndDeep()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    crit = nn.BCEWithLogitsLoss(reduction="none")
    x_cat = torch.stack([torch.randint(0, 10, (32,)), torch.randint(0, 6, (32,))], 1)
    x_cont = torch.randn(32, 2)
    y = (torch.rand(32) > 0.7).float()
    weights = torch.where(y > 0, torch.tensor(3.0), torch.tensor(1.0))
    logits = model(x_cat, x_cont)
    loss = crit(logits, y) * weights  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
