"""pytorch/pytorch#58511 setting (model with two linear branches a and b, loss built from
out[0] only): the model computes self.b(x) as a "shadow" branch for a later distillation
term, but the call result is never used, so b's weight has no gradient at all:
model.b.weight.grad is None (a trains normally)."""
import torch
import torch.nn as nn

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.b.weight"
EXPECT = "grad_none"


class MyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 1, bias=False)
        self.b = nn.Linear(4, 1, bias=False)
        self.shadow = None

    def forward(self, x):
        a = self.a(x)
        self.b(x)  # <-- CUT
        return a, self.shadow


def run():
    torch.manual_seed(0)
    model = MyModel()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    inp = torch.ones(3, 4)
    opt.zero_grad()
    out = model(inp)
    loss = out[0].sum()
    if out[1] is not None:
        loss = loss + (out[1] - out[0].detach()).pow(2).mean()
    loss.backward()
    opt.step()
    grads = {n: p.grad for n, p in model.named_parameters()}
    return {"model": model, "grads": grads}
