"""Sensor anomaly-detection autoencoder. The model's encode() is decorated with
@torch.no_grad() because it is used to export embeddings, and forward() reuses it. The
decoder still learns the reconstruction, but ae.encoder[0].weight.grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "ae.encoder[0].weight"
EXPECT = "grad_none"


class WindowAutoencoder(nn.Module):
    def __init__(self, window=32, n_ch=3, code=8):
        super().__init__()
        d = window * n_ch
        self.encoder = nn.Sequential(nn.Linear(d, 64), nn.ReLU(), nn.Linear(64, code))
        self.decoder = nn.Sequential(nn.Linear(code, 64), nn.ReLU(), nn.Linear(64, d))
        self.window, self.n_ch = window, n_ch

    @torch.no_grad()
    def encode(self, x):
        return self.encoder(x.flatten(1))  # <-- CUT

    def forward(self, x):
        z = self.encode(x)
        return self.decoder(z).view(-1, self.window, self.n_ch)

    def anomaly_score(self, x):
        return (self(x) - x).pow(2).mean((1, 2))


def make_windows(n, window=32):
    t = torch.linspace(0, 6.28, window)
    base = torch.stack([torch.sin(t), torch.cos(t), torch.sin(2 * t)], -1)
    return base.unsqueeze(0) + 0.1 * torch.randn(n, window, 3)


def run():
    torch.manual_seed(0)
    ae = WindowAutoencoder()
    opt = torch.optim.Adam(ae.parameters(), lr=1e-3)
    x = make_windows(16)
    loss = F.mse_loss(ae(x), x)
    opt.zero_grad()
    loss.backward()
    opt.step()
    scores = ae.anomaly_score(x).detach()
    return {"ae": ae, "loss": loss, "scores": scores}
