"""Code ported from TensorFlow passes keep_prob=1.0 as the dropout probability:
F.dropout(h, p=1.0, training=True) drops every unit. The output is all zeros,
and the layers before it get an all-zero gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "zero_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.fc1.weight"
EXPECT = "grad_zero"


class Net(nn.Module):
    def __init__(self, keep_prob=1.0):
        super().__init__()
        self.keep_prob = keep_prob
        self.fc1 = nn.Linear(5, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        h = F.dropout(h, p=self.keep_prob, training=self.training)  # <-- CUT
        return self.fc2(h)


def run():
    torch.manual_seed(0)
    model = Net().train()
    x, y = torch.randn(8, 5), torch.randint(0, 3, (8,))
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    return {"model": model, "loss": loss}
