"""Two-tower recommender trained with in-batch softmax. The item tower's output is
detached inside ItemTower.forward, left over from the code that fills the ANN
index cache. The user tower trains, the item tower gets no gradient at all.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.item_tower.mlp[0].weight"
EXPECT = "grad_none"


class UserTower(nn.Module):
    def __init__(self, n_users, d):
        super().__init__()
        self.emb = nn.Embedding(n_users, d)
        self.mlp = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, d))

    def forward(self, u):
        return F.normalize(self.mlp(self.emb(u)), dim=-1)


class ItemTower(nn.Module):
    def __init__(self, n_items, n_genres, d):
        super().__init__()
        self.emb = nn.Embedding(n_items, d)
        self.genre = nn.Embedding(n_genres, d)
        self.mlp = nn.Sequential(nn.Linear(2 * d, d), nn.ReLU(), nn.Linear(d, d))

    def forward(self, i, g):
        z = self.mlp(torch.cat([self.emb(i), self.genre(g)], dim=-1))
        return F.normalize(z, dim=-1).detach()  # <-- CUT


class TwoTower(nn.Module):
    def __init__(self, n_users=50, n_items=80, n_genres=6, d=16):
        super().__init__()
        self.user_tower = UserTower(n_users, d)
        self.item_tower = ItemTower(n_items, n_genres, d)
        self.log_temp = nn.Parameter(torch.tensor(0.0))

    def forward(self, u, i, g):
        uv, iv = self.user_tower(u), self.item_tower(i, g)
        return uv @ iv.t() / self.log_temp.exp().clamp(min=0.05)


def run():
    torch.manual_seed(0)
    model = TwoTower()
    opt = torch.optim.Adagrad(model.parameters(), lr=0.05)
    users = torch.randint(0, 50, (32,))
    items = torch.randint(0, 80, (32,))
    genres = items % 6
    logits = model(users, items, genres)
    loss = F.cross_entropy(logits, torch.arange(32))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
