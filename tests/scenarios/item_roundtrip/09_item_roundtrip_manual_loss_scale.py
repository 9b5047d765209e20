"""Hand-rolled mixed-precision loss scaling under bf16 autocast: the loss is read
with `.item()` to check for inf/NaN, and the scaled loss is then rebuilt from that
Python float. `scaled.backward()` raises: nothing in it requires grad.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class LossScaler:
    def __init__(self, init_scale=2.0 ** 12):
        self.scale = torch.tensor(init_scale)

    def scale_loss(self, loss):
        value = loss.float().item()  # <-- CUT
        if not math.isfinite(value):
            self.scale = self.scale / 2
            value = 0.0
        return torch.tensor(value) * self.scale


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = LossScaler()
    x, y = torch.randn(8, 8), torch.randint(0, 4, (8,))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = F.cross_entropy(model(x), y)
    scaled = scaler.scale_loss(loss)
    opt.zero_grad()
    scaled.backward()
    for p in model.parameters():
        p.grad.div_(scaler.scale)
    opt.step()
    return {"model": model, "loss": loss}
