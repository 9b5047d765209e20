"""Spatial transformer classifier that keeps the last predicted affine matrix for
visualisation: `self.theta.data = theta` on a registered buffer, then builds the
sampling grid from that buffer. The classifier trains; the localisation net is
cut off and gets no gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_attr"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.loc[0].weight"
EXPECT = "grad_none"


class STNClassifier(nn.Module):
    def __init__(self, n_cls=5):
        super().__init__()
        self.loc = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(2), nn.Flatten(), nn.Linear(16, 6))
        nn.init.zeros_(self.loc[-1].weight)
        self.loc[-1].bias.data.copy_(torch.tensor([1.0, 0, 0, 0, 1.0, 0]))
        self.register_buffer("theta", torch.zeros(1, 2, 3))
        self.cls = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, n_cls))

    def transform(self, x):
        theta = self.loc(x).view(-1, 2, 3)
        self.theta.data = theta  # <-- CUT
        grid = F.affine_grid(self.theta, x.shape, align_corners=False)
        return F.grid_sample(x, grid, align_corners=False)

    def forward(self, x):
        return self.cls(self.transform(x))


def run():
    torch.manual_seed(0)
    model = STNClassifier()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.rand(4, 1, 10, 10)
    y = torch.randint(0, 5, (4,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
