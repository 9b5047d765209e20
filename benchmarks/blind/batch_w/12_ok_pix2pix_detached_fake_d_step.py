"""pix2pix-style model: backward_D scores fake_B.detach() (so D's step does not
touch G), set_requires_grad(netD, False) around the G step is undone afterwards, and
losses are logged with .item(). Everything looks cut, yet netG trains.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.netG[0].weight"
EXPECT = "grad_ok"


class Pix2PixModel:
    def __init__(self, lambda_L1=100.0):
        self.netG = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 3, 3, padding=1), nn.Tanh())
        self.netD = nn.Sequential(nn.Conv2d(6, 8, 4, stride=2, padding=1), nn.LeakyReLU(0.2), nn.Conv2d(8, 1, 3, padding=1))
        self.optimizer_G = torch.optim.Adam(self.netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
        self.optimizer_D = torch.optim.Adam(self.netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
        self.lambda_L1 = lambda_L1
        self.losses = {}

    @staticmethod
    def set_requires_grad(net, flag):
        for p in net.parameters():
            p.requires_grad = flag

    def gan_loss(self, pred, is_real):
        return F.mse_loss(pred, torch.full_like(pred, 1.0 if is_real else 0.0))

    def backward_D(self):
        pred_fake = self.netD(torch.cat([self.real_A, self.fake_B.detach()], 1))
        pred_real = self.netD(torch.cat([self.real_A, self.real_B], 1))
        self.loss_D = 0.5 * (self.gan_loss(pred_fake, False) + self.gan_loss(pred_real, True))
        self.loss_D.backward()

    def backward_G(self):
        pred_fake = self.netD(torch.cat([self.real_A, self.fake_B], 1))
        self.loss_G = self.gan_loss(pred_fake, True) + F.l1_loss(self.fake_B, self.real_B) * self.lambda_L1  # <-- CUT
        self.loss_G.backward()

    def optimize_parameters(self, real_A, real_B):
        self.real_A, self.real_B = real_A, real_B
        self.fake_B = self.netG(real_A)
        self.set_requires_grad(self.netD, True)
        self.optimizer_D.zero_grad()
        self.backward_D()
        self.optimizer_D.step()
        self.set_requires_grad(self.netD, False)
        self.optimizer_G.zero_grad()
        self.backward_G()
        self.optimizer_G.step()
        self.set_requires_grad(self.netD, True)
        self.losses = {"D": self.loss_D.item(), "G": self.loss_G.item()}


def run():
    torch.manual_seed(0)
    model = Pix2PixModel()
    model.optimize_parameters(torch.rand(2, 3, 8, 8) * 2 - 1, torch.rand(2, 3, 8, 8) * 2 - 1)
    return {"model": model}
