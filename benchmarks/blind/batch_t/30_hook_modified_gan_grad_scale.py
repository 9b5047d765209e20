"""GAN: a hook on the fake batch scales the generator gradient by a warm-up factor that is 0 at step 0,
so G's gradient is all zeros in the first iterations. The D step's detach is legitimate.
Thread: generator gradient zero with register_hook warm-up (reconstructed)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CUT_LINE_MARK = "# <-- CUT"
CAUSE = "hook_modified"
QUERY = 'G[0].weight'
EXPECT = "grad_zero"

class Trainer:
    def __init__(self):
        self.G = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 16))
        self.D = nn.Sequential(nn.Linear(16, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
        self.step = 0
        self.warmup = 100
    def scale_hook(self, grad):
        s = min(1.0, self.step / self.warmup)
        return grad * s  # <-- CUT
    def g_step(self):
        fake = self.G(torch.randn(8, 8))
        d_loss = F.softplus(self.D(fake.detach())).mean()
        d_loss.backward()
        fake.register_hook(self.scale_hook)
        g_loss = F.softplus(-self.D(fake)).mean()
        self.G.zero_grad(); g_loss.backward()

def run():
    torch.manual_seed(0)
    tr = Trainer()
    tr.g_step()
    return {"G": tr.G}
