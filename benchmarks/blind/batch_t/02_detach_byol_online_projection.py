"""BYOL: the online projection is detached before the predictor (stop-grad put on the wrong branch).
The target branch under no_grad and its EMA update are correct; the online encoder gets no grad.
Thread: BYOL loss decreases but encoder does not train (reconstructed from memory)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CUT_LINE_MARK = "# <-- CUT"
CAUSE = "detach"
QUERY = 'learner.online_enc[0].weight'
EXPECT = "grad_none"

def mlp(i, o):
    return nn.Sequential(nn.Linear(i, 32), nn.ReLU(), nn.Linear(32, o))

class BYOL(nn.Module):
    def __init__(self, m=0.99):
        super().__init__()
        self.online_enc, self.online_proj = mlp(10, 16), mlp(16, 8)
        self.predictor = mlp(8, 8)
        self.target_enc, self.target_proj = mlp(10, 16), mlp(16, 8)
        self.target_enc.load_state_dict(self.online_enc.state_dict())
        self.target_proj.load_state_dict(self.online_proj.state_dict())
        for p in list(self.target_enc.parameters()) + list(self.target_proj.parameters()):
            p.requires_grad = False
        self.m = m
    @torch.no_grad()
    def update_target(self):
        for o, t in zip(self.online_enc.parameters(), self.target_enc.parameters()):
            t.data = self.m * t.data + (1 - self.m) * o.data
    def loss_fn(self, v1, v2):
        z1 = self.online_proj(self.online_enc(v1)).detach()  # <-- CUT
        p1 = self.predictor(z1)
        with torch.no_grad():
            t2 = self.target_proj(self.target_enc(v2))
        return 2 - 2 * F.cosine_similarity(p1, t2, dim=-1).mean()

def run():
    torch.manual_seed(0)
    learner = BYOL()
    opt = torch.optim.SGD([p for p in learner.parameters() if p.requires_grad], lr=0.1)
    x = torch.randn(8, 10)
    v1, v2 = x + 0.1 * torch.randn_like(x), x + 0.1 * torch.randn_like(x)
    loss = learner.loss_fn(v1, v2) + learner.loss_fn(v2, v1)
    opt.zero_grad(); loss.backward(); opt.step()
    learner.update_target()
    return {"learner": learner}
