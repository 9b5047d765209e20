"""A memory-efficient activation in the style of timm's `*_me` autograd Functions, extended by the
user with a learnable beta (Swish-beta). The custom backward returns the input gradient and
None for beta, so beta.grad stays None while the rest of the network trains.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "custom_function"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.act.beta"
EXPECT = "grad_none"


class SwishBetaAutoFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, beta):
        ctx.save_for_backward(x, beta)
        return x * torch.sigmoid(beta * x)

    @staticmethod
    def backward(ctx, grad_output):
        x, beta = ctx.saved_tensors
        s = torch.sigmoid(beta * x)
        grad_x = grad_output * (s + beta * x * s * (1 - s))
        return grad_x, None  # <-- CUT


class SwishBetaMe(nn.Module):
    def __init__(self):
        super().__init__()
        self.beta = nn.Parameter(torch.ones(1))

    def forward(self, x):
        return SwishBetaAutoFn.apply(x, self.beta)


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.act = SwishBetaMe()
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        return self.head(self.act(self.conv(x)).mean((2, 3)))


def run():
    torch.manual_seed(0)
    model = ConvNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(4, 3, 8, 8), torch.tensor([0, 1, 2, 3])
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
