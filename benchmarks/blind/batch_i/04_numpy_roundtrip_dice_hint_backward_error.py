"""Segmentation trainer with a Dice loss written in numpy. The user followed the
error message's hint and wrote .detach().cpu().numpy(), then returned
torch.tensor(1 - dice). Nothing in the loss requires grad any more, so
loss.backward() raises "element 0 of tensors does not require grad".
Thread: SO 63582590 "Why do we call .detach() before calling .numpy() on a Pytorch Tensor?".
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class TinyUNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU())
        self.dec = nn.Conv2d(8, 1, 1)

    def forward(self, x):
        return self.dec(self.enc(x))


class DiceLoss:
    def __init__(self, smooth=1.0):
        self.smooth = smooth

    def __call__(self, logits, mask):
        prob = torch.sigmoid(logits).detach().cpu().numpy()  # <-- CUT
        m = mask.cpu().numpy()
        inter = (prob * m).sum()
        dice = (2 * inter + self.smooth) / (prob.sum() + m.sum() + self.smooth)
        return torch.tensor(1.0 - dice, dtype=torch.float32)


class SegTrainer:
    def __init__(self):
        self.model = TinyUNet()
        self.criterion = DiceLoss()
        self.opt = torch.optim.Adam(self.model.parameters(), lr=1e-3)

    def fit_batch(self, img, mask):
        self.opt.zero_grad()
        loss = self.criterion(self.model(img), mask)
        loss.backward()
        self.opt.step()
        return loss


def run():
    torch.manual_seed(0)
    trainer = SegTrainer()
    img = torch.randn(2, 1, 8, 8)
    mask = (torch.rand(2, 1, 8, 8) > 0.5).float()
    loss = trainer.fit_batch(img, mask)
    return {"trainer": trainer, "model": trainer.model, "loss": loss}
