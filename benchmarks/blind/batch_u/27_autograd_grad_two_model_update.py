"""Two-model update from pytorch/pytorch#46373 (add `inputs=` to backward(); before it,
code had to pick grad() or backward()): the user computes modelA's gradients with
torch.autograd.grad(lossA, modelA.parameters()) to avoid touching modelB, then calls
optA.step(). autograd.grad returns the gradients instead of accumulating them, so
modelA.fc.weight.grad is None and optA.step() skips it (modelB trains via backward)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "autograd_grad_not_backward"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "modelA.fc.weight"
EXPECT = "grad_none"


class Model(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        return torch.tanh(self.fc(x))


def run():
    torch.manual_seed(0)
    modelA, modelB = Model(), Model()
    optA = torch.optim.SGD(modelA.parameters(), lr=0.1)
    optB = torch.optim.SGD(modelB.parameters(), lr=0.1)
    inp, label = torch.randn(4, 8), torch.randn(4, 8)
    outA = modelA(inp)
    outB = modelB(outA)
    lossA = F.mse_loss(outA, label) + F.mse_loss(outB, label)
    gradsA = torch.autograd.grad(lossA, list(modelA.parameters()), retain_graph=True)  # <-- CUT
    torch.nn.utils.clip_grad_norm_(modelA.parameters(), 1.0)
    optA.step()
    lossB = F.mse_loss(modelB(outA.detach()), label)
    lossB.backward()
    optB.step()
    return {"modelA": modelA, "modelB": modelB, "gradsA": gradsA}
