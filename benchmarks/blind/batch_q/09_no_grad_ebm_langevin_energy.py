"""Energy-based model trained with short-run Langevin dynamics. The whole sampler
is wrapped in `torch.no_grad()` (the negatives must not carry graph), but the
sampler needs dE/dx, so `torch.autograd.grad` inside it raises "element 0 of
tensors does not require grad".
"""
import torch
import torch.nn as nn

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class EnergyNet(nn.Module):
    def __init__(self, d=2):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d, 32), nn.SiLU(), nn.Linear(32, 32), nn.SiLU(), nn.Linear(32, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


class LangevinSampler:
    def __init__(self, steps=5, step_size=0.1, noise=0.01):
        self.steps, self.step_size, self.noise = steps, step_size, noise

    def sample(self, ebm, x):
        x = x.clone().requires_grad_(True)
        for _ in range(self.steps):
            energy = ebm(x).sum()  # <-- CUT
            g, = torch.autograd.grad(energy, x)
            x = (x - self.step_size * g + self.noise * torch.randn_like(x)).detach().requires_grad_(True)
        return x.detach()


def run():
    torch.manual_seed(0)
    ebm = EnergyNet()
    opt = torch.optim.Adam(ebm.parameters(), lr=1e-4)
    sampler = LangevinSampler()
    x_pos = torch.randn(16, 2) * 0.5 + 1.0
    with torch.no_grad():
        x_neg = sampler.sample(ebm, torch.rand(16, 2) * 4 - 2)
    loss = ebm(x_pos).mean() - ebm(x_neg).mean() + 0.1 * (ebm(x_pos) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"ebm": ebm, "loss": loss}
