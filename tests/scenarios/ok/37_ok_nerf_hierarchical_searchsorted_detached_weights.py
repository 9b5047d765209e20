"""Control: NeRF hierarchical sampling. Coarse weights are detached before
building the CDF, fine sample positions come from torch.searchsorted, and
both coarse and fine networks are trained by their own rendering losses.
The fine network's weight gradient is nonzero.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "fine.net[0].weight"
EXPECT = "grad_ok"


class Field(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, 32), nn.ReLU(), nn.Linear(32, 4))

    def forward(self, pts):
        out = self.net(pts)
        return torch.sigmoid(out[..., :3]), F.softplus(out[..., 3])


def composite(field, origins, dirs, t):
    pts = origins[:, None, :] + dirs[:, None, :] * t[..., None]
    rgb, sigma = field(pts)
    delta = torch.cat([t[:, 1:] - t[:, :-1], torch.full_like(t[:, :1], 1e3)], -1)
    alpha = 1.0 - torch.exp(-sigma * delta)
    trans = torch.cumprod(torch.cat([torch.ones_like(alpha[:, :1]), 1.0 - alpha + 1e-10], -1), -1)[:, :-1]
    w = alpha * trans
    return (w[..., None] * rgb).sum(1), w


def sample_pdf(bins, weights, n):
    pdf = (weights + 1e-5) / (weights + 1e-5).sum(-1, keepdim=True)
    cdf = torch.cat([torch.zeros_like(pdf[:, :1]), pdf.cumsum(-1)], -1)
    u = torch.rand(cdf.shape[0], n)
    idx = torch.searchsorted(cdf, u, right=True).clamp(1, bins.shape[-1] - 1)
    lo, hi = bins.gather(1, idx - 1), bins.gather(1, idx)
    return lo + (hi - lo) * torch.rand_like(u)


def run():
    torch.manual_seed(0)
    coarse, fine = Field(), Field()
    opt = torch.optim.Adam(list(coarse.parameters()) + list(fine.parameters()), lr=5e-4)
    origins = torch.zeros(6, 3)
    dirs = F.normalize(torch.randn(6, 3), dim=-1)
    target = torch.rand(6, 3)
    t_c = torch.linspace(0.1, 2.0, 9).expand(6, 9)
    rgb_c, w_c = composite(coarse, origins, dirs, t_c)
    t_f = sample_pdf(torch.linspace(0.1, 2.0, 10).expand(6, 10), w_c.detach(), 12)
    t_f, _ = torch.sort(torch.cat([t_c, t_f], -1), -1)
    rgb_f, _ = composite(fine, origins, dirs, t_f)
    loss = F.mse_loss(rgb_c, target) + F.mse_loss(rgb_f, target)  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"coarse": coarse, "fine": fine, "loss": loss}
