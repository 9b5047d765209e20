"""Fine-tuning where a new first layer is prepended and the rest should only pass
gradients back to it (the forum question). The freeze loop runs over model.parameters()
after the new layer was attached, so it freezes the new layer too; nothing in the graph
requires grad and loss.backward() raises "element 0 of tensors does not require grad".
Thread: discuss.pytorch.org/t/freezing-the-updates-without-freezing-the-gradients/7358
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class PretrainedBody(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 4))

    def forward(self, x):
        return self.layers(x)


class WithInputAdapter(nn.Module):
    def __init__(self, body, in_dim):
        super().__init__()
        self.first = nn.Linear(in_dim, 16)
        self.body = body

    def forward(self, x):
        return self.body(torch.relu(self.first(x)))


def prepare(body, in_dim):
    model = WithInputAdapter(body, in_dim)
    for param in model.parameters():
        param.requires_grad = False  # <-- CUT
    return model


def run():
    torch.manual_seed(0)
    body = PretrainedBody()
    model = prepare(body, in_dim=10)
    opt = torch.optim.SGD(model.first.parameters(), lr=0.01)
    x = torch.randn(8, 10)
    y = torch.randint(0, 4, (8,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
