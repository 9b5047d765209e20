"""Hand-written gated linear unit: h = proj(x), a = h[..., :d], b = h[..., d:], and
out = a * sigmoid(b). For a logging variant the user then rescales the value half in place
with a.mul_(temp). a is a view of h and was saved by the product, so the in-place mul bumps
its version and backward raises "modified by an inplace operation".
Thread: discuss.pytorch.org/t/how-pytorch-treat-with-inplace-operation-in-backward/220839
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class GLUBlock(nn.Module):
    def __init__(self, d, temp=0.5):
        super().__init__()
        self.d = d
        self.proj = nn.Linear(d, 2 * d)
        self.temp = temp
        self.stats = {}

    def forward(self, x):
        h = self.proj(x)
        a, b = h[..., :self.d], h[..., self.d:]
        out = a * torch.sigmoid(b)
        a.mul_(self.temp)  # <-- CUT
        self.stats["value_mean"] = a.mean().item()
        return out


class Net(nn.Module):
    def __init__(self, d=8, n_cls=3):
        super().__init__()
        self.blocks = nn.Sequential(GLUBlock(d), GLUBlock(d))
        self.head = nn.Linear(d, n_cls)

    def forward(self, x):
        return self.head(self.blocks(x))


def run():
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(4, 8)
    y = torch.tensor([0, 1, 2, 1])
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
