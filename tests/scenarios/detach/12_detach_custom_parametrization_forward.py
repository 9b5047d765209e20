"""Unit-norm rows via torch.nn.utils.parametrize. The custom parametrization's
forward starts with `X = X.detach()` ("the norm should not get gradients"),
which detaches the whole weight, so `parametrizations.weight.original`
never gets a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.parametrize as parametrize

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.fc.parametrizations.weight.original"
EXPECT = "grad_none"


class RowNormalize(nn.Module):
    def forward(self, X):
        X = X.detach()  # <-- CUT
        return X / X.norm(dim=1, keepdim=True).clamp_min(1e-6)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)
        self.out = nn.Linear(4, 1)

    def forward(self, x):
        return self.out(torch.tanh(self.fc(x)))


def run():
    torch.manual_seed(0)
    model = Net()
    parametrize.register_parametrization(model.fc, "weight", RowNormalize())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(12, 8), torch.randn(12, 1)
    opt.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
