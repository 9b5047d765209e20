"""Optional auxiliary head behind a flag (facebookresearch/detectron2#1120): the model
adds `loss += output(x)` only `if flag:`. With the flag off the auxiliary head takes
no part in the loss, DDP complains about unused parameters, and without DDP the
head's weights simply get no gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.aux_output.weight"
EXPECT = "grad_none"


class Detector(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.ReLU(),
                                      nn.Conv2d(8, 16, 3, 2, 1), nn.ReLU())
        self.cls_head = nn.Conv2d(16, 4, 1)
        self.aux_output = nn.Conv2d(16, 1, 1)
        self.flag = cfg.get("AUX_LOSS", False)

    def aux_loss(self, feats, targets):
        if not self.flag:
            return None  # <-- CUT
        return F.binary_cross_entropy_with_logits(self.aux_output(feats).mean((2, 3)), targets["obj"])

    def forward(self, images, targets):
        feats = self.backbone(images)
        logits = self.cls_head(feats).mean((2, 3))
        losses = {"loss_cls": F.cross_entropy(logits, targets["cls"])}
        aux = self.aux_loss(feats, targets)
        if aux is not None:
            losses["loss_aux"] = aux
        return losses


def run():
    torch.manual_seed(0)
    cfg = {"AUX_LOSS": False, "BASE_LR": 0.01}
    model = Detector(cfg)
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg["BASE_LR"], momentum=0.9)
    images = torch.randn(2, 3, 16, 16)
    targets = {"cls": torch.tensor([1, 3]), "obj": torch.ones(2, 1)}
    loss_dict = model(images, targets)
    losses = sum(loss_dict.values())
    optimizer.zero_grad()
    losses.backward()
    optimizer.step()
    return {"model": model, "optimizer": optimizer, "loss_dict": loss_dict}
