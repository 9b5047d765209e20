"""The training loss is a soft-Dice "metric object" reused from the evaluation code.
Its `__call__` goes through two helpers, and the inner one computes the overlap in
numpy; the returned loss has no grad_fn, so `loss.backward()` raises.
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


def _overlap(p, t):
    p_np = p.detach().cpu().numpy()  # <-- CUT
    return (p_np * t).sum(), p_np.sum() + t.sum()


def _dice(p, t, eps):
    inter, total = _overlap(p, t)
    return 1.0 - (2 * inter + eps) / (total + eps)


class DiceLoss:
    def __init__(self, eps=1.0):
        self.eps = eps

    def __call__(self, logits, target):
        d = _dice(torch.sigmoid(logits), target.numpy(), self.eps)
        return torch.from_numpy(np.asarray(d, dtype=np.float32))


def run():
    torch.manual_seed(0)
    model = nn.Conv2d(1, 1, 3, padding=1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(2, 1, 8, 8)
    target = (torch.rand(2, 1, 8, 8) > 0.5).float()
    loss = DiceLoss()(model(x), target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
