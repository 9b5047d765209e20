"""set_freeze_by_layer_names(model, 'fc1') from the forum thread: a plain string is
iterable, so it is not wrapped in a list and `name not in layer_names` becomes a substring
test. The child called 'fc' ('fc' in 'fc1') is frozen too; the optimizer filters on
requires_grad, so nothing errors, but the final fc layer never gets a gradient.
Thread: discuss.pytorch.org/t/why-there-is-still-a-small-change-in-frozen-layer-parameters/153740
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.module.fc.weight"
EXPECT = "grad_none"


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(2))
        self.fc1 = nn.Sequential(nn.Linear(16, 16), nn.ReLU())
        self.fc = nn.Linear(16, 3)

    def forward(self, x):
        return self.fc(self.fc1(self.conv(x).flatten(1)))


class Wrapper(nn.Module):
    def __init__(self, module):
        super().__init__()
        self.module = module

    def forward(self, x):
        return self.module(x)


def set_freeze_by_layer_names(model, layer_names, freeze=True):
    if not hasattr(layer_names, "__iter__"):  # "is it Iterable?"
        layer_names = [layer_names]
    for name, child in model.module.named_children():
        if name not in layer_names:
            continue
        for param in child.parameters():
            param.requires_grad = not freeze  # <-- CUT
            param.grad = None


def run():
    torch.manual_seed(0)
    model = Wrapper(Net())
    set_freeze_by_layer_names(model, "fc1", freeze=True)
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    x = torch.rand(4, 1, 6, 6)
    y = torch.tensor([0, 1, 2, 0])
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
