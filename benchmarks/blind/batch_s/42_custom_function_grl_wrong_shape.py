"""Gradient reversal layer with a per-batch scaled backward: the user's
Function.backward returns -lambd * grad_output.mean(0) (meant as "average over
the batch"), a gradient whose shape does not match the input, so backward()
raises "returned an invalid gradient at index 0"."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "custom_function"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class GRL(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lambd):
        ctx.lambd = lambd
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        return -ctx.lambd * g.mean(0), None  # <-- CUT


class Adapter(nn.Module):
    def __init__(self):
        super().__init__()
        self.feat = nn.Linear(7, 14)
        self.dom = nn.Linear(14, 1)

    def forward(self, x, lambd=1.0):
        return self.dom(GRL.apply(torch.relu(self.feat(x)), lambd)).squeeze(1)


def run():
    torch.manual_seed(0)
    model = Adapter()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(8, 7)
    d = torch.cat([torch.zeros(4), torch.ones(4)])
    loss = F.binary_cross_entropy_with_logits(model(x), d)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
