"""Two task losses are combined with the legacy constructor
torch.FloatTensor([loss_a, loss_b]) and a learnable weighting vector. Only the
weights get a gradient; the task network's weights get none.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "tensor_rewrap"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "net.weight"
EXPECT = "grad_none"


def run():
    torch.manual_seed(0)
    net = nn.Linear(5, 3)
    task_w = nn.Parameter(torch.ones(2))
    x, y = torch.randn(7, 5), torch.randint(0, 3, (7,))
    out = net(x)
    loss_a = F.cross_entropy(out, y)
    loss_b = out.pow(2).mean()
    losses = torch.FloatTensor([loss_a, loss_b])  # <-- CUT
    loss = (torch.softmax(task_w, 0) * losses).sum()
    loss.backward()
    return {"net": net, "task_w": task_w, "loss": loss}
