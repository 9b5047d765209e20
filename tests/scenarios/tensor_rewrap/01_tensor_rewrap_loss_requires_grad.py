"""After seeing "element 0 of tensors does not require grad", the user wraps the
loss again with torch.tensor(loss, requires_grad=True). backward() now runs,
but it starts from a brand-new leaf: the model's weights get no .grad at all.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "tensor_rewrap"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.fc1.weight"
EXPECT = "grad_none"


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 2)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def run():
    torch.manual_seed(0)
    model = MLP()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(10, 8)
    y = torch.randint(0, 2, (10,))
    raw_loss = F.cross_entropy(model(x), y)
    loss = torch.tensor(raw_loss, requires_grad=True)  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
