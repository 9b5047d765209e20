"""Reproduces jvargasmu/population_estimation#68: the scale network predicts people per
building through a final ReLU. With the initial solution (a strongly negative bias in the
head) every pixel is below zero, the map is all zeros, and no gradient emerges: the head's
weight grad exists but is exactly zero everywhere (the issue proposes Softplus instead).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "zero_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.head_conv.weight"
EXPECT = "grad_zero"


class ScaleNet(nn.Module):
    def __init__(self, in_ch=4, hidden=8, init_bias=-6.0):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(in_ch, hidden, 3, padding=1), nn.ReLU(),
                                  nn.Conv2d(hidden, hidden, 1), nn.ReLU())
        self.head_conv = nn.Conv2d(hidden, 1, 1)
        nn.init.normal_(self.head_conv.weight, std=0.01)
        nn.init.constant_(self.head_conv.bias, init_bias)

    def forward(self, x):
        h = self.body(x)
        scale = F.relu(self.head_conv(h))  # <-- CUT
        return scale.squeeze(1)


def aggregate_by_region(pop_map, region_ids, n_regions):
    return torch.zeros(n_regions).index_add(0, region_ids.flatten(), pop_map.flatten())


def run():
    torch.manual_seed(0)
    model = ScaleNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    features = torch.rand(1, 4, 8, 8)
    buildings = (torch.rand(1, 8, 8) > 0.5).float() * 3.0
    region_ids = torch.randint(0, 3, (1, 8, 8))
    census = torch.tensor([120.0, 80.0, 95.0])
    pop_map = model(features) * buildings
    pred = aggregate_by_region(pop_map, region_ids, 3)
    loss = F.l1_loss(torch.log1p(pred), torch.log1p(census))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss, "pred": pred}
