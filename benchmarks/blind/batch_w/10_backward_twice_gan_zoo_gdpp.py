"""GAN zoo-style trainer with the GDPP option: the generator step calls
lossGFake.backward() and then, in a separate block, computes the GDPP loss from the
same D features and calls backward again. The shared graph (G and D's feature
layer) was freed by the first call: "Trying to backward through the graph a second time".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "backward_twice"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(12, 16), nn.LeakyReLU(0.2))
        self.decision = nn.Linear(16, 1)

    def forward(self, x, get_feature=False):
        f = self.features(x)
        out = self.decision(f)
        return (out, f) if get_feature else out


def gdpp_loss(phi_fake, phi_real):
    def eig(phi):
        phi = F.normalize(phi, dim=1)
        return torch.linalg.eigvalsh(phi.T @ phi)
    return F.mse_loss(eig(phi_fake), eig(phi_real))


class BaseGAN:
    def __init__(self, use_gdpp=True):
        self.netG = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 12))
        self.netD = Discriminator()
        self.optG = torch.optim.Adam(self.netG.parameters(), lr=1e-3)
        self.use_gdpp = use_gdpp

    def optimize_generator(self, real, z):
        self.optG.zero_grad()
        fake = self.netG(z)
        pred_fake, phi_fake = self.netD(fake, True)
        lossGFake = F.softplus(-pred_fake).mean()
        lossGFake.backward()  # <-- CUT
        if self.use_gdpp:
            with torch.no_grad():
                _, phi_real = self.netD(real, True)
            loss_gdpp = gdpp_loss(phi_fake, phi_real)
            loss_gdpp.backward()
        self.optG.step()


def run():
    torch.manual_seed(0)
    gan = BaseGAN()
    gan.optimize_generator(torch.randn(8, 12), torch.randn(8, 4))
    return {"gan": gan}
