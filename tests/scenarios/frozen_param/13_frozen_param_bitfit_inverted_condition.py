"""BitFit-style fine-tuning meant to train only the biases, but the condition is
inverted: `if "bias" in name: p.requires_grad = False`. The biases are frozen
and model[0].bias.grad is None after backward().
"""
import torch
import torch.nn as nn

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[0].bias"
EXPECT = "grad_none"


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 2))
    for name, p in model.named_parameters():
        if "bias" in name:
            p.requires_grad = False  # <-- CUT
    x = torch.randn(12, 6)
    y = torch.randint(0, 2, (12,))
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    return {"model": model, "loss": loss}
