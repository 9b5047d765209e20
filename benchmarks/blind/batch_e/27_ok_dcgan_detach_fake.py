"""Control (pytorch/examples#116): the DCGAN discriminator step uses
`netD(fake.detach())`, and the asker wonders whether the detach is needed or breaks
training. It is only for speed (no backward through G in the D step); the
discriminator's weights get their gradient as usual.
"""
import torch
import torch.nn as nn

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "netD.main[0].weight"
EXPECT = "grad_ok"


class Generator(nn.Module):
    def __init__(self, nz=8, ngf=8):
        super().__init__()
        self.main = nn.Sequential(nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
                                  nn.ConvTranspose2d(ngf * 2, 1, 4, 2, 1, bias=False), nn.Tanh())

    def forward(self, z):
        return self.main(z)


class Discriminator(nn.Module):
    def __init__(self, ndf=8):
        super().__init__()
        self.main = nn.Sequential(nn.Conv2d(1, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
                                  nn.Conv2d(ndf, 1, 4, 1, 0, bias=False), nn.Sigmoid())

    def forward(self, x):
        return self.main(x).view(-1, 1).squeeze(1)


def run():
    torch.manual_seed(0)
    netG, netD = Generator(), Discriminator()
    criterion = nn.BCELoss()
    optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    real = torch.rand(4, 1, 8, 8) * 2 - 1
    noise = torch.randn(4, 8, 1, 1)
    netD.zero_grad()
    label = torch.full((4,), 1.0)
    errD_real = criterion(netD(real), label)
    errD_real.backward()
    fake = netG(noise)
    label.fill_(0.0)
    output = netD(fake.detach())
    errD_fake = criterion(output, label)  # <-- CUT
    errD_fake.backward()
    errD = errD_real + errD_fake
    optimizerD.step()
    log = "Loss_D: %.4f D(G(z)): %.4f" % (errD.item(), output.mean().item())
    return {"netD": netD, "netG": netG, "optimizerD": optimizerD, "optimizerG": optimizerG, "log": log}
