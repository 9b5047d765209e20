"""An image model's input gate uses `F.hardsigmoid`. The dataset yields raw 0-255
pixel values (the /255 normalisation was dropped), so every gate pre-activation
is far above +3, hardsigmoid is flat there, and the gate conv gets an all-zero grad.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "zero_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.gate.weight"
EXPECT = "grad_zero"


class GatedNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = nn.Conv2d(3, 8, 3, padding=1)
        self.feat = nn.Conv2d(3, 8, 3, padding=1)
        self.head = nn.Linear(8, 10)

    def forward(self, x):
        g = F.hardsigmoid(self.gate(x))  # <-- CUT
        h = self.feat(x / 255.0) * g
        return self.head(h.mean((2, 3)))


def run():
    torch.manual_seed(0)
    model = GatedNet()
    with torch.no_grad():
        model.gate.weight.abs_()
        model.gate.bias.fill_(1.0)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randint(1, 256, (4, 3, 8, 8)).float()
    y = torch.randint(0, 10, (4,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
