"""Ensemble with learned mixing weights: member logits are stacked and then
copied with torch.tensor(stacked) "to make a contiguous tensor" before the
softmax-weighted combination. The mixing weights train, the members do not."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "tensor_rewrap"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "ens.members[1].weight"
EXPECT = "grad_none"


class WeightedEnsemble(nn.Module):
    def __init__(self, n=3):
        super().__init__()
        self.members = nn.ModuleList([nn.Linear(6, 4) for _ in range(n)])
        self.mix = nn.Parameter(torch.zeros(n))

    def forward(self, x):
        stacked = torch.stack([m(x) for m in self.members])
        stacked = torch.tensor(stacked)  # <-- CUT
        w = F.softmax(self.mix, 0)
        return (w[:, None, None] * stacked).sum(0)


def run():
    torch.manual_seed(0)
    ens = WeightedEnsemble()
    opt = torch.optim.Adam(ens.parameters(), lr=1e-2)
    x, y = torch.randn(9, 6), torch.randint(0, 4, (9,))
    loss = F.cross_entropy(ens(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"ens": ens, "loss": loss}
