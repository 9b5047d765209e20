"""Self-supervised depth: the trainer reuses an `@torch.inference_mode()` helper
written for validation to encode the target frame, then `.clone()`s the features
as the inference-tensor error message suggests. The depth decoder and pose net
train; the encoder is silently frozen.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inference_mode"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.encoder[0].weight"
EXPECT = "grad_none"


class DepthModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(), nn.Conv2d(8, 16, 3, padding=1))
        self.decoder = nn.Sequential(nn.Conv2d(16, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 3, padding=1))
        self.pose = nn.Sequential(nn.Conv2d(6, 8, 3, stride=2, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 6))

    @torch.inference_mode()
    def encode(self, img):
        return self.encoder(img)  # <-- CUT

    def decode(self, feats, size):
        disp = torch.sigmoid(self.decoder(F.relu(feats)))
        return F.interpolate(disp, size=size, mode="bilinear", align_corners=False)


def photometric(disp, pose, tgt, src):
    shift = pose[:, :2].view(-1, 2, 1, 1) * disp
    theta = torch.eye(2, 3).unsqueeze(0).repeat(tgt.size(0), 1, 1)
    grid = F.affine_grid(theta, tgt.shape, align_corners=False) + shift.permute(0, 2, 3, 1)
    warped = F.grid_sample(src, grid, align_corners=False, padding_mode="border")
    return (warped - tgt).abs().mean() + 1e-3 * disp.mean()


def run():
    torch.manual_seed(0)
    model = DepthModel()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    tgt, src = torch.rand(2, 3, 8, 8), torch.rand(2, 3, 8, 8)
    feats = model.encode(tgt).clone()
    disp = model.decode(feats, tgt.shape[-2:])
    pose = model.pose(torch.cat([tgt, src], 1))
    loss = photometric(disp, pose, tgt, src)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
