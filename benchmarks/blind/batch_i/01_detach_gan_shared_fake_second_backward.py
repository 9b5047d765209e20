"""GAN trainer that updates the generator first and then the discriminator with
the same fake batch. The D loss goes through D(fake) without .detach(), so its
backward walks back into the generator graph that loss_g.backward() already
freed: "Trying to backward through the graph a second time".
Thread: SO "How does PyTorch's loss.backward() work when retain_graph=True is specified?".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"

CFG = {"z_dim": 8, "x_dim": 16, "batch": 12, "lr_g": 2e-4, "lr_d": 2e-4}


class Generator(nn.Module):
    def __init__(self, z_dim, x_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(z_dim, 32), nn.ReLU(), nn.Linear(32, x_dim), nn.Tanh())

    def forward(self, z):
        return self.net(z)


class Discriminator(nn.Module):
    def __init__(self, x_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(x_dim, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))

    def forward(self, x):
        return self.net(x)


class GANTrainer:
    def __init__(self, cfg):
        self.cfg = cfg
        self.G = Generator(cfg["z_dim"], cfg["x_dim"])
        self.D = Discriminator(cfg["x_dim"])
        self.optim_g = torch.optim.Adam(self.G.parameters(), lr=cfg["lr_g"], betas=(0.5, 0.999))
        self.optim_d = torch.optim.Adam(self.D.parameters(), lr=cfg["lr_d"], betas=(0.5, 0.999))

    def losses(self, real):
        z = torch.randn(real.size(0), self.cfg["z_dim"])
        fake = self.G(z)
        ones = torch.ones(real.size(0), 1)
        zeros = torch.zeros(real.size(0), 1)
        loss_g = F.binary_cross_entropy_with_logits(self.D(fake), ones)
        d_real = self.D(real)
        d_fake = self.D(fake)  # <-- CUT
        loss_d = (F.binary_cross_entropy_with_logits(d_real, ones)
                  + F.binary_cross_entropy_with_logits(d_fake, zeros))
        return loss_g, loss_d

    def step(self, real):
        loss_g, loss_d = self.losses(real)
        self.optim_g.zero_grad()
        loss_g.backward()
        self.optim_g.step()
        self.optim_d.zero_grad()
        loss_d.backward()
        self.optim_d.step()
        return loss_g, loss_d


def run():
    torch.manual_seed(0)
    trainer = GANTrainer(CFG)
    real = torch.randn(CFG["batch"], CFG["x_dim"]).tanh()
    loss_g, loss_d = trainer.step(real)
    return {"trainer": trainer, "G": trainer.G, "D": trainer.D, "loss_g": loss_g, "loss_d": loss_d}
