"""Model copied from a forum demo that runs the same blocks twice in forward: once under
torch.no_grad() (meant only to print requires_grad) and once through checkpoint. The user
deleted the checkpoint loop to save time and returned the no_grad branch, so the blocks
never get gradients; the input projection still trains through the skip connection.
Thread: discuss.pytorch.org/t/about-the-the-implementation-of-activation-checkpointing/167177
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.blocks[0].weight"
EXPECT = "grad_none"


class Model(nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.linear = nn.Linear(d, d)
        self.blocks = nn.Sequential(nn.Linear(d, d), nn.Linear(d, d))
        self.head = nn.Linear(d, 2)
        self.debug = []

    def forward(self, x):
        x = self.linear(x)
        x1 = x
        with torch.no_grad():
            for block in self.blocks:
                x1 = block(x1)  # <-- CUT
                self.debug.append(x1.requires_grad)
        return self.head(F.relu(x + x1))


def run():
    torch.manual_seed(0)
    model = Model()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x = torch.randn(4, 32)
    y = torch.tensor([0, 1, 1, 0])
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
