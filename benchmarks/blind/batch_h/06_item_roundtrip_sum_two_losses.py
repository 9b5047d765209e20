"""Multi-task net with a depth loss and a segmentation loss. Following the forum advice
"sum the losses and call backward once", the user sums them, but the depth term goes
through the logging dict first and is stored as loss_depth.item(). The sum backpropagates
through the segmentation term only; the depth head gets no gradient.
Thread: discuss.pytorch.org/t/what-does-the-backward-function-do/9944
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.depth_head.weight"
EXPECT = "grad_none"


class MultiTaskNet(nn.Module):
    def __init__(self, n_cls=4):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        self.seg_head = nn.Conv2d(8, n_cls, 1)
        self.depth_head = nn.Conv2d(8, 1, 1)

    def forward(self, x):
        f = self.backbone(x)
        return self.seg_head(f), self.depth_head(f)


class Trainer:
    def __init__(self, model, cfg):
        self.model, self.cfg = model, cfg
        self.opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"])
        self.logs = {}

    def compute_losses(self, img, seg, depth):
        seg_logits, depth_pred = self.model(img)
        loss_seg = F.cross_entropy(seg_logits, seg)
        loss_depth = F.l1_loss(depth_pred, depth)
        self.logs["seg"] = loss_seg.item()
        self.logs["depth"] = loss_depth.item()  # <-- CUT
        return loss_seg, self.logs["depth"]

    def step(self, img, seg, depth):
        loss_seg, loss_depth = self.compute_losses(img, seg, depth)
        loss = loss_seg + self.cfg["w_depth"] * loss_depth
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss


def run():
    torch.manual_seed(0)
    model = MultiTaskNet()
    trainer = Trainer(model, {"lr": 0.01, "w_depth": 0.5})
    img = torch.rand(2, 3, 8, 8)
    seg = torch.randint(0, 4, (2, 8, 8))
    depth = torch.rand(2, 1, 8, 8)
    loss = trainer.step(img, seg, depth)
    return {"model": model, "trainer": trainer, "loss": loss}
