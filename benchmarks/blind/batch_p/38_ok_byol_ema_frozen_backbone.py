"""Control: BYOL-style Siamese training on top of a pretrained backbone that is
frozen on purpose. The target branch is an EMA copy (filled by load_state_dict,
updated through .data, evaluated under no_grad), and the loss is logged with
.item(). The online projector's gradient is normal.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "online.projector[0].weight"
EXPECT = "grad_ok"


class Branch(nn.Module):
    def __init__(self, d_in=32, d=16):
        super().__init__()
        self.projector = nn.Sequential(nn.Linear(d_in, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, d))

    def forward(self, h):
        return self.projector(h)


def ema_update(target, online, m=0.99):
    for tp, op in zip(target.parameters(), online.parameters()):
        tp.data.mul_(m).add_((1 - m) * op.data)


def run():
    torch.manual_seed(0)
    backbone = nn.Sequential(nn.Linear(20, 32), nn.ReLU())
    backbone.requires_grad_(False)
    online, target = Branch(), Branch()
    target.load_state_dict(online.state_dict())
    for p in target.parameters():
        p.requires_grad = False
    predictor = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 16))
    opt = torch.optim.Adam(list(online.parameters()) + list(predictor.parameters()), lr=1e-3)
    x = torch.randn(16, 20)
    v1, v2 = x + 0.1 * torch.randn_like(x), x + 0.1 * torch.randn_like(x)
    with torch.no_grad():
        h1, h2 = backbone(v1), backbone(v2)
        z1_t, z2_t = target(h1), target(h2)
    p1, p2 = predictor(online(h1)), predictor(online(h2))
    loss = (2 - 2 * F.cosine_similarity(p1, z2_t).mean()) + (2 - 2 * F.cosine_similarity(p2, z1_t).mean())  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    ema_update(target, online)
    log = {"loss": loss.item()}
    return {"online": online, "target": target, "backbone": backbone, "log": log}
