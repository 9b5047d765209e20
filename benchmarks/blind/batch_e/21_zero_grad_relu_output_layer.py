"""Regression MLP with a ReLU left on the output layer (chelsea0x3b/dfdx#486, ported to
PyTorch): the model learns to reproduce noisy targets that are all negative. The
output ReLU clips every prediction to 0, its derivative is 0 everywhere, and the
summed gradients of the model are exactly zero from the first step on.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "zero_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.hidden.weight"
EXPECT = "grad_zero"


class Mlp(nn.Module):
    def __init__(self, d_in=8, d_h=16, d_out=4):
        super().__init__()
        self.hidden = nn.Linear(d_in, d_h)
        self.out = nn.Linear(d_h, d_out)
        with torch.no_grad():
            self.out.bias.fill_(-1.0)
            self.out.weight.mul_(0.1)

    def forward(self, x):
        h = torch.tanh(self.hidden(x))
        y = F.relu(self.out(h))  # <-- CUT
        return y


def total_grad(model):
    return sum(p.grad.abs().sum() for p in model.parameters() if p.grad is not None)


def run():
    torch.manual_seed(0)
    model = Mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.rand(32, 8)
    target = -torch.rand(32, 4) - 0.1 * x[:, :4]
    opt.zero_grad()
    pred = model(x)
    loss = F.mse_loss(pred, target)
    loss.backward()
    gsum = total_grad(model)
    opt.step()
    return {"model": model, "loss": loss, "gsum": gsum}
