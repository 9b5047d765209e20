"""Quantisation-aware training: activations are fake-quantised by casting
x / scale to int8 and back, imitating the deployed kernel. The int8 cast has no
gradient, so the layer before the quantiser gets no grad (only the learnable
scale and the layers after it train).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "integer_cast"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.fc1.weight"
EXPECT = "grad_none"


class ActQuant(nn.Module):
    def __init__(self):
        super().__init__()
        self.log_scale = nn.Parameter(torch.tensor(-3.0))

    def forward(self, x):
        s = self.log_scale.exp()
        q = (x / s).clamp(-128, 127).to(torch.int8)  # <-- CUT
        return q.to(x.dtype) * s


class QATNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 32)
        self.aq = ActQuant()
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        return self.fc2(self.aq(F.relu(self.fc1(x))))


def run():
    torch.manual_seed(0)
    model = QATNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x = torch.randn(16, 10)
    y = torch.randint(0, 4, (16,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
