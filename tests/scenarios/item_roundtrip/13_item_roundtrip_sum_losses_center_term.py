"""Loss terms are collected in a list and combined with Python `sum(losses)`. The
center-loss term was appended as `w * center.item()` (copied from the logging code), so it
is a Python float: the total still backprops, but the class centers never get a gradient.
"""
import torch
import torch.nn as nn

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "centers"
EXPECT = "grad_none"


def run():
    torch.manual_seed(0)
    net = nn.Linear(6, 4)
    clf = nn.Linear(4, 3)
    centers = nn.Parameter(torch.randn(3, 4))
    opt = torch.optim.SGD([*net.parameters(), *clf.parameters(), centers], lr=0.1)
    x, y = torch.randn(9, 6), torch.randint(0, 3, (9,))
    feats = net(x)
    losses = [nn.functional.cross_entropy(clf(feats), y)]
    center = ((feats - centers[y]) ** 2).sum(1).mean()
    losses.append(0.01 * center.item())  # <-- CUT
    loss = sum(losses)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"net": net, "centers": centers, "loss": loss}
