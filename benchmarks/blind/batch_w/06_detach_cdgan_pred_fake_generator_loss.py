"""Change-detection GAN: the D step correctly scores fake.detach(), but the G step
also detaches the discriminator output, pred_fake = netD(fake).detach(), so the
adversarial term reaches nothing; only the reconstruction term trains G's decoder
while the attention branch that feeds the adversarial head alone gets no grad.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "netG.attn.weight"
EXPECT = "grad_none"


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(16, 32)
        self.dec = nn.Linear(32, 8)
        self.attn = nn.Linear(32, 8)

    def forward(self, x1, x2):
        h = torch.relu(self.enc(torch.cat([x1, x2], 1)))
        return torch.sigmoid(self.dec(h)), torch.sigmoid(self.attn(h))


class Config:
    w_adv, w_con, lr = 1.0, 50.0, 2e-4


def run():
    torch.manual_seed(0)
    cfg = Config()
    netG = Generator()
    netD = nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
    optG = torch.optim.Adam(netG.parameters(), lr=cfg.lr, betas=(0.5, 0.999))
    optD = torch.optim.Adam(netD.parameters(), lr=cfg.lr, betas=(0.5, 0.999))
    x1, x2 = torch.rand(6, 8), torch.rand(6, 8)
    label = (torch.rand(6, 8) > 0.7).float()

    fake, fake_att = netG(x1, x2)
    optD.zero_grad()
    pred_real = netD(label)
    pred_fake_d = netD(fake_att.detach())
    err_d = (F.binary_cross_entropy_with_logits(pred_real, torch.ones_like(pred_real))
             + F.binary_cross_entropy_with_logits(pred_fake_d, torch.zeros_like(pred_fake_d)))
    err_d.backward()
    optD.step()

    optG.zero_grad()
    pred_fake = netD(fake_att).detach()  # <-- CUT
    err_g_adv = F.binary_cross_entropy_with_logits(pred_fake, torch.ones_like(pred_fake))
    err_g_con = F.l1_loss(fake, label)
    err_g = cfg.w_adv * err_g_adv + cfg.w_con * err_g_con
    err_g.backward()
    optG.step()
    return {"netG": netG, "netD": netD, "err_g": err_g, "err_d": err_d}
