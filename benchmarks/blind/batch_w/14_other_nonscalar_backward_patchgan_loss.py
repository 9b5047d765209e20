"""PyTorch-GAN pix2pix port: the PatchGAN criterion is built with reduction='none'
(to weight patches later), so loss_GAN is a 1x1x2x2 patch map; loss_G = loss_GAN +
lambda * loss_pixel is still a tensor and loss_G.backward() raises "grad can be
implicitly created only for scalar outputs".
"""
import torch
import torch.nn as nn

CAUSE = "other:nonscalar_backward"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class GeneratorUNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.down = nn.Conv2d(3, 8, 4, stride=2, padding=1)
        self.up = nn.ConvTranspose2d(8, 3, 4, stride=2, padding=1)

    def forward(self, x):
        return torch.tanh(self.up(torch.relu(self.down(x))))


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = nn.Sequential(nn.Conv2d(6, 8, 4, stride=2, padding=1), nn.LeakyReLU(0.2),
                                   nn.Conv2d(8, 1, 4, stride=2, padding=1))

    def forward(self, img_A, img_B):
        return self.model(torch.cat((img_A, img_B), 1))


def run():
    torch.manual_seed(0)
    generator, discriminator = GeneratorUNet(), Discriminator()
    criterion_GAN = nn.MSELoss(reduction="none")  # <-- CUT
    criterion_pixelwise = nn.L1Loss()
    lambda_pixel = 100
    optimizer_G = torch.optim.Adam(generator.parameters(), lr=2e-4, betas=(0.5, 0.999))
    real_A, real_B = torch.rand(1, 3, 8, 8), torch.rand(1, 3, 8, 8)
    valid = torch.ones(1, 1, 2, 2)

    optimizer_G.zero_grad()
    fake_B = generator(real_A)
    pred_fake = discriminator(fake_B, real_A)
    loss_GAN = criterion_GAN(pred_fake, valid)
    loss_pixel = criterion_pixelwise(fake_B, real_B)
    loss_G = loss_GAN + lambda_pixel * loss_pixel
    loss_G.backward()
    optimizer_G.step()
    return {"generator": generator}
