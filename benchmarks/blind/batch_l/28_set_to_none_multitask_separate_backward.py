"""Multi-task model trained with two separate backward calls instead of one joint
backward. To "inspect the second loss on its own", the user calls opt.zero_grad()
between loss1.backward(retain_graph=True) and loss2.backward(); with set_to_none this
drops head1's gradient, so the step updates the trunk and head2 only.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "set_to_none_timing"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.head1.weight"
EXPECT = "grad_none"


class TwoHeadNet(nn.Module):
    def __init__(self, d_in=10, h=32):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(d_in, h), nn.ReLU())
        self.head1 = nn.Linear(h, 3)
        self.head2 = nn.Linear(h, 1)

    def forward(self, x):
        b = self.trunk(x)
        return self.head1(b), self.head2(b).squeeze(-1)


def run():
    torch.manual_seed(0)
    model = TwoHeadNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(16, 10)
    y1, y2 = torch.randint(0, 3, (16,)), torch.randn(16)
    out1, out2 = model(x)
    loss1 = F.cross_entropy(out1, y1)
    loss2 = F.mse_loss(out2, y2)
    opt.zero_grad()
    loss1.backward(retain_graph=True)
    g_trunk_1 = model.trunk[0].weight.grad.norm().item()
    opt.zero_grad()  # <-- CUT
    loss2.backward()
    g_trunk_2 = model.trunk[0].weight.grad.norm().item()
    opt.step()
    return {"model": model, "loss1": loss1, "loss2": loss2, "g1": g_trunk_1, "g2": g_trunk_2}
