"""A relative-position bias is computed once in __init__ from a learnable table
(self.bias = self.table @ self.proj) and reused by every forward. The second
training step backprops through the __init__ graph again and raises.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "backward_twice"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class BiasedAttn(nn.Module):
    def __init__(self, T=5, d=4):
        super().__init__()
        self.table = nn.Parameter(torch.randn(T, d))
        self.proj = nn.Parameter(torch.randn(d, T))
        self.q = nn.Linear(d, d)
        self.bias = self.table @ self.proj  # <-- CUT

    def forward(self, x):
        scores = self.q(x) @ x.transpose(1, 2) + self.bias
        return torch.softmax(scores, -1) @ x


def run():
    torch.manual_seed(0)
    model = BiasedAttn()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(2):
        x = torch.randn(2, 5, 4)
        loss = F.mse_loss(model(x), x)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return {"model": model, "loss": loss}
