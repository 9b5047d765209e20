"""Control. The setup the forum answer recommends: a new first layer is prepended, the
pretrained body is frozen with requires_grad = False on its parameters only, and the
optimizer is given just the first layer. Errors still backpropagate through the frozen
body, so the first layer gets a normal gradient.
Thread: discuss.pytorch.org/t/freezing-the-updates-without-freezing-the-gradients/7358
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.first.weight"
EXPECT = "grad_ok"


class PretrainedBody(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 4))

    def forward(self, x):
        return self.layers(x)


class WithInputLayer(nn.Module):
    def __init__(self, body, in_dim):
        super().__init__()
        for param in body.parameters():
            param.requires_grad = False
        self.body = body
        self.first = nn.Linear(in_dim, 16)

    def forward(self, x):
        return self.body(torch.relu(self.first(x)))


def run():
    torch.manual_seed(0)
    model = WithInputLayer(PretrainedBody(), in_dim=10)
    opt = torch.optim.SGD(model.first.parameters(), lr=0.01)
    x = torch.randn(8, 10)
    y = torch.randint(0, 4, (8,))
    with torch.no_grad():
        baseline = model(x).argmax(-1)
    loss = F.cross_entropy(model(x), y)  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    acc = (baseline == y).float().mean().item()
    return {"model": model, "loss": loss, "acc": acc}
