"""pytorch/pytorch#36923 ("backprop through torch.where backprops nans through path that
was not taken", y = t * (x / t) with t = 0): an annealed soft-rounding layer computes
t * round_soft(x / t) and uses torch.where(t > 0, soft, x) to fall back to the identity
at temperature 0. The forward is fine, but the untaken branch's 0/0 makes the weight
gradient nan: model.lin.weight.grad has nan entries."""
import torch
import torch.nn as nn

CAUSE = "nonfinite_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.lin.weight"
EXPECT = "grad_nonfinite"


class SoftRound(nn.Module):
    def __init__(self, temperature):
        super().__init__()
        self.register_buffer("t", torch.tensor(float(temperature)))

    def forward(self, x):
        scaled = x / self.t  # <-- CUT
        soft = self.t * (scaled - torch.sin(2 * torch.pi * scaled) / (2 * torch.pi))
        return torch.where(self.t > 0, soft, x)


class QuantMLP(nn.Module):
    def __init__(self, temperature):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.q = SoftRound(temperature)

    def forward(self, x):
        return self.q(self.lin(x))


def run():
    torch.manual_seed(0)
    schedule = [1.0, 0.5, 0.0]
    model = QuantMLP(schedule[-1])  # final annealing stage
    x, y = torch.randn(5, 4), torch.randn(5, 4)
    loss = (model(x) - y).pow(2).mean()
    loss.backward()
    return {"model": model, "loss": loss}
