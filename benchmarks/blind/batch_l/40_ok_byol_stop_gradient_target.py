"""Control: BYOL self-supervised step. The target network is filled by load_state_dict,
frozen, and moved by an EMA of the online weights through .data; the target projection
is computed under no_grad and also .detach()ed (stop-gradient). The loss between the
online predictor output and the target trains the online encoder and the predictor.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "byol.online.encoder[0].weight"
EXPECT = "grad_ok"


class Branch(nn.Module):
    def __init__(self, d_in=24, d=16, p=8):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(d_in, 32), nn.ReLU(), nn.Linear(32, d))
        self.projector = nn.Sequential(nn.Linear(d, 16), nn.ReLU(), nn.Linear(16, p))

    def forward(self, x):
        return self.projector(self.encoder(x))


class BYOL(nn.Module):
    def __init__(self, tau=0.996):
        super().__init__()
        self.online, self.target = Branch(), Branch()
        self.target.load_state_dict(self.online.state_dict())
        self.target.requires_grad_(False)
        self.predictor = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 8))
        self.tau = tau

    @torch.no_grad()
    def update_target(self):
        for po, pt in zip(self.online.parameters(), self.target.parameters()):
            pt.data.mul_(self.tau).add_((1 - self.tau) * po.data)

    def loss(self, v1, v2):
        p1, p2 = self.predictor(self.online(v1)), self.predictor(self.online(v2))
        with torch.no_grad():
            z1, z2 = self.target(v1), self.target(v2)
        l = 2 - 2 * F.cosine_similarity(p1, z2.detach(), dim=-1)
        l = l + 2 - 2 * F.cosine_similarity(p2, z1.detach(), dim=-1)
        return l.mean()


def run():
    torch.manual_seed(0)
    byol = BYOL()
    params = list(byol.online.parameters()) + list(byol.predictor.parameters())
    opt = torch.optim.Adam(params, lr=3e-4)
    x = torch.randn(16, 24)
    v1, v2 = x + 0.1 * torch.randn_like(x), x * (1 + 0.1 * torch.randn_like(x))
    loss = byol.loss(v1, v2)  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    byol.update_target()
    history = {"loss": loss.item()}
    return {"byol": byol, "loss": loss, "history": history}
