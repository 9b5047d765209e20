"""Control: per-sample gradient norms are computed with torch.func (vmap over grad
of a functional_call with `{k: v.detach()}` params, as in the tutorial) only to
weight the samples; the training loss itself is an ordinary forward of the model,
so backward fills model.fc1.weight.grad with nonzero values.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.fc1.weight"
EXPECT = "grad_ok"


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


def per_sample_grad_norms(model, x, y):
    params = {k: v.detach() for k, v in model.named_parameters()}

    def sample_loss(p, xi, yi):
        out = functional_call(model, p, (xi.unsqueeze(0),))
        return F.cross_entropy(out, yi.unsqueeze(0))

    grads = vmap(grad(sample_loss), in_dims=(None, 0, 0))(params, x, y)
    sq = sum(g.flatten(1).pow(2).sum(1) for g in grads.values())
    return sq.sqrt()


def run():
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(12, 6), torch.randint(0, 3, (12,))
    norms = per_sample_grad_norms(model, x, y)
    weights = (norms / norms.sum()).detach()
    losses = F.cross_entropy(model(x), y, reduction="none")
    loss = (weights * losses).sum()  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "norms": norms, "loss": loss}
