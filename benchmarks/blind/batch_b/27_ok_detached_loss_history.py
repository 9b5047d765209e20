"""Control (mir-group/nequip#1, "Detach all losses that get saved"): every
loss term is kept for logging as loss.detach() in a history dict, and the epoch
summary uses .item() and numpy. The optimised total loss stays attached, so
model.energy_head.weight.grad is a normal nonzero gradient.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.energy_head.weight"
EXPECT = "grad_ok"


class PotentialModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(3, 16)
        self.energy_head = nn.Linear(16, 1)

    def forward(self, pos):
        h = torch.tanh(self.embed(pos))
        energy = self.energy_head(h).sum(dim=(1, 2))
        return energy


def train_step(model, optim, batch, history, coeffs):
    pos, e_ref, f_ref = batch
    pos = pos.clone().requires_grad_(True)
    energy = model(pos)
    forces = -torch.autograd.grad(energy.sum(), pos, create_graph=True)[0]
    terms = {"energy": F.mse_loss(energy, e_ref), "forces": F.mse_loss(forces, f_ref)}
    loss = sum(coeffs[k] * v for k, v in terms.items())  # <-- CUT
    optim.zero_grad()
    loss.backward()
    optim.step()
    for k, v in terms.items():
        history.setdefault(k, []).append(v.detach())
    return loss


def run():
    torch.manual_seed(0)
    model = PotentialModel()
    optim = torch.optim.Adam(model.parameters(), lr=1e-3)
    batch = (torch.randn(2, 5, 3), torch.randn(2), torch.randn(2, 5, 3))
    history = {}
    loss = train_step(model, optim, batch, history, {"energy": 1.0, "forces": 10.0})
    summary = {k: float(np.mean([t.item() for t in v])) for k, v in history.items()}
    return {"model": model, "loss": loss, "summary": summary}
