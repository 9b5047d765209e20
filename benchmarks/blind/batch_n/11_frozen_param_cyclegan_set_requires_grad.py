"""CycleGAN-style model: set_requires_grad([netD_A, netD_B], False) before the G step is never
undone before the D step; the optimizer only holds D, so backward raises.
Thread: junyanz/pytorch-CycleGAN-and-pix2pix set_requires_grad questions (reconstructed)."""
import torch
import torch.nn as nn

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.netD_A.weight"
EXPECT = "backward_error"


class Model:
    def __init__(self):
        self.netG_A = nn.Linear(6, 6)
        self.netD_A = nn.Linear(6, 1)
        self.opt_G = torch.optim.Adam(self.netG_A.parameters(), 2e-4)
        self.opt_D = torch.optim.Adam(self.netD_A.parameters(), 2e-4)

    def set_requires_grad(self, nets, flag):
        for net in nets:
            for p in net.parameters():
                p.requires_grad = flag  # <-- CUT

    def optimize(self, real_A, real_B):
        fake_B = self.netG_A(real_A)
        self.set_requires_grad([self.netD_A], False)
        self.opt_G.zero_grad()
        ((self.netD_A(fake_B) - 1) ** 2).mean().backward()
        self.opt_G.step()
        self.opt_D.zero_grad()
        loss_D = ((self.netD_A(real_B) - 1) ** 2).mean() + (self.netD_A(fake_B.detach()) ** 2).mean()
        loss_D.backward()
        self.opt_D.step()


def run():
    torch.manual_seed(0)
    model = Model()
    model.optimize(torch.randn(4, 6), torch.randn(4, 6))
    return {"model": model}
