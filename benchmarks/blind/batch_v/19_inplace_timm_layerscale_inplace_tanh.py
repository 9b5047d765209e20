"""A custom gated block built from timm-style parts: LayerScale(inplace=True) (which does
`x.mul_(gamma)`) is applied to a tanh-gated branch. tanh saved its output for backward, the
in-place scale bumps its version, and backward raises "modified by an inplace operation".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.blocks[0].ls.gamma"
EXPECT = "backward_error"


class LayerScale(nn.Module):
    def __init__(self, dim, init_values=1e-5, inplace=False):
        super().__init__()
        self.inplace = inplace
        self.gamma = nn.Parameter(init_values * torch.ones(dim))

    def forward(self, x):
        return x.mul_(self.gamma) if self.inplace else x * self.gamma  # <-- CUT


class GatedBlock(nn.Module):
    def __init__(self, dim, ls_inplace):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, dim)
        self.ls = LayerScale(dim, init_values=0.1, inplace=ls_inplace)

    def forward(self, x):
        branch = torch.tanh(self.fc(self.norm(x)))
        return x + self.ls(branch)


class Net(nn.Module):
    def __init__(self, dim=16, depth=2, ls_inplace=True):
        super().__init__()
        self.stem = nn.Linear(8, dim)
        self.blocks = nn.Sequential(*[GatedBlock(dim, ls_inplace) for _ in range(depth)])
        self.head = nn.Linear(dim, 3)

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)))


def run():
    torch.manual_seed(0)
    cfg = {"depth": 2, "ls_inplace": True}
    model = Net(depth=cfg["depth"], ls_inplace=cfg["ls_inplace"])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x, y = torch.randn(8, 8), torch.randint(0, 3, (8,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
