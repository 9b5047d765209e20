"""Knowledge-graph completion (DistMult) warm-started from pretrained entity
vectors. Freezing "the embeddings" by `if "emb" in name` also freezes the new
relation table `rel_emb`. The scorer MLP trains; the relation embeddings get no
gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.rel_emb.weight"
EXPECT = "grad_none"


class DistMultPlus(nn.Module):
    def __init__(self, n_ent=30, n_rel=5, d=16):
        super().__init__()
        self.ent_emb = nn.Embedding(n_ent, d)
        self.rel_emb = nn.Embedding(n_rel, d)
        self.proj = nn.Linear(d, d)

    def score(self, h, r, t):
        eh, et = self.proj(self.ent_emb(h)), self.proj(self.ent_emb(t))
        return (eh * self.rel_emb(r) * et).sum(-1)


def freeze_pretrained(model):
    for name, p in model.named_parameters():
        if "emb" in name:
            p.requires_grad = False  # <-- CUT


def run():
    torch.manual_seed(0)
    model = DistMultPlus()
    pretrained = torch.randn(30, 16)
    model.ent_emb.weight.data.copy_(pretrained)
    freeze_pretrained(model)
    opt = torch.optim.Adagrad([p for p in model.parameters() if p.requires_grad], lr=0.05)
    h, r, t = torch.randint(0, 30, (8,)), torch.randint(0, 5, (8,)), torch.randint(0, 30, (8,))
    t_neg = torch.randint(0, 30, (8,))
    pos, neg = model.score(h, r, t), model.score(h, r, t_neg)
    loss = F.softplus(-pos).mean() + F.softplus(neg).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
