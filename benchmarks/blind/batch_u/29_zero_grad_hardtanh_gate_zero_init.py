"""pytorch/pytorch#184574 (F.hardtanh / F.relu6 return gradient 0.0 exactly at their
boundaries, where torch.clamp returns 1.0): a channel gate is zero-initialized and
squashed with F.hardtanh(g, 0, 1) "like clamp". Every gate sits exactly on the lower
boundary, so its gradient is exactly zero and it can never open:
model.gate.grad is all zeros while the conv trains."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "zero_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.gate"
EXPECT = "grad_zero"


class GatedConv(nn.Module):
    def __init__(self, c=6):
        super().__init__()
        self.conv = nn.Conv2d(3, c, 3, padding=1)
        self.gate = nn.Parameter(torch.zeros(c))
        self.skip = nn.Conv2d(3, c, 1)

    def forward(self, x):
        g = F.hardtanh(self.gate, 0.0, 1.0)  # <-- CUT
        return self.skip(x) + g.view(1, -1, 1, 1) * self.conv(x)


def run():
    torch.manual_seed(0)
    model = GatedConv()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    x = torch.randn(2, 3, 8, 8)
    target = torch.randn(2, 6, 8, 8)
    loss = F.mse_loss(model(x), target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
