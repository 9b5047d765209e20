"""Gradient accumulation over 4 micro-batches, but optimizer.zero_grad() sits right
after loss.backward() inside the loop. The gradients are wiped before
optimizer.step(); model.weight.grad is None when the step runs.
"""
import torch
import torch.nn as nn

CAUSE = "set_to_none_timing"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.weight"
EXPECT = "grad_none"


def run():
    torch.manual_seed(0)
    model = nn.Linear(5, 3)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    accum = 4
    data = [(torch.randn(4, 5), torch.randint(0, 3, (4,))) for _ in range(4)]
    for i, (xb, yb) in enumerate(data):
        loss = nn.functional.cross_entropy(model(xb), yb) / accum
        loss.backward()
        optimizer.zero_grad()  # <-- CUT
        if (i + 1) % accum == 0:
            grad = model.weight.grad
            optimizer.step()
    return {"model": model, "loss": loss, "grad": grad}
