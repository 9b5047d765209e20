"""Control: TransE with the classic entity-norm constraint applied after the
optimizer step through `.data` (`ent.weight.data = F.normalize(...)`), margin loss
logged with `.item()`, and negatives drawn with torch.randint. The constraint
touches only the values, so the entity table keeps its gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.ent.weight"
EXPECT = "grad_ok"


class TransE(nn.Module):
    def __init__(self, n_ent=30, n_rel=5, d=12):
        super().__init__()
        self.ent = nn.Embedding(n_ent, d)
        self.rel = nn.Embedding(n_rel, d)

    def forward(self, h, r, t):
        return (self.ent(h) + self.rel(r) - self.ent(t)).norm(p=2, dim=-1)


def run():
    torch.manual_seed(0)
    model = TransE()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    h, r, t = torch.randint(0, 30, (16,)), torch.randint(0, 5, (16,)), torch.randint(0, 30, (16,))
    t_neg = torch.randint(0, 30, (16,))
    loss = F.relu(1.0 + model(h, r, t) - model(h, r, t_neg)).mean()  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    model.ent.weight.data = F.normalize(model.ent.weight.data, dim=-1)
    history = [loss.item()]
    return {"model": model, "loss": loss, "history": history}
