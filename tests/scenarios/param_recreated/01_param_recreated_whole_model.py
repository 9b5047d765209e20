"""The optimizer is built from model.parameters(), then `model = Net()` runs
again (a leftover re-initialisation before the loop). The loop trains the new
model, whose parameters the optimizer does not hold; the optimizer's
parameters never get a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "param_recreated"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "opt.param_groups[0]['params'][0]"
EXPECT = "grad_none"


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3, padding=1)
        self.fc = nn.Linear(6, 4)

    def forward(self, x):
        return self.fc(F.relu(self.conv(x)).mean(dim=(2, 3)))


def run():
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    model = Net()  # <-- CUT
    x = torch.randn(4, 3, 8, 8)
    y = torch.randint(0, 4, (4,))
    for _ in range(2):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return {"model": model, "opt": opt, "loss": loss}
