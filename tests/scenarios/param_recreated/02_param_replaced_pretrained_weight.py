"""Pretrained embedding vectors are loaded with
model.emb.weight = nn.Parameter(pretrained) after the optimizer was created.
The forward uses the new Parameter; the optimizer's old embedding weight never
receives a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "param_recreated"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "opt.param_groups[0]['params'][0]"
EXPECT = "grad_none"


class BoW(nn.Module):
    def __init__(self, vocab=40, d=8, n_cls=2):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.fc = nn.Linear(d, n_cls)

    def forward(self, ids):
        return self.fc(self.emb(ids).mean(1))


def run():
    torch.manual_seed(0)
    model = BoW()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    pretrained = torch.randn(40, 8)
    model.emb.weight = nn.Parameter(pretrained)  # <-- CUT
    ids = torch.randint(0, 40, (4, 6))
    y = torch.randint(0, 2, (4,))
    loss = F.cross_entropy(model(ids), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
