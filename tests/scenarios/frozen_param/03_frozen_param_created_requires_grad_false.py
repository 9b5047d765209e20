"""A learnable positional bias is declared by copying a line that registers a
fixed table: nn.Parameter(torch.zeros(...), requires_grad=False). The bias
is in parameters() but never trains: its .grad stays None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.pos_bias"
EXPECT = "grad_none"


class Tagger(nn.Module):
    def __init__(self, d=8, T=6, n_tags=5):
        super().__init__()
        self.proj = nn.Linear(d, n_tags)
        self.pos_bias = nn.Parameter(torch.zeros(T, n_tags), requires_grad=False)  # <-- CUT

    def forward(self, x):
        return self.proj(x) + self.pos_bias


def run():
    torch.manual_seed(0)
    model = Tagger()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(3, 6, 8)
    tags = torch.randint(0, 5, (3, 6))
    loss = F.cross_entropy(model(x).reshape(-1, 5), tags.reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
