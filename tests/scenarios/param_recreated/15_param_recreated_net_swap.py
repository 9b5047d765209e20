"""Structure search by swapping networks during training: the script builds
net1 = Net(), creates optim.Adam(net1.parameters()), runs some code, then
rebinds net1 = Net2() and keeps training with the same optimizer. It runs
without error, but the optimizer's parameters are the old network's: no grads.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

CAUSE = "param_recreated"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "optimizer.param_groups[0]['params'][0]"
EXPECT = "grad_none"


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class Net2(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 24)
        self.extra = nn.Linear(24, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        return self.fc2(torch.relu(self.extra(torch.relu(self.fc1(x)))))


def train_step(net, optimizer, x, y):
    optimizer.zero_grad()
    loss = F.cross_entropy(net(x), y)
    loss.backward()
    optimizer.step()
    return loss


def run():
    torch.manual_seed(0)
    net1 = Net()  # 1st network
    optimizer = optim.Adam(net1.parameters(), lr=3e-2)

    x = torch.randn(12, 6)
    y = torch.randint(0, 3, (12,))
    # ... some other code (data loading, logging) ...
    net1 = Net2()  # <-- CUT
    loss = train_step(net1, optimizer, x, y)
    return {"net1": net1, "optimizer": optimizer, "loss": loss}
