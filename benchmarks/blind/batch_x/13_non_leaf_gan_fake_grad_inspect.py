"""GAN debugging: to see whether D gives G any signal, the user prints fake.grad after
g_loss.backward(); fake = G(z) is a non-leaf, so its .grad is None even though G
trains. The D step's fake.detach() is correct.
Thread (from memory): discuss.pytorch.org 'GAN generator output .grad is None'."""
import torch
import torch.nn as nn

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "fake"
EXPECT = "grad_none"


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(10, 64), nn.ReLU(), nn.Linear(64, 28), nn.Tanh())

    def forward(self, z):
        return self.main(z)


def run():
    torch.manual_seed(0)
    G = Generator()
    D = nn.Sequential(nn.Linear(28, 64), nn.LeakyReLU(0.2), nn.Linear(64, 1))
    opt_g = torch.optim.Adam(G.parameters(), lr=2e-4)
    opt_d = torch.optim.Adam(D.parameters(), lr=2e-4)
    crit = nn.BCEWithLogitsLoss()
    real = torch.randn(16, 28)
    z = torch.randn(16, 10)
    fake = G(z)  # <-- CUT
    d_loss = crit(D(real), torch.ones(16, 1)) + crit(D(fake.detach()), torch.zeros(16, 1))
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()
    g_loss = crit(D(fake), torch.ones(16, 1))
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
    return {"G": G, "D": D, "fake": fake}
