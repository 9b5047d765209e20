"""Deep SVDD-style anomaly detector: the hypersphere centre is computed once under
inference_mode (fine), but training also calls the cached `embed()` helper that runs under
inference_mode and `.clone()`s the result. Only the soft-boundary radius trains.
Thread: no SO/SE thread located; reconstructed from a common pattern.
"""
import torch
import torch.nn as nn

CAUSE = "inference_mode"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.encoder[0].weight"
EXPECT = "grad_none"


class SVDD(nn.Module):
    def __init__(self, d=8, z=4):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(d, 16), nn.LeakyReLU(), nn.Linear(16, z, bias=False))
        self.radius = nn.Parameter(torch.tensor(0.5))
        self.register_buffer("center", torch.zeros(z))

    def embed(self, x):
        with torch.inference_mode():
            z = self.encoder(x)  # <-- CUT
        return z.clone()

    def init_center(self, x):
        with torch.inference_mode():
            self.center.copy_(self.encoder(x).mean(0))

    def soft_boundary_loss(self, x, nu=0.1):
        dist = ((self.embed(x) - self.center) ** 2).sum(1)
        r2 = self.radius ** 2
        return r2 + (1 / nu) * torch.relu(dist - r2).mean()


def run():
    torch.manual_seed(0)
    x = torch.randn(20, 8)
    model = SVDD()
    model.init_center(x)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss = model.soft_boundary_loss(x)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
