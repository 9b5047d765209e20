"""Control: two pretrained networks are kept constant on purpose (requires_grad_(False),
eval mode) and the combined loss L = L1 + L2 is differentiated with respect to the input
X, which reaches it along two routes. The frozen weights get no gradient by design, and
X.grad is the sum of both routes' gradients.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "X"
EXPECT = "grad_ok"


class Net1(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 4))

    def forward(self, x):
        return self.net(x)


class Net2(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(10, 8), nn.Tanh(), nn.Linear(8, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


def run():
    torch.manual_seed(0)
    model1, model2 = Net1().eval(), Net2().eval()
    for m in (model1, model2):
        m.requires_grad_(False)
    X = torch.randn(5, 10, requires_grad=True)
    y1 = torch.randint(0, 4, (5,))
    y2 = torch.randn(5)
    loss1 = F.cross_entropy(model1(X), y1)
    loss2 = F.mse_loss(model2(X), y2)
    loss = loss1 + loss2  # <-- CUT
    loss.backward()
    with torch.no_grad():
        X_step = X - 0.1 * X.grad.sign()
    return {"X": X, "X_step": X_step, "model1": model1, "model2": model2, "loss": loss}
