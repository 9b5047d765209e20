"""SAC automatic temperature tuning. To log the gradient norm of log_alpha the
author switched alpha_loss.backward() to torch.autograd.grad(...), which returns
the gradient instead of storing it; alpha_opt.step() then sees log_alpha.grad is
None and the temperature never adapts.
"""
import torch
import torch.nn as nn

CAUSE = "autograd_grad_not_backward"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "log_alpha"
EXPECT = "grad_none"


class TanhGaussianPolicy(nn.Module):
    def __init__(self, s=4, a=2):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(s, 32), nn.ReLU(), nn.Linear(32, 2 * a))

    def forward(self, s):
        mu, log_std = self.net(s).chunk(2, -1)
        std = log_std.clamp(-5, 2).exp()
        u = mu + std * torch.randn_like(mu)
        a = torch.tanh(u)
        logp = (-0.5 * ((u - mu) / std) ** 2 - std.log() - 0.9189).sum(-1) - torch.log(1 - a.pow(2) + 1e-6).sum(-1)
        return a, logp


def run():
    torch.manual_seed(0)
    policy = TanhGaussianPolicy()
    log_alpha = torch.zeros(1, requires_grad=True)
    alpha_opt = torch.optim.Adam([log_alpha], lr=3e-4)
    target_entropy = -2.0
    stats = {}
    s = torch.randn(64, 4)
    with torch.no_grad():
        _, logp = policy(s)
    alpha_loss = -(log_alpha * (logp + target_entropy)).mean()
    alpha_opt.zero_grad()
    (g,) = torch.autograd.grad(alpha_loss, [log_alpha])  # <-- CUT
    stats["alpha_grad_norm"] = g.norm().item()
    alpha_opt.step()
    stats["alpha"] = log_alpha.exp().item()
    return {"log_alpha": log_alpha, "policy": policy, "stats": stats}
