"""Multi-label model with one small head per attribute in an nn.ModuleList. The
forward loop assigns each head's output to the same variable instead of
collecting them, so only the last head's output reaches the concatenation:
model.heads[0].weight.grad is None (heads[-1] trains).
Thread: SO, ModuleList loop overwrites the output (pattern; thread not located).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.heads[0].weight"
EXPECT = "grad_none"


class MultiAttr(nn.Module):
    def __init__(self, d=16, n_attr=3):
        super().__init__()
        self.n_attr = n_attr
        self.trunk = nn.Sequential(nn.Linear(10, d), nn.ReLU())
        self.heads = nn.ModuleList(nn.Linear(d, 1) for _ in range(n_attr))

    def forward(self, x):
        h = self.trunk(x)
        for head in self.heads:
            out = head(h)  # <-- CUT
        return out.expand(-1, self.n_attr)


def run():
    torch.manual_seed(0)
    model = MultiAttr()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(12, 10)
    y = (torch.rand(12, 3) > 0.5).float()
    loss = F.binary_cross_entropy_with_logits(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
