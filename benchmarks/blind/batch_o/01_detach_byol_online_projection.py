"""BYOL trainer: the online projection was detached by copy-pasting the target
branch line. The predictor still trains and the EMA target is (correctly) built
under no_grad, but the online encoder never gets a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "learner.online_enc[0].weight"
EXPECT = "grad_none"


def mlp(i, h, o):
    return nn.Sequential(nn.Linear(i, h), nn.BatchNorm1d(h), nn.ReLU(), nn.Linear(h, o))


class BYOL(nn.Module):
    def __init__(self, dim=16, proj=8, tau=0.99):
        super().__init__()
        self.online_enc = nn.Sequential(nn.Linear(dim, 32), nn.ReLU())
        self.online_proj = mlp(32, 32, proj)
        self.predictor = mlp(proj, 32, proj)
        self.target_enc = nn.Sequential(nn.Linear(dim, 32), nn.ReLU())
        self.target_proj = mlp(32, 32, proj)
        self.target_enc.load_state_dict(self.online_enc.state_dict())
        self.target_proj.load_state_dict(self.online_proj.state_dict())
        for p in list(self.target_enc.parameters()) + list(self.target_proj.parameters()):
            p.requires_grad = False
        self.tau = tau

    @torch.no_grad()
    def update_target(self):
        for o, t in zip(self.online_enc.parameters(), self.target_enc.parameters()):
            t.data.mul_(self.tau).add_(o.data, alpha=1 - self.tau)
        for o, t in zip(self.online_proj.parameters(), self.target_proj.parameters()):
            t.data.mul_(self.tau).add_(o.data, alpha=1 - self.tau)

    def loss_fn(self, p, z):
        return (2 - 2 * F.cosine_similarity(p, z, dim=-1)).mean()

    def forward(self, v1, v2):
        z1 = self.online_proj(self.online_enc(v1)).detach()  # <-- CUT
        p1 = self.predictor(z1)
        with torch.no_grad():
            t2 = self.target_proj(self.target_enc(v2))
        return self.loss_fn(p1, t2)


def run():
    torch.manual_seed(0)
    learner = BYOL()
    opt = torch.optim.SGD([p for p in learner.parameters() if p.requires_grad], lr=0.05)
    x = torch.randn(16, 16)
    v1 = x + 0.1 * torch.randn_like(x)
    v2 = x * (1 + 0.1 * torch.randn_like(x))
    loss = learner(v1, v2)
    opt.zero_grad()
    loss.backward()
    opt.step()
    learner.update_target()
    return {"learner": learner, "loss": loss, "opt": opt}
