"""GAN trainer: sample() is decorated with @torch.no_grad() for image logging and then reused
in the generator step, so G gets no grad; the D step's detached fake is legitimate.
Thread: StyleGAN/DCGAN port "generator loss not decreasing" (reconstructed from memory)."""
import torch
import torch.nn as nn

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "gan.G.weight"
EXPECT = "grad_none"


class GAN(nn.Module):
    def __init__(self):
        super().__init__()
        self.G = nn.Linear(3, 6)
        self.D = nn.Linear(6, 1)

    @torch.no_grad()
    def sample(self, z):
        return self.G(z)  # <-- CUT


def run():
    torch.manual_seed(0)
    gan = GAN()
    z = torch.randn(4, 3)
    real = torch.randn(4, 6)
    fake = gan.G(z)
    d_loss = nn.functional.softplus(gan.D(fake.detach())).mean() + nn.functional.softplus(-gan.D(real)).mean()
    d_loss.backward()
    gan.zero_grad(set_to_none=True)
    g_loss = nn.functional.softplus(-gan.D(gan.sample(z))).mean()
    g_loss.backward()
    return {"gan": gan}
