"""An image-enhancement model converts its output to uint8 in forward() (a
"postprocess for saving" step) and the L1 loss is computed on the converted
image divided by 255. The cast drops history and backward() raises.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "integer_cast"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class Enhancer(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 3, 3, padding=1))

    def forward(self, img):
        out = torch.sigmoid(self.net(img))
        return (out * 255).to(torch.uint8)  # <-- CUT


def run():
    torch.manual_seed(0)
    model = Enhancer()
    img, target = torch.rand(2, 3, 6, 6), torch.rand(2, 3, 6, 6)
    pred = model(img)
    loss = F.l1_loss(pred.float() / 255.0, target)
    loss.backward()
    return {"model": model, "loss": loss}
