"""Gradient reversal layer as a custom autograd.Function: forward(ctx, x, lambd)
takes a Python float, and backward returns (None, -lambd * grad) with the two
gradients swapped. Autograd rejects a gradient for the non-tensor input, so
loss.backward() raises."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "custom_function"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class ReverseGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lambd):
        ctx.lambd = lambd
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        return None, -ctx.lambd * grad_output  # <-- CUT


class DomainAdversarial(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
        self.cls = nn.Linear(16, 3)
        self.disc = nn.Sequential(nn.Linear(16, 8), nn.ReLU(), nn.Linear(8, 1))

    def forward(self, x, lambd):
        f = self.features(x)
        return self.cls(f), self.disc(ReverseGrad.apply(f, lambd)).squeeze(1)


def run():
    torch.manual_seed(0)
    model = DomainAdversarial()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(8, 8), torch.randint(0, 3, (8,))
    dom = torch.cat([torch.zeros(4), torch.ones(4)])
    logits, d = model(x, 0.5)
    loss = F.cross_entropy(logits, y) + F.binary_cross_entropy_with_logits(d, dom)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
