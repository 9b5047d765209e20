"""Point-cloud completion: the network predicts offsets added to the observed
partial cloud, and the Chamfer loss uses true Euclidean distances via `sqrt`.
The observed points are also in the target, so some distances are exactly 0 and
sqrt's gradient there is inf; the decoder's grad comes out NaN.
"""
import torch
import torch.nn as nn

CAUSE = "nonfinite_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.offset_head[0].weight"
EXPECT = "grad_nonfinite"


class CompletionNet(nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.point_mlp = nn.Sequential(nn.Linear(3, d), nn.ReLU(), nn.Linear(d, d))
        self.offset_head = nn.Sequential(nn.Linear(2 * d, d), nn.ReLU(), nn.Linear(d, 3))
        nn.init.zeros_(self.offset_head[2].weight)
        nn.init.zeros_(self.offset_head[2].bias)

    def forward(self, partial):
        f = self.point_mlp(partial)
        g = f.max(dim=1, keepdim=True).values.expand_as(f)
        return partial + self.offset_head(torch.cat([f, g], -1))


def chamfer_l1(a, b):
    d2 = ((a[:, :, None, :] - b[:, None, :, :]) ** 2).sum(-1)
    d = torch.sqrt(d2)  # <-- CUT
    return d.min(2).values.mean() + d.min(1).values.mean()


def run():
    torch.manual_seed(0)
    model = CompletionNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    full = torch.randn(2, 24, 3)
    partial = full[:, :12]
    loss = chamfer_l1(model(partial), full)
    opt.zero_grad()
    loss.backward()
    return {"model": model, "loss": loss}
