"""Universal adversarial perturbation trained with Adam: the perturbation is
created with torch.zeros_like(image) and handed to the optimizer, but never
marked requires_grad. The classifier was not frozen, so backward runs and fills
the model's grads, while delta.grad stays None and the attack never moves.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "requires_grad_false"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "delta"
EXPECT = "grad_none"


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        return self.fc(F.relu(self.conv(x)).mean((2, 3)))


def run():
    torch.manual_seed(0)
    model = Net().eval()
    images = torch.rand(8, 3, 8, 8)
    labels = torch.randint(0, 10, (8,))
    eps = 10 / 255
    delta = torch.zeros_like(images[:1])  # <-- CUT
    opt = torch.optim.Adam([delta], lr=1e-2)
    adv = (images + delta).clamp(0, 1)
    loss = -F.cross_entropy(model(adv), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        delta.clamp_(-eps, eps)
    return {"delta": delta, "model": model, "loss": loss}
