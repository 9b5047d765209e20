"""LNSNet-style superpixel seed generation: a head predicts where, inside each grid
cell, the seed pixel should be, as sigmoid(seed_head(feat)) * (cell - 1), and the index
is made with torch.floor(ind).long() to gather seed features. The clustering loss still
trains the feature extractor through the gathered features, but the seed head gets no
gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "integer_cast"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.seed_head.weight"
EXPECT = "grad_none"

CELL = 4


class SeedNet(nn.Module):
    def __init__(self, ch=10):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, ch, 3, padding=1), nn.ReLU(),
                                      nn.Conv2d(ch, ch, 3, padding=1))
        self.seed_head = nn.Conv2d(ch, 1, CELL, stride=CELL)

    def forward(self, img):
        feat = self.features(img)                         # B, C, H, W
        b, c, h, w = feat.shape
        ind = torch.sigmoid(self.seed_head(feat)) * (CELL * CELL - 1)
        ind = torch.floor(ind).long()  # <-- CUT
        cells = F.unfold(feat, CELL, stride=CELL).view(b, c, CELL * CELL, -1)
        seeds = torch.gather(cells, 2, ind.view(b, 1, 1, -1).expand(b, c, 1, cells.size(-1)))
        return feat, seeds.squeeze(2)                     # B, C, n_seeds


def soft_assignment_loss(feat, seeds, tau=1.0):
    pix = feat.flatten(2).transpose(1, 2)                # B, HW, C
    dist = torch.cdist(pix, seeds.transpose(1, 2))       # B, HW, n_seeds
    assign = F.softmax(-dist / tau, dim=-1)
    recon = assign @ seeds.transpose(1, 2)
    return F.mse_loss(recon, pix) + 0.1 * dist.min(dim=-1).values.mean()


def run():
    torch.manual_seed(0)
    model = SeedNet()
    opt = torch.optim.Adam(model.parameters(), lr=3e-4)
    img = torch.rand(2, 3, 16, 16)
    feat, seeds = model(img)
    loss = soft_assignment_loss(feat, seeds)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
