"""Depth completion: where the sparse sensor is valid, the loss uses the refined
prediction; elsewhere the coarse head's output is used through `coarse.detach()`
("no grad through the fallback"). The coarse head is only reached via that branch.
"""
import torch
import torch.nn as nn

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.coarse.weight"
EXPECT = "grad_none"


class Completion(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(12, 12)
        self.coarse = nn.Linear(12, 12)
        self.refine = nn.Linear(12, 12)

    def forward(self, x, valid):
        h = torch.relu(self.backbone(x))
        coarse = self.coarse(h)
        refined = self.refine(h)
        return torch.where(valid, refined, coarse.detach())  # <-- CUT


def run():
    torch.manual_seed(0)
    model = Completion()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, target = torch.randn(4, 12), torch.randn(4, 12)
    valid = torch.rand(4, 12) > 0.3
    pred = model(x, valid)
    loss = ((pred - target) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
