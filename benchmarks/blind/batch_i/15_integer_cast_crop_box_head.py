"""Two-stage model that predicts a crop window, casts the predicted corner to
.long() to slice the feature map, and classifies the crop. The backbone and the
classifier train through the slice; the box head only feeds the integer index:
model.box_head.weight.grad is None.
Thread: SO, .long() cast of predicted coordinates (pattern; thread not located).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "integer_cast"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.box_head.weight"
EXPECT = "grad_none"


class CropClassifier(nn.Module):
    def __init__(self, crop=4, n_cls=3):
        super().__init__()
        self.crop = crop
        self.backbone = nn.Conv2d(1, 4, 3, padding=1)
        self.box_head = nn.Linear(4, 2)
        self.cls = nn.Linear(4 * crop * crop, n_cls)

    def forward(self, img):
        fmap = torch.relu(self.backbone(img))
        H = fmap.size(-1)
        corner = torch.sigmoid(self.box_head(fmap.mean((2, 3)))) * (H - self.crop)
        corner = corner.long()  # <-- CUT
        crops = [fmap[b, :, corner[b, 0]:corner[b, 0] + self.crop, corner[b, 1]:corner[b, 1] + self.crop]
                 for b in range(img.size(0))]
        return self.cls(torch.stack(crops).flatten(1))


def run():
    torch.manual_seed(0)
    model = CropClassifier()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    img = torch.randn(3, 1, 12, 12)
    y = torch.tensor([0, 2, 1])
    loss = F.cross_entropy(model(img), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
