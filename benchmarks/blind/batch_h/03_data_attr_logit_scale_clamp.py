"""Cosine classifier with a learnable logit scale s. Clamping it in forward with
self.s.clamp_(max=30) raised "a leaf Variable that requires grad is being used in an
in-place operation"; following the forum answer that .data is the way to update parameters,
the user clamps self.s.data in place and uses that in the logits: s never gets a gradient.
Thread: discuss.pytorch.org/t/leaf-variable-was-used-in-an-inplace-operation/308
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_attr"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.head.s"
EXPECT = "grad_none"


class CosineHead(nn.Module):
    def __init__(self, d, n_cls, s_init=10.0, s_max=30.0):
        super().__init__()
        self.w = nn.Parameter(torch.randn(n_cls, d) * 0.1)
        self.s = nn.Parameter(torch.tensor(s_init))
        self.s_max = s_max

    def forward(self, h):
        cos = F.normalize(h, dim=-1) @ F.normalize(self.w, dim=-1).t()
        s = self.s.data.clamp_(max=self.s_max)  # <-- CUT
        return s * cos


class FaceNet(nn.Module):
    def __init__(self, d_in=20, d=16, n_cls=6):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(d_in, 32), nn.PReLU(), nn.Linear(32, d))
        self.head = CosineHead(d, n_cls)

    def forward(self, x):
        return self.head(self.body(x))


def run():
    torch.manual_seed(0)
    model = FaceNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    x = torch.randn(8, 20)
    y = torch.randint(0, 6, (8,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
