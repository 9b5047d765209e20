"""Curve fitting with torch.optim.LBFGS and a closure (pytorch/pytorch#160389, the
"Converting a tensor with requires_grad=True to a scalar" warning seen inside LBFGS
closures): the model turns its learnable log-amplitude into a Python float with
float(...) so it can be printed, then scales the basis with it. LBFGS still steps
the coefficients, but model.log_amp.grad is None."""
import torch
import torch.nn as nn

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.log_amp"
EXPECT = "grad_none"


class RBFModel(nn.Module):
    def __init__(self, n=8):
        super().__init__()
        self.coef = nn.Parameter(torch.full((n,), 0.1))
        self.log_amp = nn.Parameter(torch.tensor(0.0))
        self.register_buffer("centers", torch.linspace(0, 1, n))
        self.trace = []

    def forward(self, t):
        amp = float(self.log_amp.exp())  # <-- CUT
        self.trace.append(amp)
        basis = torch.exp(-((t[:, None] - self.centers[None, :]) ** 2) / 0.02)
        return amp * (basis @ self.coef)


def run():
    torch.manual_seed(0)
    t = torch.rand(40)
    y = 3.0 * torch.sin(6 * t) + 0.05 * torch.randn(40)
    model = RBFModel()
    opt = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=3)

    def closure():
        opt.zero_grad()
        loss = ((model(t) - y) ** 2).mean() + 1e-3 * model.coef.pow(2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    return {"model": model}
