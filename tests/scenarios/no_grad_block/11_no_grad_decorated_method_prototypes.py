"""Prototype classifier: a `normalized_prototypes()` method is decorated with
`@torch.no_grad()` (it was first written for a visualisation script) and is
called from `forward`. The cosine logits carry grad via the encoder only, so
the learnable prototypes never get a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.prototypes"
EXPECT = "grad_none"


class ProtoNet(nn.Module):
    def __init__(self, n_cls=4, d=8):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(12, d), nn.ReLU(), nn.Linear(d, d))
        self.prototypes = nn.Parameter(torch.randn(n_cls, d))

    @torch.no_grad()
    def normalized_prototypes(self):
        return F.normalize(self.prototypes, dim=-1)  # <-- CUT

    def forward(self, x):
        z = F.normalize(self.encoder(x), dim=-1)
        return 10.0 * z @ self.normalized_prototypes().t()


def run():
    torch.manual_seed(0)
    model = ProtoNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(16, 12)
    y = torch.randint(0, 4, (16,))
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
