"""Features are wrapped in a small `torch.Tensor` subclass that carries a unit tag.
Its `__new__` follows an old tutorial: `torch.Tensor._make_subclass(cls, data)`,
whose require_grad defaults to False. It re-wraps the data in a new tensor
without history, so the encoder below it never gets a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "tensor_rewrap"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.enc.weight"
EXPECT = "grad_none"


class Tagged(torch.Tensor):
    @staticmethod
    def __new__(cls, data, unit="m"):
        t = torch.Tensor._make_subclass(cls, data)  # <-- CUT
        t.unit = unit
        return t

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        with torch._C.DisableTorchFunctionSubclass():
            return func(*args, **(kwargs or {}))


class DepthNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(6, 16)
        self.head = nn.Linear(16, 1)

    def forward(self, x):
        feats = Tagged(torch.relu(self.enc(x)), unit="m")
        return self.head(feats)


def run():
    torch.manual_seed(0)
    model = DepthNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(8, 6), torch.rand(8, 1)
    loss = F.l1_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
