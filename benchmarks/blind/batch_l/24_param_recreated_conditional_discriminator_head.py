"""Conditional GAN with a projection discriminator. The trainer builds both optimizers,
then calls D.set_num_classes(len(dataset.classes)) which re-creates the class embedding.
The D step (with a correctly detached fake) trains the new embedding, but the tensor
d_opt holds is the old one: it never gets a gradient and is what the optimizer steps.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "param_recreated"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "trainer.d_opt.param_groups[0]['params'][-1]"
EXPECT = "grad_none"


class Generator(nn.Module):
    def __init__(self, nz=8, n_cls=10, d=16):
        super().__init__()
        self.emb = nn.Embedding(n_cls, nz)
        self.net = nn.Sequential(nn.Linear(nz, 32), nn.ReLU(), nn.Linear(32, d))

    def forward(self, z, y):
        return self.net(z * self.emb(y))


class ProjectionD(nn.Module):
    def __init__(self, d=16, h=32, n_cls=10):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(d, h), nn.LeakyReLU(0.2))
        self.out = nn.Linear(h, 1)
        self.embed = nn.Embedding(n_cls, h)

    def set_num_classes(self, n_cls):
        self.embed = nn.Embedding(n_cls, self.out.in_features)  # <-- CUT

    def forward(self, x, y):
        h = self.body(x)
        return self.out(h).squeeze(-1) + (self.embed(y) * h).sum(-1)


class CGANTrainer:
    def __init__(self, G, D, n_classes):
        self.G, self.D = G, D
        self.g_opt = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999))
        self.d_opt = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))
        self.D.set_num_classes(n_classes)

    def d_step(self, real, y, z):
        fake = self.G(z, y).detach()
        loss = F.relu(1 - self.D(real, y)).mean() + F.relu(1 + self.D(fake, y)).mean()
        self.d_opt.zero_grad()
        loss.backward()
        self.d_opt.step()
        return loss


def run():
    torch.manual_seed(0)
    trainer = CGANTrainer(Generator(n_cls=6), ProjectionD(), n_classes=6)
    real = torch.randn(12, 16)
    y = torch.randint(0, 6, (12,))
    loss = trainer.d_step(real, y, torch.randn(12, 8))
    return {"trainer": trainer, "loss": loss}
