"""Fine-tuning with a hand-written `bn_frozen` context manager meant to keep the
backbone's BatchNorm statistics fixed. Its __enter__ (copied from an eval
utility) also calls torch.set_grad_enabled(False), so the backbone features
computed inside the `with` have no history and the backbone gets no gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.backbone[0].weight"
EXPECT = "grad_none"


class bn_frozen:
    """Put a module's BatchNorm layers in eval mode for the duration of a block."""

    def __init__(self, module):
        self.module = module

    def __enter__(self):
        self.prev = torch.is_grad_enabled()
        torch.set_grad_enabled(False)
        self.module.eval()
        return self.module

    def __exit__(self, *exc):
        torch.set_grad_enabled(self.prev)
        self.module.train()
        return False


class FineTuner(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.head = nn.Linear(8, 5)

    def forward(self, x):
        with bn_frozen(self.backbone) as bb:
            feats = bb(x).mean(dim=(2, 3))  # <-- CUT
        return self.head(feats)


def run():
    torch.manual_seed(0)
    model = FineTuner()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(4, 3, 8, 8)
    y = torch.randint(0, 5, (4,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
