"""CapsNet with dynamic routing and a reconstruction decoder. In forward the user
calls `self.decoder(masked)` without assigning the result and returns the
capsule lengths plus a stale `recon` placeholder of zeros, so the margin loss
trains the capsules and the decoder never receives a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.decoder[0].weight"
EXPECT = "grad_none"


def squash(s, dim=-1, eps=1e-8):
    n2 = (s ** 2).sum(dim, keepdim=True)
    return n2 / (1 + n2) * s / torch.sqrt(n2 + eps)


class DigitCaps(nn.Module):
    def __init__(self, n_in=4, d_in=4, n_out=5, d_out=8, iters=3):
        super().__init__()
        self.W = nn.Parameter(0.1 * torch.randn(1, n_in, n_out, d_out, d_in))
        self.iters = iters

    def forward(self, u):
        u_hat = (self.W @ u[:, :, None, :, None]).squeeze(-1)
        b = torch.zeros(u_hat.shape[:3])
        for i in range(self.iters):
            c = b.softmax(dim=2)
            v = squash((c.unsqueeze(-1) * u_hat).sum(1))
            if i < self.iters - 1:
                b = b + (u_hat * v.unsqueeze(1)).sum(-1)
        return v


class CapsNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 16, 3, stride=2)
        self.primary = nn.Conv2d(16, 16, 3, stride=2)
        self.digits = DigitCaps()
        self.decoder = nn.Sequential(nn.Linear(5 * 8, 32), nn.ReLU(), nn.Linear(32, 64), nn.Sigmoid())

    def forward(self, x, y):
        h = F.relu(self.conv(x))
        u = squash(self.primary(h).view(x.size(0), 4, -1).transpose(1, 2))
        v = self.digits(u)
        lengths = v.norm(dim=-1)
        masked = (v * F.one_hot(y, 5).unsqueeze(-1)).flatten(1)
        recon = torch.zeros(x.size(0), 64)
        self.decoder(masked)  # <-- CUT
        return lengths, recon


def margin_loss(lengths, y, m_pos=0.9, m_neg=0.1, lam=0.5):
    t = F.one_hot(y, lengths.size(1)).float()
    return (t * F.relu(m_pos - lengths) ** 2 + lam * (1 - t) * F.relu(lengths - m_neg) ** 2).sum(1).mean()


def run():
    torch.manual_seed(0)
    model = CapsNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.rand(4, 1, 8, 8)
    y = torch.randint(0, 5, (4,))
    lengths, recon = model(x, y)
    loss = margin_loss(lengths, y) + 0.0005 * F.mse_loss(recon, x.flatten(1), reduction="sum")
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
