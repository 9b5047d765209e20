"""Dense 3D point-cloud generation with a projected-mask loss
(chenhsuanlin/3D-point-cloud-generation#4): the predicted x/y image coordinates of
each point are rounded and cast to integers to scatter the points into a mask. The
cast has no gradient, so the mask loss cannot move x/y: the x/y head gets no grad,
only the depth (z) head trains.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "integer_cast"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.xy_head.weight"
EXPECT = "grad_none"


class Structure3DGenerator(nn.Module):
    def __init__(self, n_pts=64, d=32):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(1, 8, 3, 2, 1), nn.ReLU(), nn.Flatten(),
                                     nn.Linear(8 * 8 * 8, d), nn.ReLU())
        self.xy_head = nn.Linear(d, n_pts * 2)
        self.z_head = nn.Linear(d, n_pts)
        self.mask_head = nn.Linear(d, n_pts)
        self.n_pts = n_pts

    def forward(self, img):
        h = self.encoder(img)
        xy = torch.sigmoid(self.xy_head(h)).view(-1, self.n_pts, 2)
        z = F.softplus(self.z_head(h))
        ml = self.mask_head(h)
        return xy, z, ml


def render_depth_and_mask(xy, z, mask_logit, H=16, W=16):
    b = xy.shape[0]
    pix = (xy * torch.tensor([W - 1, H - 1])).round()
    xi, yi = pix.long().unbind(-1)  # <-- CUT
    lin = yi * W + xi
    depth = torch.full((b, H * W), 10.0).scatter_reduce(1, lin, z, reduce="amin")
    mask = torch.full((b, H * W), -10.0).scatter_reduce(1, lin, mask_logit, reduce="amax")
    return depth.view(b, 1, H, W), mask.view(b, 1, H, W)


def run():
    torch.manual_seed(0)
    model = Structure3DGenerator()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    img = torch.rand(2, 1, 16, 16)
    gt_depth = torch.rand(2, 1, 16, 16) * 5
    gt_mask = (img > 0.5).float()
    opt.zero_grad()
    xy, z, ml = model(img)
    depth, mask = render_depth_and_mask(xy, z, ml)
    loss_mask = F.binary_cross_entropy_with_logits(mask, gt_mask)
    valid = gt_mask * (depth < 10).float()
    loss_depth = ((depth - gt_depth).abs() * valid).sum() / valid.sum().clamp(min=1)
    loss = loss_mask + loss_depth
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
