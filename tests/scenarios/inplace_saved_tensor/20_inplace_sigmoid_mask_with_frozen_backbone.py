"""Fine-tuning with a frozen backbone (intended) and a multi-label head whose sigmoid
output is masked in place with `probs *= valid`. backward() raises; the frozen backbone is
not the problem, the in-place multiply on sigmoid's saved output is.
"""
import torch
import torch.nn as nn

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "head.weight"
EXPECT = "backward_error"


def run():
    torch.manual_seed(0)
    backbone = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
    for p in backbone.parameters():
        p.requires_grad = False
    head = nn.Linear(16, 5)
    opt = torch.optim.Adam(head.parameters(), lr=1e-3)
    x = torch.randn(4, 8)
    target = (torch.rand(4, 5) > 0.5).float()
    valid = torch.tensor([1.0, 1.0, 0.0, 1.0, 1.0])
    probs = torch.sigmoid(head(backbone(x)))
    probs *= valid  # <-- CUT
    loss = nn.functional.binary_cross_entropy(probs.clamp(1e-6, 1 - 1e-6), target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"head": head, "loss": loss}
