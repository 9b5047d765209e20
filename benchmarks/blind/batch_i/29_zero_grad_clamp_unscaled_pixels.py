"""Image-to-intensity regressor whose output is clamped to [0, 1] because the
targets are normalised, while the data loader forgot to divide the input pixels
by 255. Every pre-clamp output lands far outside [0, 1], clamp passes no gradient,
and the output layer's grad is all zeros: model.out.weight.grad is exactly zero.
Thread: SO, clamped output never learns (pattern; thread not located).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "zero_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.out.weight"
EXPECT = "grad_zero"

CFG = {"normalize": False, "batch": 16}


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(64, 32)
        self.out = nn.Linear(32, 1)

    def forward(self, img):
        h = F.relu(self.hidden(img.flatten(1)))
        return torch.clamp(self.out(h), 0.0, 1.0)  # <-- CUT


def load_batch(cfg):
    pixels = torch.randint(0, 256, (cfg["batch"], 1, 8, 8)).float()
    if cfg["normalize"]:
        pixels = pixels / 255.0
    target = pixels.mean((1, 2, 3)).unsqueeze(1) / 255.0
    return pixels, target


def run():
    torch.manual_seed(0)
    model = Regressor()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x, y = load_batch(CFG)
    pred = model(x)
    loss = F.mse_loss(pred, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss, "pred": pred}
