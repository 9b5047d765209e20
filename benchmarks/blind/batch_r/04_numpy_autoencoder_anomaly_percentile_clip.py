"""Autoencoder for anomaly detection trained on "mostly normal" data: to ignore outliers the
per-sample reconstruction errors are clipped at the 95th percentile with np.percentile/np.clip,
then turned back into a tensor. The loss backpropagates, but encoder and decoder get no grad.
Thread: no SO/SE thread located; reconstructed from a common pattern.
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.encoder[0].weight"
EXPECT = "grad_none"


class AE(nn.Module):
    def __init__(self, d=10, z=3):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(d, 6), nn.Tanh(), nn.Linear(6, z))
        self.decoder = nn.Sequential(nn.Linear(z, 6), nn.Tanh(), nn.Linear(6, d))

    def forward(self, x):
        return self.decoder(self.encoder(x))


def robust_reconstruction_loss(recon, x, q=95):
    err = ((recon - x) ** 2).mean(dim=1)
    err_np = err.detach().numpy()  # <-- CUT
    err_np = np.clip(err_np, None, np.percentile(err_np, q))
    return torch.from_numpy(err_np).mean().requires_grad_()


class Trainer:
    def __init__(self, model):
        self.model = model
        self.opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        self.history = []

    def step(self, x):
        loss = robust_reconstruction_loss(self.model(x), x)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.history.append(loss.item())
        return loss


def run():
    torch.manual_seed(0)
    x = torch.randn(32, 10)
    x[:2] += 6.0  # a couple of anomalies
    model = AE()
    trainer = Trainer(model)
    loss = trainer.step(x)
    return {"model": model, "trainer": trainer, "loss": loss}
