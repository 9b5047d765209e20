"""pytorch/pytorch#7002 ("torch.clamp kills gradients at the border"; beyond the border it
is zero by design): a depth head outputs clamp(pred, min_depth, max_depth) and its bias
is initialized from a dataset mean given in millimetres (2500) while the clamp is in
metres. Every prediction is saturated at max_depth, so the head's gradient is exactly
zero: model.depth.weight.grad is all zeros."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "zero_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.depth.weight"
EXPECT = "grad_zero"


class DepthNet(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.enc = nn.Conv2d(3, 8, 3, padding=1)
        self.depth = nn.Conv2d(8, 1, 1)
        nn.init.constant_(self.depth.bias, cfg["mean_depth"])

    def forward(self, x):
        pred = self.depth(torch.relu(self.enc(x)))
        return pred.clamp(self.cfg["min_depth"], self.cfg["max_depth"])  # <-- CUT


def run():
    torch.manual_seed(0)
    cfg = {"min_depth": 0.1, "max_depth": 10.0, "mean_depth": 2500.0}
    model = DepthNet(cfg)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    img = torch.rand(2, 3, 8, 8)
    gt = torch.rand(2, 1, 8, 8) * 9 + 0.5
    loss = F.l1_loss(model(img), gt)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
