"""Legacy code calls model.zero_grad(set_to_none=False) right after backward()
(meant for the start of the step) and then logs gradient norms and steps.
The gradients exist but are all zeros when they are read.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "set_to_none_timing"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.fc.weight"
EXPECT = "grad_zero"


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 3)

    def forward(self, x):
        return self.fc(x)


def run():
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(7, 5), torch.randint(0, 3, (7,))
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    model.zero_grad(set_to_none=False)  # <-- CUT
    norms = [p.grad.norm() for p in model.parameters()]
    opt.step()
    return {"model": model, "loss": loss, "norms": norms}
