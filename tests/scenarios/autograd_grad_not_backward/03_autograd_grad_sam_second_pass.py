"""Hand-written SAM (sharpness-aware minimization). The first pass uses
loss.backward() and zero_grad() as in the paper; the second pass, written later,
uses torch.autograd.grad "to avoid touching .grad" and never writes the
result back. base_opt.step() then sees p.grad None and skips every parameter.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "autograd_grad_not_backward"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[0].weight"
EXPECT = "grad_none"


class SAM:
    def __init__(self, params, rho=0.05, lr=0.1):
        self.params = list(params)
        self.rho = rho
        self.base_opt = torch.optim.SGD(self.params, lr=lr)
        self.eps = []

    @torch.no_grad()
    def ascend(self):
        norm = torch.norm(torch.stack([p.grad.norm() for p in self.params]))
        self.eps = [self.rho * p.grad / (norm + 1e-12) for p in self.params]
        for p, e in zip(self.params, self.eps):
            p.add_(e)
        self.base_opt.zero_grad()

    def descend(self, loss):
        grads = torch.autograd.grad(loss, self.params)  # <-- CUT
        with torch.no_grad():
            for p, e in zip(self.params, self.eps):
                p.sub_(e)
        self.base_opt.step()
        return grads


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    sam = SAM(model.parameters())
    x = torch.randn(12, 8)
    y = torch.randint(0, 3, (12,))
    F.cross_entropy(model(x), y).backward()
    sam.ascend()
    loss = F.cross_entropy(model(x), y)
    sam.descend(loss)
    return {"model": model, "sam": sam, "loss": loss}
