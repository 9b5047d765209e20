"""A cosine classifier turns its learnable log-scale into a Python number with
np.exp(float(self.log_scale)) inside forward. The scale multiplies the logits
as a constant, so log_scale.grad is None while the other weights train.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.log_scale"
EXPECT = "grad_none"


class CosineHead(nn.Module):
    def __init__(self, d=8, n=4):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n, d))
        self.log_scale = nn.Parameter(torch.tensor(2.0))

    def forward(self, h):
        s = np.exp(float(self.log_scale))  # <-- CUT
        return s * F.normalize(h, dim=1) @ F.normalize(self.weight, dim=1).t()


def run():
    torch.manual_seed(0)
    model = CosineHead()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    h = torch.randn(6, 8)
    y = torch.randint(0, 4, (6,))
    loss = F.cross_entropy(model(h), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
