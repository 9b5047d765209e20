"""Per-sample losses are collected in a Python list inside a loop and combined
with torch.tensor(losses).mean(). torch.tensor copies the values, so the batch
loss has no grad_fn and loss.backward() raises.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "tensor_rewrap"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


def run():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    xs = torch.randn(6, 4)
    ys = torch.randint(0, 3, (6,))
    losses = []
    for i in range(xs.shape[0]):
        logit = net(xs[i:i + 1])
        losses.append(F.cross_entropy(logit, ys[i:i + 1]))
    loss = torch.tensor(losses).mean()  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"net": net, "loss": loss}
