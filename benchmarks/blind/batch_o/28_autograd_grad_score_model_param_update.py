"""Energy-based denoising score matching: torch.autograd.grad is (correctly)
used to get the score -dE/dx with create_graph=True. The trainer then also uses
torch.autograd.grad(loss, params) to log per-parameter grad norms instead of
calling backward, so opt.step() sees .grad None everywhere.
"""
import torch
import torch.nn as nn

CAUSE = "autograd_grad_not_backward"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.net[0].weight"
EXPECT = "grad_none"


class Energy(nn.Module):
    def __init__(self, d=2):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d, 32), nn.Softplus(), nn.Linear(32, 32),
                                 nn.Softplus(), nn.Linear(32, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


def dsm_loss(model, x, sigma=0.1):
    noise = torch.randn_like(x) * sigma
    x_noisy = (x + noise).requires_grad_(True)
    energy = model(x_noisy)
    score = -torch.autograd.grad(energy.sum(), x_noisy, create_graph=True)[0]
    target = -noise / sigma ** 2
    return 0.5 * ((score - target) ** 2).sum(-1).mean() * sigma ** 2


def run():
    torch.manual_seed(0)
    model = Energy()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(64, 2) * 0.5 + 1.0
    opt.zero_grad()
    loss = dsm_loss(model, x)
    grads = torch.autograd.grad(loss, list(model.parameters()), allow_unused=True)  # <-- CUT
    grad_norms = [g.norm().item() for g in grads if g is not None]
    opt.step()
    return {"model": model, "loss": loss, "grad_norms": grad_norms}
