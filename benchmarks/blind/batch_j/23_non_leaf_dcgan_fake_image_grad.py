"""DCGAN training step (tutorial shape: netD on real, then fake.detach(), then the G step). To
monitor how strongly D pushes on the samples, the user reads fake.grad after errG.backward().
fake = netG(noise) is an intermediate tensor that was never told to retain_grad(), so its .grad
is None even though G's weights are updated normally.
Thread: no forum thread located; reconstructed pattern (see SOURCES.md notes).
"""
import torch
import torch.nn as nn

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "fake"
EXPECT = "grad_none"

nz, ngf, ndf = 8, 8, 8


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, 1, 4, 2, 1, bias=False), nn.Tanh())

    def forward(self, x):
        return self.main(x)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(1, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, 1, 4, 1, 0, bias=False), nn.Sigmoid())

    def forward(self, x):
        return self.main(x).view(-1)


def run():
    torch.manual_seed(0)
    netG, netD = Generator(), Discriminator()
    criterion = nn.BCELoss()
    optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    real = torch.randn(4, 1, 8, 8).clamp(-1, 1)
    b = real.size(0)
    netD.zero_grad()
    errD_real = criterion(netD(real), torch.full((b,), 1.0))
    errD_real.backward()
    noise = torch.randn(b, nz, 1, 1)
    fake = netG(noise)  # <-- CUT
    errD_fake = criterion(netD(fake.detach()), torch.full((b,), 0.0))
    errD_fake.backward()
    optimizerD.step()
    netG.zero_grad()
    errG = criterion(netD(fake), torch.full((b,), 1.0))
    errG.backward()
    optimizerG.step()
    sample_push = fake.grad
    return {"netG": netG, "netD": netD, "fake": fake, "sample_push": sample_push}
