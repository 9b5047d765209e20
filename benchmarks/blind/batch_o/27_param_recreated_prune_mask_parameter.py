"""Iterative magnitude pruning: after the optimizer is built, the pruning step
makes the mask "permanent" with layer.weight = nn.Parameter(layer.weight * mask).
The model trains its new weight, but the optimizer still holds the old
Parameter, whose .grad stays None, so the step never updates the layer.
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
        self.fc1 = nn.Linear(10, 32)
        self.fc2 = nn.Linear(32, 3)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def magnitude_prune(layer, amount):
    w = layer.weight.detach().abs().flatten()
    thr = w.kthvalue(int(amount * w.numel())).values
    mask = (layer.weight.detach().abs() > thr).float()
    layer.weight = nn.Parameter(layer.weight * mask)  # <-- CUT
    return mask


def run():
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x, y = torch.randn(16, 10), torch.randint(0, 3, (16,))
    masks = {"fc1": magnitude_prune(model.fc1, 0.5)}
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    model.fc1.weight.grad.mul_(masks["fc1"])
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
