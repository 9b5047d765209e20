"""A debugging module hook registered with register_full_backward_hook is meant to
clip the gradient flowing into a block, but it returns zeros_like(grad_input)
("clip to 0 while debugging" left in). Everything before the block gets zero grad.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "hook_modified"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[0].weight"
EXPECT = "grad_zero"


def clip_hook(module, grad_input, grad_output):
    return tuple(torch.zeros_like(g) if g is not None else None for g in grad_input)  # <-- CUT


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 12), nn.ReLU(), nn.Linear(12, 2))
    model[2].register_full_backward_hook(clip_hook)
    x, y = torch.randn(8, 6), torch.randint(0, 2, (8,))
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    return {"model": model, "loss": loss}
