"""Image-to-image GAN with a semantic-consistency loss (jolibrain/joliGEN#20): to get
rid of an in-place gradient error, the generated image is detached before it goes
into the semantic network f_s. The reviewer notes loss_sem is then useless for G.
During the semantic warm-up epochs (GAN loss not started yet) G gets no gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.netG_A.body[0].weight"
EXPECT = "grad_none"


class ResnetGenerator(nn.Module):
    def __init__(self, c=3, nf=8):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(c, nf, 3, padding=1), nn.InstanceNorm2d(nf), nn.ReLU(True),
            nn.Conv2d(nf, nf, 3, padding=1), nn.InstanceNorm2d(nf), nn.ReLU(True),
            nn.Conv2d(nf, c, 3, padding=1), nn.Tanh())

    def forward(self, x):
        return self.body(x)


class SemNet(nn.Module):
    def __init__(self, c=3, n_cls=4):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(c, 8, 3, padding=1), nn.ReLU(),
                                 nn.Conv2d(8, n_cls, 1))

    def forward(self, x):
        return self.net(x)


class CycleGANSemanticModel:
    def __init__(self, gan_start_epoch=2, lambda_sem=1.0):
        self.netG_A = ResnetGenerator()
        self.netf_s = SemNet()
        self.netD_B = nn.Sequential(nn.Conv2d(3, 8, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(8, 1, 4))
        self.gan_start_epoch = gan_start_epoch
        self.lambda_sem = lambda_sem
        self.optimizer_G = torch.optim.Adam(self.netG_A.parameters(), lr=2e-4)
        self.optimizer_f_s = torch.optim.Adam(self.netf_s.parameters(), lr=2e-4)

    def forward(self, real_A):
        self.real_A = real_A
        self.fake_B = self.netG_A(real_A)

    def backward_G(self, label_A, epoch):
        self.loss_G = torch.zeros(())
        if epoch >= self.gan_start_epoch:
            pred = self.netD_B(self.fake_B)
            self.loss_G = self.loss_G + F.mse_loss(pred, torch.ones_like(pred))
        self.pfB = self.netf_s(self.fake_B.detach())  # <-- CUT
        self.loss_sem = F.cross_entropy(self.pfB, label_A)
        self.loss_G = self.loss_G + self.lambda_sem * self.loss_sem
        self.loss_G.backward()

    def optimize_parameters(self, real_A, label_A, epoch):
        self.forward(real_A)
        self.optimizer_G.zero_grad()
        self.optimizer_f_s.zero_grad()
        self.backward_G(label_A, epoch)
        self.optimizer_G.step()
        self.optimizer_f_s.step()


def run():
    torch.manual_seed(0)
    model = CycleGANSemanticModel()
    real_A = torch.randn(2, 3, 16, 16)
    label_A = torch.randint(0, 4, (2, 16, 16))
    for epoch in range(1):
        model.optimize_parameters(real_A, label_A, epoch)
    return {"model": model, "real_A": real_A, "label_A": label_A}
