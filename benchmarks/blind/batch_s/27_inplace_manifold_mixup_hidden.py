"""Manifold mixup written by hand: the hidden state after ReLU is mixed in place
(h.mul_(lam).add_(...)) to save memory. ReLU saved its output for backward, so
loss.backward() raises "modified by an inplace operation"."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class MixNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x, lam=None, perm=None):
        h = F.relu(self.fc1(x))
        if lam is not None:
            h.mul_(lam).add_((1 - lam) * h[perm].detach())  # <-- CUT
        return self.fc2(h)


def run():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    lam = float(rng.beta(2.0, 2.0))
    model = MixNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(8, 8)
    y = F.one_hot(torch.randint(0, 4, (8,)), 4).float()
    perm = torch.randperm(8)
    logits = model(x, lam, perm)
    y_mix = lam * y + (1 - lam) * y[perm]
    loss = -(y_mix * F.log_softmax(logits, 1)).sum(1).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
