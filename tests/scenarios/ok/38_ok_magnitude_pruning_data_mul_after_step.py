"""Control: magnitude pruning. After each optimizer step the pruning mask is
re-applied with weight.data.mul_(mask), the classic pre-torch.nn.utils.prune
idiom. The mask write happens outside autograd, after backward; the next
step's forward and backward give the pruned layer a normal gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[0].weight"
EXPECT = "grad_ok"


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(12, 24), nn.ReLU(), nn.Linear(24, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    w = model[0].weight
    thresh = w.abs().flatten().kthvalue(int(0.5 * w.numel())).values
    mask = (w.abs() > thresh).float()
    x = torch.randn(32, 12)
    y = torch.randint(0, 3, (32,))
    for step in range(3):
        loss = F.cross_entropy(model(x), y)  # <-- CUT
        opt.zero_grad()
        loss.backward()
        opt.step()
        model[0].weight.data.mul_(mask)
    return {"model": model, "loss": loss}
