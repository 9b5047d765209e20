"""Control (pytorch/examples#361, "while updating netG it should not compute
netD's grad"): the DCGAN generator step runs output = netD(fake) without
detaching, so netD also receives gradients, but only optimizerG.step() is called.
This is correct; netG.main[0].weight.grad is a normal nonzero gradient.
"""
import torch
import torch.nn as nn

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "netG.main[0].weight"
EXPECT = "grad_ok"


class Generator(nn.Module):
    def __init__(self, nz=8, ngf=8):
        super().__init__()
        self.main = nn.Sequential(nn.ConvTranspose2d(nz, ngf, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf), nn.ReLU(True),
                                  nn.ConvTranspose2d(ngf, 3, 4, 2, 1, bias=False), nn.Tanh())

    def forward(self, z):
        return self.main(z)


class Discriminator(nn.Module):
    def __init__(self, ndf=8):
        super().__init__()
        self.main = nn.Sequential(nn.Conv2d(3, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
                                  nn.Conv2d(ndf, 1, 4, 1, 0, bias=False), nn.Sigmoid())

    def forward(self, x):
        return self.main(x).view(-1)


def run():
    torch.manual_seed(0)
    netG, netD = Generator(), Discriminator()
    criterion = nn.BCELoss()
    optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    real = torch.rand(4, 3, 8, 8) * 2 - 1
    real_label, fake_label = 1.0, 0.0
    # (1) Update D network
    netD.zero_grad()
    label = torch.full((4,), real_label)
    errD_real = criterion(netD(real), label)
    errD_real.backward()
    noise = torch.randn(4, 8, 1, 1)
    fake = netG(noise)
    label.fill_(fake_label)
    errD_fake = criterion(netD(fake.detach()), label)
    errD_fake.backward()
    optimizerD.step()
    # (2) Update G network
    netG.zero_grad()
    label.fill_(real_label)
    output = netD(fake)
    errG = criterion(output, label)  # <-- CUT
    errG.backward()
    D_G_z2 = output.mean().item()
    optimizerG.step()
    return {"netG": netG, "netD": netD, "errG": errG, "D_G_z2": D_G_z2}
