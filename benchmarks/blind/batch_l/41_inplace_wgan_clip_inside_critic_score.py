"""WGAN with weight clipping. The user replaced the old p.data.clamp_() with the
recommended `with torch.no_grad(): p.clamp_(-c, c)` and moved it into critic_score(),
"so the critic is Lipschitz every time it is used". The clamp now runs between the
critic's forward on the fake batch and d_loss.backward(); it bumps the version of the
weights that forward saved, so backward raises. The detached fake is correct.
"""
import torch
import torch.nn as nn

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class Generator(nn.Module):
    def __init__(self, nz=8, d=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(nz, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, d), nn.Tanh())

    def forward(self, z):
        return self.net(z)


class Critic(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


class WGANTrainer:
    def __init__(self, G, D, clip=0.01, n_critic=5):
        self.G, self.D, self.clip, self.n_critic = G, D, clip, n_critic
        self.g_opt = torch.optim.RMSprop(G.parameters(), lr=5e-5)
        self.d_opt = torch.optim.RMSprop(D.parameters(), lr=5e-5)

    def clip_critic(self):
        with torch.no_grad():
            for p in self.D.parameters():
                p.clamp_(-self.clip, self.clip)  # <-- CUT

    def critic_score(self, x):
        out = self.D(x)
        self.clip_critic()
        return out

    def critic_step(self, real, z):
        fake = self.G(z).detach()
        d_loss = self.critic_score(fake).mean() - self.critic_score(real).mean()
        self.d_opt.zero_grad()
        d_loss.backward()
        self.d_opt.step()
        return d_loss

    def generator_step(self, z):
        g_loss = -self.critic_score(self.G(z)).mean()
        self.g_opt.zero_grad()
        g_loss.backward()
        self.g_opt.step()
        return g_loss


def run():
    torch.manual_seed(0)
    trainer = WGANTrainer(Generator(), Critic())
    real = torch.rand(16, 16) * 2 - 1
    d_loss = trainer.critic_step(real, torch.randn(16, 8))
    g_loss = trainer.generator_step(torch.randn(16, 8))
    return {"trainer": trainer, "d_loss": d_loss, "g_loss": g_loss}
