"""The auxiliary depth loss is added with loss = seg_loss + 0.5 * depth_loss.item()
("to keep its scale readable in the log"). The depth head only reaches the loss
through the Python float, so its weight.grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.depth.weight"
EXPECT = "grad_none"


class MultiTask(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Conv2d(3, 8, 3, padding=1)
        self.seg = nn.Conv2d(8, 4, 1)
        self.depth = nn.Conv2d(8, 1, 1)

    def forward(self, x):
        h = F.relu(self.enc(x))
        return self.seg(h), self.depth(h)


def run():
    torch.manual_seed(0)
    model = MultiTask()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(2, 3, 6, 6)
    seg_t = torch.randint(0, 4, (2, 6, 6))
    depth_t = torch.rand(2, 1, 6, 6)
    seg, depth = model(x)
    seg_loss = F.cross_entropy(seg, seg_t)
    depth_loss = F.l1_loss(depth, depth_t)
    loss = seg_loss + 0.5 * depth_loss.item()  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
