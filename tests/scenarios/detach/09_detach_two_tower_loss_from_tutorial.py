"""Two-tower retrieval model trained with an InfoNCE loss function copied from a
SimSiam tutorial, which stops the gradient on its second argument
(`b = F.normalize(b.detach(), dim=1)`). Here the second argument is the item
tower's output, so the item tower never trains.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "item_tower[0].weight"
EXPECT = "grad_none"


def contrastive_loss(a, b, temperature=0.1):
    a = F.normalize(a, dim=1)
    b = F.normalize(b.detach(), dim=1)  # <-- CUT
    logits = a @ b.t() / temperature
    labels = torch.arange(a.shape[0])
    return F.cross_entropy(logits, labels)


def run():
    torch.manual_seed(0)
    user_tower = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 16))
    item_tower = nn.Sequential(nn.Linear(9, 32), nn.ReLU(), nn.Linear(32, 16))
    optimizer = torch.optim.Adam(
        list(user_tower.parameters()) + list(item_tower.parameters()), lr=1e-3)
    users, items = torch.randn(8, 12), torch.randn(8, 9)
    loss = contrastive_loss(user_tower(users), item_tower(items))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"user_tower": user_tower, "item_tower": item_tower, "loss": loss}
