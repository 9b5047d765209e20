"""Control (Lightning-style manual-optimization GAN): toggle_optimizer/untoggle_optimizer around
each step (restoring the saved requires_grad flags), `fake.detach()` for the D step, D frozen by
the toggle during the G step, `.item()` logging. The generator trains normally.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "gan.G[0].weight"
EXPECT = "grad_ok"


class SimpleGAN(nn.Module):
    def __init__(self):
        super().__init__()
        self.G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8))
        self.D = nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
        self.automatic_optimization = False
        self.opts = [torch.optim.Adam(self.G.parameters(), lr=2e-4), torch.optim.Adam(self.D.parameters(), lr=2e-4)]
        self._saved = {}
        self.logs = {}

    def toggle_optimizer(self, optimizer):
        for p in self.parameters():
            self._saved.setdefault(p, p.requires_grad)
            p.requires_grad = False
        for group in optimizer.param_groups:
            for p in group["params"]:
                p.requires_grad = self._saved[p]

    def untoggle_optimizer(self):
        for p, flag in self._saved.items():
            p.requires_grad = flag
        self._saved = {}

    def training_step(self, real):
        g_opt, d_opt = self.opts
        z = torch.randn(real.size(0), 4)
        fake = self.G(z)
        self.toggle_optimizer(d_opt)
        d_loss = F.softplus(-self.D(real)).mean() + F.softplus(self.D(fake.detach())).mean()
        d_opt.zero_grad()
        d_loss.backward()
        d_opt.step()
        self.untoggle_optimizer()
        self.toggle_optimizer(g_opt)
        g_loss = F.softplus(-self.D(fake)).mean()  # <-- CUT
        g_opt.zero_grad()
        g_loss.backward()
        g_opt.step()
        self.untoggle_optimizer()
        self.logs = {"d_loss": d_loss.item(), "g_loss": g_loss.item()}
        return g_loss


def run():
    torch.manual_seed(0)
    gan = SimpleGAN()
    real = torch.randn(16, 8)
    loss = gan.training_step(real)
    return {"gan": gan, "loss": loss}
