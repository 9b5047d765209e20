"""Multi-task loss weighting with learned homoscedastic uncertainty: the
trainer turns each task's sigma into a Python float "to keep the weights
positive" before weighting. The shared trunk and heads train, but log_sigma
gets no gradient and the task weights stay at their initial value.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "weighter.log_sigma"
EXPECT = "grad_none"


class MultiTaskNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(10, 32), nn.ReLU())
        self.depth_head = nn.Linear(32, 1)
        self.seg_head = nn.Linear(32, 4)

    def forward(self, x):
        h = self.trunk(x)
        return self.depth_head(h).squeeze(1), self.seg_head(h)


class UncertaintyWeighting(nn.Module):
    def __init__(self, n_tasks):
        super().__init__()
        self.log_sigma = nn.Parameter(torch.zeros(n_tasks))

    def forward(self, losses):
        total = 0.0
        for i, l in enumerate(losses):
            sigma = float(self.log_sigma[i].exp())  # <-- CUT
            total = total + l / (2 * sigma ** 2) + np.log(sigma)
        return total


def run():
    torch.manual_seed(0)
    model = MultiTaskNet()
    weighter = UncertaintyWeighting(2)
    opt = torch.optim.Adam(list(model.parameters()) + list(weighter.parameters()), lr=1e-3)
    x = torch.randn(16, 10)
    depth_t = torch.randn(16)
    seg_t = torch.randint(0, 4, (16,))
    depth, seg = model(x)
    losses = [F.l1_loss(depth, depth_t), F.cross_entropy(seg, seg_t)]
    loss = weighter(losses)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "weighter": weighter, "loss": loss}
