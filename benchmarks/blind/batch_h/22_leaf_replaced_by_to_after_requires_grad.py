"""Style-transfer-like input optimisation: the canvas is created with requires_grad=True
and then moved with canvas = canvas.to(device, dtype) (on CPU here only the dtype changes).
As the forum answer says, ordering matters: after requires_grad, the .to() is recorded as
an op, the rebound canvas is a non-leaf copy, and the optimised leaf is lost.
Thread: discuss.pytorch.org/t/how-to-define-a-leaf-tensor-in-pytorch-0-4-1/28461
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "leaf_replaced_by_to"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "canvas"
EXPECT = "grad_none"

CFG = {"device": "cpu", "dtype": torch.float64, "steps": 2}


class FeatureNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU())

    def forward(self, x):
        return self.conv(x)


def gram(f):
    b, c, h, w = f.shape
    f = f.reshape(b, c, h * w)
    return f @ f.transpose(1, 2) / (h * w)


def run():
    torch.manual_seed(0)
    net = FeatureNet().to(CFG["device"], CFG["dtype"])
    for p in net.parameters():
        p.requires_grad_(False)
    style = torch.rand(1, 3, 8, 8, dtype=CFG["dtype"])
    canvas = torch.rand(1, 3, 8, 8, requires_grad=True)
    canvas = canvas.to(CFG["device"], CFG["dtype"])  # <-- CUT
    target = gram(net(style))
    for _ in range(CFG["steps"]):
        loss = F.mse_loss(gram(net(canvas)), target)
        loss.backward(retain_graph=True)
    return {"canvas": canvas, "net": net, "loss": loss}
