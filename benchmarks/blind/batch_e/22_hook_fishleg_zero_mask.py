"""Magnitude-pruning fine-tune with gradient-mask hooks (mtkresearch/FishLeg#16):
get_zero_grad_hook(mask) returns a hook that does `return grad * mask` to keep pruned
weights at zero. The mask is built with a threshold taken from the config in
absolute units that is larger than every weight, so every mask entry is 0 and the
hook zeroes the whole gradient of the pruned layer. Adapted.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "hook_modified"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.fc1.weight"
EXPECT = "grad_zero"


def get_zero_grad_hook(mask):
    def hook(grad):
        return grad * mask.to(grad.device)  # <-- CUT
    return hook


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(20, 32)
        self.fc2 = nn.Linear(32, 5)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def prune_and_register(model, threshold):
    handles = []
    for name, p in model.named_parameters():
        if name.endswith("weight") and name.startswith("fc1"):
            mask = (p.detach().abs() > threshold).float()
            with torch.no_grad():
                p.mul_(mask)
            handles.append(p.register_hook(get_zero_grad_hook(mask)))
    return handles


def run():
    torch.manual_seed(0)
    model = Net()
    cfg = {"prune_threshold": 0.5}
    handles = prune_and_register(model, cfg["prune_threshold"])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(16, 20)
    y = torch.randint(0, 5, (16,))
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss, "handles": handles}
