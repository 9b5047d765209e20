"""Seq-GAN-like trainer: the generator's actions are taken with argmax and one-hot encoded before
the discriminator, so the generator policy head gets no grad from D.
Thread: GAN for discrete tokens "generator gradient is None" (reconstructed from memory)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "gen.head.weight"
EXPECT = "grad_none"


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(5, 7)

    def forward(self, z):
        logits = self.head(z)
        ids = logits.argmax(-1)  # <-- CUT
        return F.one_hot(ids, 7).float()


def run():
    torch.manual_seed(0)
    gen = Generator()
    disc = nn.Linear(7, 1)
    z = torch.randn(6, 5)
    g_loss = F.softplus(-disc(gen(z))).mean()
    g_loss.backward()
    return {"gen": gen}
