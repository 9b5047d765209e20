"""Magnitude pruning during training: a gradient hook multiplies each weight's
gradient by a keep-mask so pruned weights stay fixed. The config's sparsity is
"fraction to keep" = 1.0 but the helper treats it as the quantile to prune, so the
threshold is the largest |w| and the mask is all zeros; fc1.weight.grad is all 0.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "hook_modified"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.fc1.weight"
EXPECT = "grad_zero"

CONFIG = {"keep_ratio": 1.0}


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(20, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def attach_prune_hook(param, prune_quantile):
    thresh = torch.quantile(param.detach().abs().flatten(), prune_quantile)
    mask = (param.detach().abs() > thresh).float()

    def hook(grad):
        return grad * mask  # <-- CUT

    param.register_hook(hook)
    return mask


def run():
    torch.manual_seed(0)
    model = Net()
    mask = attach_prune_hook(model.fc1.weight, CONFIG["keep_ratio"])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(32, 20), torch.randint(0, 10, (32,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "mask": mask, "loss": loss}
