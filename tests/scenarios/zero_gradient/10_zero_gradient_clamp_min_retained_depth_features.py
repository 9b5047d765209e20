"""Probing an intermediate activation: h.retain_grad() is called on the encoder
features (stored in an acts dict) of a depth regressor whose output is floored
with clamp(min=0.1) metres. The head bias was initialised to -3.0 (a log-depth
prior from another model), so every prediction sits under the floor and
acts['h'].grad is all zeros.
"""
import torch
import torch.nn as nn

CAUSE = "zero_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "acts['h']"
EXPECT = "grad_zero"


def run():
    torch.manual_seed(0)
    enc = nn.Sequential(nn.Linear(4, 8), nn.Tanh())
    head = nn.Linear(8, 1)
    nn.init.constant_(head.bias, -3.0)
    x = torch.rand(16, 4)
    target = torch.rand(16, 1) * 5 + 0.5
    acts = {}
    h = enc(x)
    h.retain_grad()
    acts["h"] = h
    pred = head(h)
    depth = torch.clamp(pred, min=0.1)  # <-- CUT
    loss = (depth.log() - target.log()).abs().mean()
    loss.backward()
    return {"enc": enc, "head": head, "acts": acts, "loss": loss}
