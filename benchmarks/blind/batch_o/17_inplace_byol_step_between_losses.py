"""BYOL with the symmetric loss computed as two separate terms: both forward
passes are built first, then loss_12.backward(); opt.step(); loss_21.backward().
The optimizer step modified online weights that loss_21's graph saved, so the
second backward raises "modified by an inplace operation".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class Online(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 8))
        self.pred = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 8))

    def forward(self, x):
        return self.pred(self.enc(x))


def regression_loss(p, z):
    return (2 - 2 * F.cosine_similarity(p, z.detach(), dim=-1)).mean()


def run():
    torch.manual_seed(0)
    online = Online()
    target = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 8))
    target.load_state_dict(online.enc.state_dict())
    target.requires_grad_(False)
    opt = torch.optim.SGD(online.parameters(), lr=0.05)
    x = torch.randn(16, 16)
    v1, v2 = x + 0.1 * torch.randn_like(x), x - 0.1 * torch.randn_like(x)
    with torch.no_grad():
        t1, t2 = target(v1), target(v2)
    loss_12 = regression_loss(online(v1), t2)
    loss_21 = regression_loss(online(v2), t1)
    opt.zero_grad()
    loss_12.backward()
    opt.step()  # <-- CUT
    loss_21.backward()
    opt.step()
    return {"online": online, "loss": loss_12 + loss_21}
