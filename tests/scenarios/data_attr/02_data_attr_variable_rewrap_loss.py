"""Old tutorial code: the loss is re-wrapped as Variable(loss.data, requires_grad=True)
to silence "does not require grad". backward() runs from the new leaf, so the
network's weights never get a gradient.
"""
import torch
import torch.nn as nn
from torch.autograd import Variable

CAUSE = "data_attr"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "net[0].weight"
EXPECT = "grad_none"


def run():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 8), nn.Sigmoid(), nn.Linear(8, 1))
    opt = torch.optim.SGD(net.parameters(), lr=0.5)
    x = torch.randn(16, 3)
    y = (x.sum(1, keepdim=True) > 0).float()
    loss = nn.BCEWithLogitsLoss()(net(x), y)
    loss = Variable(loss.data, requires_grad=True)  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"net": net, "loss": loss}
