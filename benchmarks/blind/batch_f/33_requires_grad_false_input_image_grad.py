"""Reproduces uber-research/UPSNet#24 ("Gradient w.r.t input is NoneType"): to observe the
gradient w.r.t. the input image, the user prints `data['data'].grad` after `loss.backward()`
in the end-to-end training loop. The batch tensor is built by the loader without
requires_grad, so autograd never computes a gradient for it: data['data'].grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "requires_grad_false"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "data['data']"
EXPECT = "grad_none"


class PanopticLite(nn.Module):
    def __init__(self, n_sem=4, n_inst=3):
        super().__init__()
        self.fpn = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU())
        self.sem_head = nn.Conv2d(8, n_sem, 1)
        self.mask_head = nn.Conv2d(8, n_inst, 1)

    def forward(self, data, label):
        feat = self.fpn(data["data"])
        sem_loss = F.cross_entropy(self.sem_head(feat), label["seg_gt"])
        mask_loss = F.binary_cross_entropy_with_logits(self.mask_head(feat), label["mask_gt"])
        return {"fcn_loss": sem_loss, "mask_loss": mask_loss}


def collate(images, seg, masks):
    data = {"data": torch.stack(images)}  # <-- CUT
    label = {"seg_gt": torch.stack(seg), "mask_gt": torch.stack(masks)}
    return data, label


def run():
    torch.manual_seed(0)
    model = PanopticLite()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
    images = [torch.randn(3, 8, 8) for _ in range(2)]
    seg = [torch.randint(0, 4, (8, 8)) for _ in range(2)]
    masks = [(torch.rand(3, 8, 8) > 0.5).float() for _ in range(2)]
    data, label = collate(images, seg, masks)
    output = model(data, label)
    loss = output["fcn_loss"] + output["mask_loss"]
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "data": data, "loss": loss}
