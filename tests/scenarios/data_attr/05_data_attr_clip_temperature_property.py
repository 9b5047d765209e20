"""CLIP-style dual encoder with a learnable temperature. The scale is exposed
through a `logit_scale` property that returns
`self.log_scale.data.exp().clamp(max=100.0)`, copied from the in-place clamp
in the original repo. The towers train, but log_scale.grad stays None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_attr"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.log_scale"
EXPECT = "grad_none"


class DualEncoder(nn.Module):
    def __init__(self, d_img=20, d_txt=12, d=16):
        super().__init__()
        self.img = nn.Sequential(nn.Linear(d_img, 32), nn.GELU(), nn.Linear(32, d))
        self.txt = nn.Sequential(nn.Linear(d_txt, 32), nn.GELU(), nn.Linear(32, d))
        self.log_scale = nn.Parameter(torch.tensor(2.659))

    @property
    def logit_scale(self):
        return self.log_scale.data.exp().clamp(max=100.0)  # <-- CUT

    def forward(self, img, txt):
        zi = F.normalize(self.img(img), dim=-1)
        zt = F.normalize(self.txt(txt), dim=-1)
        return self.logit_scale * zi @ zt.t()


def run():
    torch.manual_seed(0)
    model = DualEncoder()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    img, txt = torch.randn(8, 20), torch.randn(8, 12)
    logits = model(img, txt)
    labels = torch.arange(8)
    loss = (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)) / 2
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
