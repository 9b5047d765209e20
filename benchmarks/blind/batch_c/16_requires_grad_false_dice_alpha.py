"""DIN-style CTR model whose attention unit uses the Dice activation. Dice stores its
alpha as self.alpha = torch.zeros((emb_size,)).to(device), a plain tensor instead of an
nn.Parameter: it is used in every forward, but it is not in model.parameters(), never
requires grad, and stays at its initial value (alpha.grad is None).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "requires_grad_false"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.attention.dice.alpha"
EXPECT = "grad_none"


class Dice(nn.Module):
    def __init__(self, emb_size, dim=2, epsilon=1e-8, device="cpu"):
        super().__init__()
        self.bn = nn.BatchNorm1d(emb_size, eps=epsilon)
        self.sigmoid = nn.Sigmoid()
        self.dim = dim
        self.alpha = torch.zeros((emb_size,)).to(device)  # <-- CUT

    def forward(self, x):
        x_p = self.sigmoid(self.bn(x))
        return self.alpha * (1 - x_p) * x + x_p * x


class LocalActivationUnit(nn.Module):
    def __init__(self, emb=8, hidden=16):
        super().__init__()
        self.fc1 = nn.Linear(4 * emb, hidden)
        self.dice = Dice(hidden)
        self.fc2 = nn.Linear(hidden, 1)

    def forward(self, query, keys):
        q = query.unsqueeze(1).expand_as(keys)
        att_in = torch.cat([q, keys, q - keys, q * keys], dim=-1)
        b, t, _ = att_in.shape
        h = self.dice(self.fc1(att_in).view(b * t, -1)).view(b, t, -1)
        return self.fc2(h)


class DIN(nn.Module):
    def __init__(self, n_items=50, emb=8):
        super().__init__()
        self.item_emb = nn.Embedding(n_items, emb)
        self.attention = LocalActivationUnit(emb)
        self.dnn = nn.Sequential(nn.Linear(2 * emb, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, target_item, hist_items):
        q, keys = self.item_emb(target_item), self.item_emb(hist_items)
        w = self.attention(q, keys)
        user = (w * keys).sum(dim=1)
        return self.dnn(torch.cat([user, q], dim=-1)).squeeze(-1)


def run():
    torch.manual_seed(0)
    model = DIN()
    optim = torch.optim.Adagrad(model.parameters(), lr=0.01)
    target = torch.randint(0, 50, (16,))
    hist = torch.randint(0, 50, (16, 5))
    clicks = torch.randint(0, 2, (16,)).float()
    loss = F.binary_cross_entropy_with_logits(model(target, hist), clicks)
    optim.zero_grad()
    loss.backward()
    optim.step()
    return {"model": model, "optim": optim, "loss": loss}
