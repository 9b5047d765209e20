"""A hand-written 0-1 loss: each prediction is compared with the label through
.item() in an if/else, and the count is returned as
`torch.tensor(errors, requires_grad=True)` so backward runs. "Setting
requires_grad = True for the return value doesn't fix this": the classifier gets
no gradient (discuss.pytorch.org/t/built-in-0-1-loss-function/216747).
"""
import torch
import torch.nn as nn

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.fc2.weight"
EXPECT = "grad_none"


def zero_one_loss(output, target):
    errors = 0.0
    for out, t in zip(output, target):
        pred = 1.0 if out.item() > 0.5 else 0.0  # <-- CUT
        if pred != t.item():
            errors += 1.0
    return torch.tensor(errors / len(target), requires_grad=True)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 1)

    def forward(self, x):
        return torch.sigmoid(self.fc2(torch.relu(self.fc1(x)))).squeeze(-1)


def run():
    torch.manual_seed(0)
    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(16, 4)
    y = (x[:, 0] > 0).float()
    output = model(x)
    loss = zero_one_loss(output, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "loss": loss}
