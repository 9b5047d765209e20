"""CycleGAN-repo user adds a color-consistency loss: the generator's color branch
output goes through util-style tensor2im (.cpu().float().numpy(), to uint8-range
numpy), the histogram loss is computed in numpy and wrapped back with torch.from_numpy.
The color branch receives no gradient from it; the GAN/cycle terms still train the rest.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "netG.color_head.weight"
EXPECT = "grad_none"


def tensor2im(input_image, imtype=np.float32):
    image_numpy = input_image[0].detach().cpu().float().numpy()  # <-- CUT
    image_numpy = (np.transpose(image_numpy, (1, 2, 0)) + 1) / 2.0 * 255.0
    return image_numpy.astype(imtype)


def color_hist_loss(fake, real, bins=8):
    hf = np.histogram(tensor2im(fake), bins=bins, range=(0, 255))[0].astype(np.float32)
    hr = np.histogram(tensor2im(real), bins=bins, range=(0, 255))[0].astype(np.float32)
    return torch.from_numpy(np.abs(hf / hf.sum() - hr / hr.sum()).sum(keepdims=True)).squeeze()


class ColorGenerator(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 3, 3, padding=1))
        self.color_head = nn.Conv2d(3, 3, 1)

    def forward(self, x):
        out = torch.tanh(self.body(x))
        return out, torch.tanh(self.color_head(out))


def run():
    torch.manual_seed(0)
    netG = ColorGenerator()
    netD = nn.Sequential(nn.Conv2d(3, 4, 4, stride=2, padding=1), nn.LeakyReLU(0.2), nn.Conv2d(4, 1, 3, padding=1))
    opt = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    real_A, real_B = torch.rand(1, 3, 8, 8) * 2 - 1, torch.rand(1, 3, 8, 8) * 2 - 1
    fake_B, fake_color = netG(real_A)
    pred = netD(fake_B)
    loss_G_GAN = F.mse_loss(pred, torch.ones_like(pred))
    loss_color = color_hist_loss(fake_color, real_B)
    loss_G = loss_G_GAN + F.l1_loss(fake_B, real_A) * 10 + loss_color * 5
    opt.zero_grad()
    loss_G.backward()
    opt.step()
    return {"netG": netG, "loss_G": loss_G}
