"""The user wants the loss to backpropagate through a pretrained net into a new input
adapter while the pretrained weights receive no update (the forum question). They register
a zeroing hook on every parameter whose name does not start with "first", but the new layer
is called "adapter", so the hook zeroes the adapter's gradient too.
Thread: discuss.pytorch.org/t/freezing-the-updates-without-freezing-the-gradients/7358
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "hook_modified"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.adapter.weight"
EXPECT = "grad_zero"


class Pretrained(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))

    def forward(self, x):
        return self.layers(x)


class AdaptedNet(nn.Module):
    def __init__(self, in_dim):
        super().__init__()
        self.adapter = nn.Linear(in_dim, 16)
        self.body = Pretrained()

    def forward(self, x):
        return self.body(torch.tanh(self.adapter(x)))


def make_freeze_hook(name, log):
    def hook(grad):
        log.append(name)
        return torch.zeros_like(grad)  # <-- CUT
    return hook


def freeze_updates(model, trainable_prefix="first"):
    log, handles = [], []
    for name, p in model.named_parameters():
        if not name.startswith(trainable_prefix):
            handles.append(p.register_hook(make_freeze_hook(name, log)))
    return log, handles


def run():
    torch.manual_seed(0)
    model = AdaptedNet(in_dim=6)
    log, handles = freeze_updates(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x = torch.randn(8, 6)
    y = torch.randint(0, 4, (8,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    for h in handles:
        h.remove()
    return {"model": model, "loss": loss, "log": log}
