"""Text GAN: the generator's token logits go through argmax + one_hot before the discriminator,
so the G step gives G no gradient. The D step's fake.detach() is legitimate.
Thread: GAN for discrete sequences, generator gradient None (reconstructed)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CUT_LINE_MARK = "# <-- CUT"
CAUSE = "nondifferentiable_op"
QUERY = 'G.out.weight'
EXPECT = "grad_none"

class Gen(nn.Module):
    def __init__(self, V=10, L=6):
        super().__init__()
        self.fc = nn.Linear(8, 32)
        self.out = nn.Linear(32, V * L)
        self.V, self.L = V, L
    def forward(self, z):
        logits = self.out(torch.relu(self.fc(z))).view(-1, self.L, self.V)
        tokens = logits.argmax(-1)  # <-- CUT
        return F.one_hot(tokens, self.V).float()

def run():
    torch.manual_seed(0)
    G = Gen()
    D = nn.Sequential(nn.Flatten(), nn.Linear(60, 32), nn.ReLU(), nn.Linear(32, 1))
    g_opt, d_opt = torch.optim.Adam(G.parameters(), 1e-4), torch.optim.Adam(D.parameters(), 1e-4)
    real = F.one_hot(torch.randint(0, 10, (8, 6)), 10).float()
    fake = G(torch.randn(8, 8))
    d_loss = F.softplus(-D(real)).mean() + F.softplus(D(fake.detach())).mean()
    d_opt.zero_grad(); d_loss.backward(); d_opt.step()
    g_loss = F.softplus(-D(fake)).mean()
    g_opt.zero_grad(); g_loss.backward(); g_opt.step()
    return {"G": G, "D": D}
