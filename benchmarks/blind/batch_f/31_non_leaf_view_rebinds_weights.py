"""After pytorch/pytorch#8474 ("Sometimes gradient doesn't back-propagate after view"):
learnable per-sample weights are created with `.requires_grad_()` and then rebound with
`sample_w = sample_w.view(-1, 1)` for broadcasting. The name now holds a non-leaf view;
its .grad is None after backward (maintainers: check the leaf, or call retain_grad()).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "sample_w"
EXPECT = "grad_none"


def reweighted_loss(pred, target, sample_w, temperature=1.0):
    per_sample = F.mse_loss(pred, target, reduction="none")
    w = torch.softmax(sample_w / temperature, dim=0) * sample_w.shape[0]
    return (w * per_sample).mean()


def run():
    torch.manual_seed(0)
    n, d = 12, 4
    model = nn.Sequential(nn.Linear(d, 8), nn.Tanh(), nn.Linear(8, 1))
    x = torch.randn(n, d)
    y = x.sum(dim=1, keepdim=True) + 0.1 * torch.randn(n, 1)
    sample_w = torch.zeros(n).requires_grad_()
    sample_w = sample_w.view(-1, 1)  # <-- CUT
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    loss = reweighted_loss(model(x), y, sample_w)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"sample_w": sample_w, "model": model, "loss": loss}
