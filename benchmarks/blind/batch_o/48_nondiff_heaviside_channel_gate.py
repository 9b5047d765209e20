"""Channel pruning with learnable gate scores binarised by torch.heaviside(scores,
0.5) so the forward really drops channels. heaviside has no derivative
(its grad_fn is NotImplemented), so loss.backward() raises "the derivative for
'heaviside' is not implemented".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class GatedConv(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, 3, padding=1)
        self.gate_scores = nn.Parameter(torch.linspace(-1.0, 1.0, c_out))

    def forward(self, x):
        gate = torch.heaviside(self.gate_scores, torch.tensor(0.5))  # <-- CUT
        return F.relu(self.conv(x)) * gate.view(1, -1, 1, 1)


class PrunableNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.block1 = GatedConv(3, 8)
        self.block2 = GatedConv(8, 8)
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        return self.fc(self.block2(self.block1(x)).mean((2, 3)))

    def sparsity_loss(self):
        return sum(torch.sigmoid(m.gate_scores).sum() for m in self.modules() if isinstance(m, GatedConv))


def run():
    torch.manual_seed(0)
    model = PrunableNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.rand(4, 3, 8, 8), torch.randint(0, 4, (4,))
    loss = F.cross_entropy(model(x), y) + 1e-3 * model.sparsity_loss()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
