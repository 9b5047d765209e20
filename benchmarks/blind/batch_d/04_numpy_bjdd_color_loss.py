"""BJDD-style joint demosaicing/denoising: the colour loss converts the
generated image to numpy (detach().cpu().numpy()) to compare YUV chroma
statistics and wraps the result back into a tensor. In the colour-only warm-up
stage the generator therefore gets no gradient (sharif-apu/BJDD_CVPR21#11).
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "generator.body[0].weight"
EXPECT = "grad_none"

RGB2YUV = np.array([[0.299, 0.587, 0.114], [-0.147, -0.289, 0.436], [0.615, -0.515, -0.100]], dtype=np.float32)


class ColorLoss(nn.Module):
    def forward(self, generated, target):
        gen = generated.detach().cpu().numpy().transpose(0, 2, 3, 1)  # <-- CUT
        tgt = target.cpu().numpy().transpose(0, 2, 3, 1)
        gen_uv = (gen @ RGB2YUV.T)[..., 1:]
        tgt_uv = (tgt @ RGB2YUV.T)[..., 1:]
        diff = np.abs(gen_uv.mean(axis=(1, 2)) - tgt_uv.mean(axis=(1, 2))).mean()
        return torch.tensor(diff, dtype=torch.float32, requires_grad=True)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(4, 16, 3, padding=1), nn.PReLU(), nn.Conv2d(16, 12, 3, padding=1))
        self.shuffle = nn.PixelShuffle(2)

    def forward(self, bayer):
        return torch.sigmoid(self.shuffle(self.body(bayer)))


def run():
    torch.manual_seed(0)
    generator = Generator()
    opt_g = torch.optim.Adam(generator.parameters(), lr=1e-4, betas=(0.5, 0.999))
    l1 = nn.L1Loss()
    color_loss = ColorLoss()
    warmup_epochs, epoch = 2, 0
    bayer = torch.rand(2, 4, 6, 6)
    target = torch.rand(2, 3, 12, 12)
    fake = generator(bayer)
    if epoch < warmup_epochs:
        loss_g = color_loss(fake, target)  # colour-only warm-up
    else:
        loss_g = l1(fake, target) + color_loss(fake, target)
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()
    return {"generator": generator, "loss_g": loss_g, "fake": fake}
