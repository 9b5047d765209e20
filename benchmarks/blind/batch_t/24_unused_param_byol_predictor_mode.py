"""SSL wrapper supporting SimSiam/BYOL: the predictor is applied only when mode == 'byol', but the
config says 'BYOL', so forward returns the projection and the predictor gets no grad. EMA target is fine.
Thread: predictor weights not updated in BYOL implementation (reconstructed)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CUT_LINE_MARK = "# <-- CUT"
CAUSE = "unused_parameter"
QUERY = 'net.predictor[0].weight'
EXPECT = "grad_none"

class Config:
    mode = "BYOL"
    ema = 0.99

class Online(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 16))
        self.predictor = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 16))
        self.mode = cfg.mode
    def forward(self, x):
        z = self.enc(x)
        if self.mode != "byol":
            return z  # <-- CUT
        return self.predictor(z)

def run():
    torch.manual_seed(0)
    cfg = Config()
    net = Online(cfg)
    target = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 16))
    target.load_state_dict(net.enc.state_dict())
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    x = torch.randn(8, 10)
    p = net(x + 0.1 * torch.randn_like(x))
    with torch.no_grad():
        t = target(x + 0.1 * torch.randn_like(x))
    loss = -F.cosine_similarity(p, t, dim=-1).mean()
    opt.zero_grad(); loss.backward(); opt.step()
    with torch.no_grad():
        for pt, po in zip(target.parameters(), net.enc.parameters()):
            pt.copy_(cfg.ema * pt + (1 - cfg.ema) * po)
    return {"net": net}
