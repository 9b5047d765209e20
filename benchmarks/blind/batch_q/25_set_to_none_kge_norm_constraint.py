"""TransE trainer with an entity-norm constraint applied by a `regularize()` hook
that the trainer calls between `loss.backward()` and `opt.step()`. The hook
starts with `self.opt.zero_grad()` (copied from its own loss step), which sets
every .grad to None before the step reads them.
"""
import torch
import torch.nn as nn

CAUSE = "set_to_none_timing"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.rel.weight"
EXPECT = "grad_none"


class TransE(nn.Module):
    def __init__(self, n_ent=40, n_rel=6, d=16):
        super().__init__()
        self.ent = nn.Embedding(n_ent, d)
        self.rel = nn.Embedding(n_rel, d)

    def distance(self, h, r, t):
        return (self.ent(h) + self.rel(r) - self.ent(t)).norm(p=1, dim=-1)


class KGETrainer:
    def __init__(self, margin=1.0):
        self.model = TransE()
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.01)
        self.margin = margin

    def regularize(self):
        self.opt.zero_grad()  # <-- CUT
        with torch.no_grad():
            w = self.model.ent.weight
            w.div_(w.norm(dim=-1, keepdim=True).clamp(min=1.0))

    def step(self, h, r, t, t_neg):
        pos = self.model.distance(h, r, t)
        neg = self.model.distance(h, r, t_neg)
        loss = torch.relu(self.margin + pos - neg).mean()
        self.opt.zero_grad()
        loss.backward()
        self.regularize()
        self.opt.step()
        return loss


def run():
    torch.manual_seed(0)
    tr = KGETrainer()
    h, r, t = torch.randint(0, 40, (10,)), torch.randint(0, 6, (10,)), torch.randint(0, 40, (10,))
    loss = tr.step(h, r, t, torch.randint(0, 40, (10,)))
    return {"model": tr.model, "loss": loss}
