"""Control: an energy-based model with a persistent replay buffer. The Langevin
sampler runs under no_grad with enable_grad inside for dE/dx, the samples are
detached before they go back into the buffer, and the energies are logged with
.item(). All of these cuts are correct; the EBM weights get a gradient.
"""
import torch
import torch.nn as nn

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "ebm.net[0].weight"
EXPECT = "grad_ok"


class EBM(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, 32), nn.SiLU(), nn.Linear(32, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


class ReplayBuffer:
    def __init__(self, n=64, reinit=0.05):
        self.data = torch.rand(n, 2) * 4 - 2
        self.reinit = reinit

    def sample(self, k):
        idx = torch.randperm(self.data.size(0))[:k]
        x = self.data[idx].clone()
        fresh = torch.rand(k) < self.reinit
        x[fresh] = torch.rand(int(fresh.sum()), 2) * 4 - 2
        return x, idx

    def push(self, x, idx):
        self.data[idx] = x.detach()


@torch.no_grad()
def langevin(ebm, x, steps=5, step=0.05):
    for _ in range(steps):
        with torch.enable_grad():
            x = x.detach().requires_grad_(True)
            g, = torch.autograd.grad(ebm(x).sum(), x)
        x = x - step * g + 0.005 * torch.randn_like(x)
    return x.detach()


def run():
    torch.manual_seed(0)
    ebm, buf = EBM(), ReplayBuffer()
    opt = torch.optim.Adam(ebm.parameters(), lr=1e-4)
    x_pos = torch.randn(16, 2) * 0.3 + 1.0
    x0, idx = buf.sample(16)
    x_neg = langevin(ebm, x0)
    buf.push(x_neg, idx)
    e_pos, e_neg = ebm(x_pos), ebm(x_neg)
    loss = e_pos.mean() - e_neg.mean() + 0.1 * (e_pos ** 2 + e_neg ** 2).mean()  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    log = {"e_pos": e_pos.mean().item(), "e_neg": e_neg.mean().item()}
    return {"ebm": ebm, "loss": loss, "log": log}
