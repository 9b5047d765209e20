"""Control: a user `@autocast_bf16` decorator runs the forward under
`torch.autocast("cpu", dtype=torch.bfloat16)` and casts the output back with
`.float()` for a float32 loss. Autocast casts are differentiable; all layers train.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.net[0].weight"
EXPECT = "grad_ok"


def autocast_bf16(fn):
    def wrapper(*args, **kwargs):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return fn(*args, **kwargs).float()
    wrapper.__name__ = fn.__name__
    return wrapper


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 4))

    @autocast_bf16
    def forward(self, x):
        return self.net(x)


def run():
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
    loss = F.cross_entropy(model(x), y)  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
