"""Control: a worst-case (minimax) objective picks the larger of two task losses
with Python's max(), which compares 0-d tensors with bool() but returns one of
the tensors themselves; gradients flow into the chosen task's head and the trunk.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "trunk.weight"
EXPECT = "grad_ok"


def run():
    torch.manual_seed(0)
    trunk = nn.Linear(5, 8)
    head_a, head_b = nn.Linear(8, 2), nn.Linear(8, 1)
    x = torch.randn(9, 5)
    h = torch.relu(trunk(x))
    loss_a = F.cross_entropy(head_a(h), torch.randint(0, 2, (9,)))
    loss_b = F.mse_loss(head_b(h), torch.randn(9, 1))
    loss = max(loss_a, loss_b)  # <-- CUT
    loss.backward()
    return {"trunk": trunk, "loss": loss}
