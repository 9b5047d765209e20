"""CycleGAN-style trainer with the usual set_requires_grad(nets, flag) helper: both
discriminators are frozen for the generator step, but the discriminator step only re-enables
netD_A (netD_B was dropped from the list in a refactor). loss_D_A + loss_D_B still backprops
through D_A, so nothing raises; netD_B's gradients are None.
Thread: no forum thread located; reconstructed pattern (see SOURCES.md notes).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.netD_B[0].weight"
EXPECT = "grad_none"


def conv_net(out_act=None):
    layers = [nn.Conv2d(3, 8, 3, 1, 1), nn.LeakyReLU(0.2), nn.Conv2d(8, 3 if out_act else 1, 3, 1, 1)]
    if out_act:
        layers.append(out_act)
    return nn.Sequential(*layers)


class CycleGANModel:
    def __init__(self, lambda_cycle=10.0):
        self.netG_A, self.netG_B = conv_net(nn.Tanh()), conv_net(nn.Tanh())
        self.netD_A, self.netD_B = conv_net(), conv_net()
        self.lambda_cycle = lambda_cycle
        self.optimizer_G = torch.optim.Adam(list(self.netG_A.parameters()) + list(self.netG_B.parameters()), lr=2e-4)
        self.optimizer_D = torch.optim.Adam(list(self.netD_A.parameters()) + list(self.netD_B.parameters()), lr=2e-4)

    def set_requires_grad(self, nets, requires_grad=False):
        if not isinstance(nets, list):
            nets = [nets]
        for net in nets:
            if net is not None:
                for param in net.parameters():
                    param.requires_grad = requires_grad  # <-- CUT

    @staticmethod
    def gan_loss(pred, is_real):
        return F.mse_loss(pred, torch.full_like(pred, 1.0 if is_real else 0.0))

    def optimize_parameters(self, real_A, real_B):
        fake_B, fake_A = self.netG_A(real_A), self.netG_B(real_B)
        rec_A, rec_B = self.netG_B(fake_B), self.netG_A(fake_A)
        # G_A and G_B
        self.set_requires_grad([self.netD_A, self.netD_B], False)
        self.optimizer_G.zero_grad()
        loss_G = (self.gan_loss(self.netD_A(fake_B), True) + self.gan_loss(self.netD_B(fake_A), True)
                  + self.lambda_cycle * (F.l1_loss(rec_A, real_A) + F.l1_loss(rec_B, real_B)))
        loss_G.backward()
        self.optimizer_G.step()
        # D_A and D_B
        self.set_requires_grad([self.netD_A], True)
        self.optimizer_D.zero_grad()
        loss_D_A = 0.5 * (self.gan_loss(self.netD_A(real_B), True) + self.gan_loss(self.netD_A(fake_B.detach()), False))
        loss_D_B = 0.5 * (self.gan_loss(self.netD_B(real_A), True) + self.gan_loss(self.netD_B(fake_A.detach()), False))
        (loss_D_A + loss_D_B).backward()
        self.optimizer_D.step()
        return loss_G, loss_D_A, loss_D_B


def run():
    torch.manual_seed(0)
    model = CycleGANModel()
    real_A, real_B = torch.randn(2, 3, 12, 12), torch.randn(2, 3, 12, 12)
    losses = model.optimize_parameters(real_A, real_B)
    return {"model": model, "losses": losses}
