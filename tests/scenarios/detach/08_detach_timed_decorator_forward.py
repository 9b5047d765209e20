"""A home-made `@timed` stats decorator wraps the encoder's forward. To avoid
"holding on to the graph" in its stats buffer the author returned the detached
output instead of only storing it detached, so the encoder is cut from the loss.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.encoder.fc.weight"
EXPECT = "grad_none"

STATS = {}


def timed(fn):
    def wrapper(self, *args, **kwargs):
        out = fn(self, *args, **kwargs)
        STATS.setdefault(type(self).__name__, []).append(out.norm().item())
        out = out.detach()  # <-- CUT
        return out
    wrapper.__name__ = fn.__name__
    wrapper.__wrapped__ = fn
    return wrapper


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(12, 24)

    @timed
    def forward(self, x):
        return torch.relu(self.fc(x))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.head = nn.Linear(24, 3)

    def forward(self, x):
        return self.head(self.encoder(x))


def run():
    torch.manual_seed(0)
    model = Model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(16, 12), torch.randint(0, 3, (16,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
