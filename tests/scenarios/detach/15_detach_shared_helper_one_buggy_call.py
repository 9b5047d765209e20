"""Symmetric two-view contrastive model: one `encode()` helper serves both towers.
The image tower calls it with `stop_grad=False`, but the text tower was copied from a
momentum-encoder example and passes `stop_grad=True`, so the text encoder never trains.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.text_enc.weight"
EXPECT = "grad_none"


def encode(encoder, x, stop_grad):
    z = F.normalize(encoder(x), dim=-1)
    if stop_grad:
        z = z.detach()  # <-- CUT
    return z


class TwoTower(nn.Module):
    def __init__(self):
        super().__init__()
        self.img_enc = nn.Linear(8, 4)
        self.text_enc = nn.Linear(6, 4)
        self.logit_scale = nn.Parameter(torch.tensor(2.0))

    def forward(self, img, txt):
        zi = encode(self.img_enc, img, stop_grad=False)
        zt = encode(self.text_enc, txt, stop_grad=True)
        return self.logit_scale.exp() * zi @ zt.t()


def run():
    torch.manual_seed(0)
    model = TwoTower()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    img, txt = torch.randn(5, 8), torch.randn(5, 6)
    logits = model(img, txt)
    target = torch.arange(5)
    loss = (F.cross_entropy(logits, target) + F.cross_entropy(logits.t(), target)) / 2
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
