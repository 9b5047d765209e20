"""Adapter tuning on a frozen backbone: the backbone forward runs under
torch.inference_mode() for speed (intended), but the bottleneck adapter was put
inside the same block. The features are .clone()d as the error message says;
the linear head trains, the adapter's weights get no gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inference_mode"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "adapter.down.weight"
EXPECT = "grad_none"


class Adapter(nn.Module):
    def __init__(self, d=32, r=4):
        super().__init__()
        self.down = nn.Linear(d, r)
        self.up = nn.Linear(r, d)

    def forward(self, h):
        return h + self.up(F.relu(self.down(h)))


def run():
    torch.manual_seed(0)
    backbone = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU())
    backbone.eval().requires_grad_(False)
    adapter = Adapter()
    head = nn.Linear(32, 5)
    opt = torch.optim.AdamW(list(adapter.parameters()) + list(head.parameters()), lr=1e-3)
    x, y = torch.randn(8, 12), torch.randint(0, 5, (8,))
    with torch.inference_mode():
        feats = backbone(x)
        feats = adapter(feats)  # <-- CUT
    logits = head(feats.clone())
    loss = F.cross_entropy(logits, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"adapter": adapter, "head": head, "loss": loss}
