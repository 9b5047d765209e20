"""TransE-style trainer that L2-normalises the entity table once, before the batch
loop ("the constraint only needs to hold at the start of the epoch"), and then
indexes the normalised table in every batch. The second batch's backward goes
through the normalisation graph freed by the first and raises "Trying to
backward through the graph a second time".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "backward_twice"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class TransE(nn.Module):
    def __init__(self, n_ent=30, n_rel=4, d=12):
        super().__init__()
        self.ent = nn.Embedding(n_ent, d)
        self.rel = nn.Embedding(n_rel, d)


def run():
    torch.manual_seed(0)
    model = TransE()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    triples = torch.stack([torch.randint(0, 30, (24,)), torch.randint(0, 4, (24,)), torch.randint(0, 30, (24,))], 1)
    ent_n = F.normalize(model.ent.weight, dim=-1)  # <-- CUT
    for batch in triples.split(8):
        h, r, t = batch.unbind(1)
        t_neg = torch.randint(0, 30, t.shape)
        pos = (ent_n[h] + model.rel(r) - ent_n[t]).norm(dim=-1)
        neg = (ent_n[h] + model.rel(r) - ent_n[t_neg]).norm(dim=-1)
        loss = F.relu(1.0 + pos - neg).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return {"model": model, "loss": loss}
