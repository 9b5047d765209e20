"""A low-rank adapter is attached with a forward hook that adds `up(down(x))` to a
layer's output. The training loop calls `model.backbone.forward(x)` directly
(to skip a wrapper), which bypasses `__call__` and its hooks: the adapter never runs.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "adapter.down.weight"
EXPECT = "grad_none"


class Adapter(nn.Module):
    def __init__(self, d, r=2):
        super().__init__()
        self.down, self.up = nn.Linear(d, r, bias=False), nn.Linear(r, d, bias=False)

    def attach(self, layer):
        return layer.register_forward_hook(lambda m, inp, out: out + self.up(self.down(inp[0])))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(10, 10)
        self.head = nn.Linear(10, 3)


def run():
    torch.manual_seed(0)
    model = Model()
    model.requires_grad_(False)
    model.head.requires_grad_(True)
    adapter = Adapter(10)
    adapter.attach(model.backbone)
    opt = torch.optim.Adam(list(adapter.parameters()) + list(model.head.parameters()), lr=1e-3)
    x, y = torch.randn(8, 10), torch.randint(0, 3, (8,))
    feats = model.backbone.forward(x)  # <-- CUT
    loss = F.cross_entropy(model.head(torch.relu(feats)), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "adapter": adapter, "opt": opt, "loss": loss}
