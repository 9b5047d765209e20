"""A hand-rolled weight normalisation writes the normalised direction into the
linear layer with `self.fc.weight.data = ...` in forward(). The direction
parameter v only reaches the forward through .data, so v.grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_attr"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.v"
EXPECT = "grad_none"


class WNLinear(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.fc = nn.Linear(d_in, d_out)
        self.v = nn.Parameter(torch.randn(d_out, d_in))

    def forward(self, x):
        self.fc.weight.data = self.v / self.v.norm(dim=1, keepdim=True)  # <-- CUT
        return self.fc(x)


def run():
    torch.manual_seed(0)
    model = WNLinear(6, 4)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(9, 6)
    y = torch.randn(9, 4)
    loss = F.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
