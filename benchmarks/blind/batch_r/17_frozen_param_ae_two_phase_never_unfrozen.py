"""Two-phase anomaly-detection autoencoder: phase 1 freezes the encoder to warm up a fresh
decoder, phase 2 is meant to fine-tune both. The unfreeze is only done when a config flag
"phase2_unfreeze" is set, and it is missing, so the encoder keeps .grad None in phase 2.
Thread: no SO/SE thread located; reconstructed from a common pattern.
"""
import torch
import torch.nn as nn

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.encoder[0].weight"
EXPECT = "grad_none"

CFG = {"phase1_steps": 2, "phase2_steps": 1, "lr": 1e-3}


class AE(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(12, 6), nn.ReLU(), nn.Linear(6, 3))
        self.decoder = nn.Sequential(nn.Linear(3, 6), nn.ReLU(), nn.Linear(6, 12))

    def forward(self, x):
        return self.decoder(self.encoder(x))


def train_steps(model, x, steps, lr):
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    for _ in range(steps):
        loss = ((model(x) - x) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss


def run():
    torch.manual_seed(0)
    x = torch.randn(16, 12)
    model = AE()
    model.encoder.requires_grad_(False)  # <-- CUT
    train_steps(model, x, CFG["phase1_steps"], CFG["lr"])
    if CFG.get("phase2_unfreeze", False):
        model.encoder.requires_grad_(True)
    loss = train_steps(model, x, CFG["phase2_steps"], CFG["lr"])
    return {"model": model, "loss": loss}
