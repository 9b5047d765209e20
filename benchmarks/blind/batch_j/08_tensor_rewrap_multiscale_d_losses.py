"""pix2pixHD-style generator step with three discriminators at different scales. The per-scale
adversarial losses are collected in a Python list and averaged with torch.tensor(g_losses).mean(),
which copies the values and drops the graph. The discriminator step before it is textbook
(fake.detach()); g_loss.backward() raises "element 0 of tensors does not require grad".
Thread: no forum thread located; reconstructed pattern (see SOURCES.md notes).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "tensor_rewrap"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


def make_d():
    return nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(8, 1, 3, 1, 1))


class MultiscaleDiscriminator(nn.Module):
    def __init__(self, num_D=3):
        super().__init__()
        self.ds = nn.ModuleList([make_d() for _ in range(num_D)])

    def forward(self, x):
        outs = []
        for d in self.ds:
            outs.append(d(x))
            x = F.avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False)
        return outs


class Pix2PixHDTrainer:
    def __init__(self):
        self.G = nn.Sequential(nn.Conv2d(3, 8, 3, 1, 1), nn.ReLU(), nn.Conv2d(8, 3, 3, 1, 1), nn.Tanh())
        self.D = MultiscaleDiscriminator()
        self.opt_G = torch.optim.Adam(self.G.parameters(), lr=2e-4, betas=(0.5, 0.999))
        self.opt_D = torch.optim.Adam(self.D.parameters(), lr=2e-4, betas=(0.5, 0.999))

    def step(self, label_map, real):
        fake = self.G(label_map)
        # discriminator
        self.opt_D.zero_grad()
        d_loss = 0.0
        for p_real, p_fake in zip(self.D(real), self.D(fake.detach())):
            d_loss = d_loss + F.mse_loss(p_real, torch.ones_like(p_real)) + F.mse_loss(p_fake, torch.zeros_like(p_fake))
        d_loss.backward()
        self.opt_D.step()
        # generator
        self.opt_G.zero_grad()
        g_losses = [F.mse_loss(p, torch.ones_like(p)) for p in self.D(fake)]
        g_loss = torch.tensor(g_losses).mean()  # <-- CUT
        g_loss.backward()
        self.opt_G.step()
        return d_loss, g_loss


def run():
    torch.manual_seed(0)
    trainer = Pix2PixHDTrainer()
    label_map, real = torch.randn(2, 3, 16, 16), torch.randn(2, 3, 16, 16)
    d_loss, g_loss = trainer.step(label_map, real)
    return {"trainer": trainer, "d_loss": d_loss, "g_loss": g_loss}
