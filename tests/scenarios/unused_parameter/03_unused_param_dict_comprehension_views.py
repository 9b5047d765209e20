"""Multi-view classifier with one encoder per view in an nn.ModuleDict. The
forward encodes every view in a dict comprehension, but the fusion line was
written when there were two views and never picks up "flow": the flow
encoder runs every step, its output is discarded, and its grads are None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.encoders['flow'][0].weight"
EXPECT = "grad_none"

VIEWS = ("rgb", "depth", "flow")


class MultiView(nn.Module):
    def __init__(self, d_in=12, d=16, n_cls=4):
        super().__init__()
        self.encoders = nn.ModuleDict({v: nn.Sequential(nn.Linear(d_in, d), nn.ReLU()) for v in VIEWS})
        self.head = nn.Linear(d, n_cls)

    def forward(self, views):
        feats = {v: enc(views[v]) for v, enc in self.encoders.items()}  # <-- CUT
        fused = (feats["rgb"] + feats["depth"]) / 2
        return self.head(fused)


def run():
    torch.manual_seed(0)
    model = MultiView()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    views = {v: torch.randn(8, 12) for v in VIEWS}
    y = torch.randint(0, 4, (8,))
    loss = F.cross_entropy(model(views), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
