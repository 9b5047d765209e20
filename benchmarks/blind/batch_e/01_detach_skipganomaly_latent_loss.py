"""Skip-GANomaly-style generator step (samet-akcay/skip-ganomaly#5): the latent
(feature-matching) loss compares discriminator features of the real image with
those of the reconstruction, but the reconstruction is detached before D sees it.
In the latent-only warm-up iteration the generator's encoder gets no gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "netg.enc[0].weight"
EXPECT = "grad_none"


class Generator(nn.Module):
    def __init__(self, c=1, nf=8):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(c, nf, 4, 2, 1), nn.LeakyReLU(0.2),
                                 nn.Conv2d(nf, nf * 2, 4, 2, 1), nn.LeakyReLU(0.2))
        self.dec = nn.Sequential(nn.ConvTranspose2d(nf * 2, nf, 4, 2, 1), nn.ReLU(),
                                 nn.ConvTranspose2d(nf, c, 4, 2, 1), nn.Tanh())

    def forward(self, x):
        return self.dec(self.enc(x))


class Discriminator(nn.Module):
    def __init__(self, c=1, nf=8):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(c, nf, 4, 2, 1), nn.LeakyReLU(0.2),
                                      nn.Conv2d(nf, nf * 2, 4, 2, 1), nn.LeakyReLU(0.2))
        self.classifier = nn.Sequential(nn.Conv2d(nf * 2, 1, 4, 1, 0), nn.Sigmoid())

    def forward(self, x):
        feat = self.features(x)
        return self.classifier(feat).view(-1), feat


class Options:
    w_adv = 1.0
    w_con = 50.0
    w_lat = 1.0
    warmup_latent_only = True


class SkipGanomaly:
    def __init__(self, opt):
        self.opt = opt
        self.netg = Generator()
        self.netd = Discriminator()
        self.optimizer_g = torch.optim.Adam(self.netg.parameters(), lr=2e-4, betas=(0.5, 0.999))
        self.optimizer_d = torch.optim.Adam(self.netd.parameters(), lr=2e-4, betas=(0.5, 0.999))

    def forward_g(self, x):
        self.fake = self.netg(x)

    def backward_g(self, x):
        _, feat_real = self.netd(x)
        pred_fake, feat_fake = self.netd(self.fake.detach())  # <-- CUT
        self.err_g_lat = F.mse_loss(feat_fake, feat_real.detach())
        if self.opt.warmup_latent_only:
            self.err_g = self.opt.w_lat * self.err_g_lat
        else:
            err_g_adv = F.binary_cross_entropy(pred_fake, torch.ones_like(pred_fake))
            err_g_con = F.l1_loss(self.fake, x)
            self.err_g = (self.opt.w_adv * err_g_adv + self.opt.w_con * err_g_con
                          + self.opt.w_lat * self.err_g_lat)
        self.err_g.backward()


def run():
    torch.manual_seed(0)
    model = SkipGanomaly(Options())
    x = torch.randn(4, 1, 16, 16).clamp(-1, 1)
    model.optimizer_g.zero_grad()
    model.forward_g(x)
    model.backward_g(x)
    model.optimizer_g.step()
    log = {"err_g": model.err_g.item(), "err_g_lat": model.err_g_lat.item()}
    return {"model": model, "netg": model.netg, "netd": model.netd, "x": x, "log": log}
