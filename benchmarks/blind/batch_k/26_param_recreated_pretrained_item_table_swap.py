"""Two-tower retrieval model. The trainer builds the optimizer in __init__, and only later
load_pretrained() replaces model.item_tower.emb with a new nn.Embedding.from_pretrained(...,
freeze=False). The new table trains through autograd, but the optimizer's old table gets no grad.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "param_recreated"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "trainer.opt.param_groups[0]['params'][5]"
EXPECT = "grad_none"


class Tower(nn.Module):
    def __init__(self, n, d=16):
        super().__init__()
        self.emb = nn.Embedding(n, d)
        self.mlp = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, d))

    def forward(self, ids):
        return F.normalize(self.mlp(self.emb(ids)), dim=-1)


class TwoTower(nn.Module):
    def __init__(self, n_users, n_items):
        super().__init__()
        self.user_tower, self.item_tower = Tower(n_users), Tower(n_items)

    def forward(self, u, i):
        return self.user_tower(u) @ self.item_tower(i).t()


class Trainer:
    def __init__(self, model, temperature=0.1):
        self.model, self.tau = model, temperature
        self.opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def load_pretrained(self, item_vectors):
        self.model.item_tower.emb = nn.Embedding.from_pretrained(item_vectors, freeze=False)  # <-- CUT

    def step(self, u, i):
        logits = self.model(u, i) / self.tau
        loss = F.cross_entropy(logits, torch.arange(len(u)))
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()


def run():
    torch.manual_seed(0)
    trainer = Trainer(TwoTower(50, 80))
    trainer.load_pretrained(torch.randn(80, 16) * 0.1)
    loss = trainer.step(torch.randint(0, 50, (32,)), torch.randint(0, 80, (32,)))
    return {"trainer": trainer, "loss": loss}
